# scripts/gpu-host.sh's exit status is the steps': 0 when every step passed, 1 when one failed
# (the summary's greps no longer decide it), 2 for an unknown step. Runs without a GPU: the build
# folder is one that does not exist, so the fuzz step fails at once (its test binary is missing).
import os
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, "scripts", "gpu-host.sh")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def run_script(tmp_path, *steps):
    deps = tmp_path / "deps"
    deps.mkdir(exist_ok=True)
    env = dict(os.environ, OUT=str(tmp_path / "out"), TESSEL_DEPS=str(deps),
               TESSEL_GPU_BUILD_DIR=str(tmp_path / "no-build"))
    return subprocess.run(["bash", SCRIPT, *steps], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_no_step_exits_zero(tmp_path):
    # Every summary grep finds nothing (status 1 each); the script's status is still 0.
    r = run_script(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "== gpu-host summary" in r.stdout


def test_a_failed_step_exits_one_and_the_summary_says_so(tmp_path):
    (tmp_path / "out").mkdir()
    # A test log from an earlier run, which the summary's last grep matches: the script used to
    # exit with that grep's status, 0, after a failed step.
    (tmp_path / "out" / "test.log").write_text("100% tests passed, 0 tests failed out of 1\n")
    r = run_script(tmp_path, "fuzz")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "fuzz       FAILED" in r.stdout
    assert (tmp_path / "out" / "fuzz.log").exists()


def test_every_step_runs_after_a_failure(tmp_path):
    r = run_script(tmp_path, "fuzz", "fuzz")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.count("fuzz       FAILED") == 2


def test_an_unknown_step_exits_two_before_running_any(tmp_path):
    r = run_script(tmp_path, "fuzz", "nonsense")
    assert r.returncode == 2
    assert "unknown step 'nonsense'" in r.stderr
    assert "== gpu-host: fuzz" not in r.stdout
