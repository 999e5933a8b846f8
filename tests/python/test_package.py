# The package reports what was built.
import re

import pytest

import tessel as ts


def test_version_is_the_project_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", ts.__version__)


def test_targets_report_what_was_built():
    t = ts.targets()
    assert isinstance(t, list) and set(t) <= {"llvm", "cuda"}
    if "llvm" not in t:  # a build without the backend says so when asked to build
        A = ts.placeholder((4,), name="A")
        B = ts.compute((4,), lambda i: A[i] + 1, name="B")
        with pytest.raises(ts.CompileError):
            ts.build(ts.create_schedule(B), [A, B])


def test_nd_submodule():
    assert ts.nd.array is not None and ts.nd.empty is not None and ts.nd.from_dlpack is not None


def test_cuda_target_listed_when_nvrtc_is_built():
    A = ts.placeholder((256,), name="A")
    B = ts.compute((256,), lambda i: A[i] + 1, name="B")
    s = ts.create_schedule(B)
    bo, bi = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bo, "blockIdx.x")
    s[B].bind(bi, "threadIdx.x")
    if "cuda" in ts.targets():
        assert "__global__" in ts.build(s, [A, B], target="cuda -arch=sm_90").get_source("cu")
    else:
        with pytest.raises(ts.CompileError, match="without the CUDA backend"):
            ts.build(s, [A, B], target="cuda -arch=sm_90")
