# Every tutorial runs, at its small size, and checks itself (a failed check exits non-zero).
import glob
import os
import subprocess
import sys

import pytest

import tessel as ts
from conftest import REPO_ROOT

TUTORIALS = sorted(glob.glob(os.path.join(REPO_ROOT, "tutorials", "[0-9][0-9]_*.py")))


def test_tutorials_are_numbered_and_present():
    names = [os.path.basename(t) for t in TUTORIALS]
    assert len(names) >= 4
    assert [n[:2] for n in names] == [f"{i + 1:02d}" for i in range(len(names))]


@pytest.mark.parametrize("path", TUTORIALS, ids=os.path.basename)
def test_tutorial_runs_and_checks_itself(path):
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(ts.__file__))
    env["PYTHONPATH"] = package_parent + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, path, "--small"], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
