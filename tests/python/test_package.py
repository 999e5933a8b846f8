# The package reports what was built.
import re

import tessel as ts


def test_version_is_the_project_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", ts.__version__)


def test_targets_lists_llvm_when_built_with_it():
    t = ts.targets()
    assert isinstance(t, list)
    assert "llvm" in t  # CI builds with TESSEL_USE_LLVM=ON


def test_nd_submodule():
    assert ts.nd.array is not None and ts.nd.empty is not None and ts.nd.from_dlpack is not None
