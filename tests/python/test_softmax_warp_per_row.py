# The short-row GPU softmax (tutorials/06_gpu_softmax.py, step 3: a warp per row, several rows per
# block on threadIdx.y, the block's rows read once into shared memory with 128-bit accesses, the
# max and the sum as warp-only cross-thread reductions into registers): correct in the SPMD
# interpreter (with its race detector) at odd shapes, compiled by NVRTC for sm_90, and its CUDA C
# has the shape the schedule promises.
import importlib.util
import os
import re

import numpy as np
import pytest

import tessel as ts
from conftest import REPO_ROOT


def load_tutorial():
    path = os.path.join(REPO_ROOT, "tutorials", "06_gpu_softmax.py")
    spec = importlib.util.spec_from_file_location("tutorial_06_gpu_softmax", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


softmax = load_tutorial()


def kernel_source(n, m):
    s, args = softmax.step3(n, m)
    return ts.build(s, args, target="cuda -arch=sm_90").get_source("cu")


# 37 rows: the last block has 5 of its 8 rows; 1000 columns: 31 warp-wide chunks and 8 more
# (float4: 7 full passes of 128 and 26 lanes more); 333: odd, so scalar accesses; 3 x 64: fewer
# rows than a block holds.
@pytest.mark.parametrize("n,m", [(37, 1000), (5, 333), (3, 64), (9, 130)])
def test_warp_per_row_matches_numpy_in_the_interpreter(n, m):
    s, args = softmax.step3(n, m)
    x = np.random.default_rng(n * m).standard_normal((n, m)).astype("float32") * 4
    y = np.full_like(x, np.nan)
    ts.lower(s, args).run(x, y)
    np.testing.assert_allclose(y, softmax.numpy_softmax(x.astype("float64")), rtol=1e-5,
                               atol=1e-7)


def test_warp_per_row_cuda_code():
    src = kernel_source(4096, 1000)
    body = src[src.index("__global__"):]
    # A block of 8 warps, one row each; the reductions are shuffles within the warp.
    assert "__launch_bounds__(256)" in body
    assert "__shfl_xor_sync(" in src and "tsl_shfl_xor(0xffffffffu" in body
    # The only barrier is the one after the shared rows are filled: none after the reductions,
    # which use no shared memory.
    assert body.count("__syncthreads();") == 1, body
    assert "red_buf" not in body
    # The row is read from global memory once, 128 bits at a time, and Y written the same way.
    assert len(re.findall(r"reinterpret_cast<const float4\*>\(X", body)) >= 1, body
    assert len(re.findall(r"reinterpret_cast<float4\*>\(Y", body)) >= 1, body
    # Scalar reads of X only in the edge version of the last column tile (padded to 1024 with
    # zeros: the threads past column 1000), one vector's 4 lanes.
    assert body.count("X[") <= 4, body
    # 8 rows of 1000 floats (padded to 1024) in 32 KB of shared memory.
    assert "X_shared[8192]" in body


def test_odd_rows_use_scalar_accesses_and_still_compile():
    body = kernel_source(5, 333)
    assert "float4" not in body[body.index("__global__"):]


def test_best_picks_the_schedule_by_row_length():
    s_short, _ = softmax.best(64, 1000)
    s_long, _ = softmax.best(4, softmax.WARP_ROW_MAX + 1)
    assert "threadIdx.y" in s_short.to_python()
    assert "threadIdx.y" not in s_long.to_python()


def test_warp_per_row_without_shared_memory_has_no_barrier():
    # The rows read from global memory by each pass: with warp-only reductions (no __syncthreads()
    # after them) the kernel has no barrier at all.
    s, args = softmax.step3(37, 1000, shared=False)
    x = np.random.default_rng(3).standard_normal((37, 1000)).astype("float32")
    y = np.full_like(x, np.nan)
    ts.lower(s, args).run(x, y)
    np.testing.assert_allclose(y, softmax.numpy_softmax(x), rtol=1e-5, atol=1e-7)
    body = ts.build(s, args, target="cuda -arch=sm_90").get_source("cu")
    body = body[body.index("__global__"):]
    assert "__syncthreads" not in body and "__shared__" not in body


def test_long_rows_fit_in_shared_memory():
    # 32768 floats (128 KB) a row in shared memory; the row max and sum take no storage for their
    # reduction axis (verify_schedule once counted 32768 floats for each of them and refused).
    s, args = softmax.best(4, 32768)
    module = ts.build(s, args, target="cuda -arch=sm_90")
    assert "tsl_dynamic_shared" in module.get_source("cu")
