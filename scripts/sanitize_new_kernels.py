"""Runs the kernels of the newest GPU features once each, for compute-sanitizer (memcheck and
racecheck) on the GPU host: the GEMM tutorial's double-buffered register-tile kernel at an odd
shape (padded tiles, unswitched edges), the same with its tiles pipelined over 3 and 4 buffers
by cp.async (step 7: zero-filled copies past the edges, trip counts below the depth), the
tensor-core GEMM tutorial's steps 3 (double_buffer), 4 (pipeline(4), 128 x 256 tiles; k runs
3 times, below the depth), 5 (step 4 with swizzled shared tiles, storage_swizzle) and 6 (k tiles
of 64; k runs 3 times), and the warp-per-row softmax at a short odd row.
    compute-sanitizer --tool racecheck python3 scripts/sanitize_new_kernels.py
Each result is checked against numpy; the sanitizer's exit status reports what it found."""
import importlib.util
import os

import numpy as np

import tessel as ts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tutorial(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "tutorials",
                                                                     name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gemm, softmax = tutorial("05_gpu_gemm"), tutorial("06_gpu_softmax")
tensor_core = tutorial("07_tensor_core_gemm")
rng = np.random.default_rng(0)
dev = ts.cuda(0)
CASES = [(300, 260, 77, dict(block=128, threads=16, bk=8, vthreads=2)),
         (130, 100, 45, dict(block=64, threads=16, bk=16)),
         (40, 36, 20, dict(block=64, threads=16, bk=8))]  # k.outer runs 3 times
BUFFERING = [dict(double_buffer=True), dict(pipeline=3), dict(pipeline=4)]
for (m, n, k, tiles), buffering in [(c, b) for c in CASES for b in BUFFERING]:
    config = dict(tiles, **buffering)
    s, args = gemm.step4(n, m=m, k=k, **config)
    f = ts.build(s, args, target="cuda")
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = ts.nd.array(np.full((m, n), np.nan, dtype="float32"), device=dev)
    f(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float64") @ b, rtol=1e-4, atol=1e-4)
    print(f"gemm {m}x{n}x{k} {config}: correct")
for make, (m, n, k) in [(tensor_core.step3, (256, 256, 96)), (tensor_core.step4, (256, 512, 96)),
                       (tensor_core.step5, (256, 512, 96)), (tensor_core.step6, (256, 512, 192))]:
    s, args = make(m, n, k)
    f = ts.build(s, args, target="cuda")
    a = rng.standard_normal((m, k)).astype("float16")
    b = rng.standard_normal((k, n)).astype("float16")
    c = ts.nd.array(np.full((m, n), np.nan, dtype="float32"), device=dev)
    f(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float64") @ b.astype("float64"), rtol=1e-3,
                               atol=1e-3)
    print(f"tensor-core gemm {make.__name__} {m}x{n}x{k}: correct")
for rows, cols in [(37, 1000), (5, 333)]:
    s, args = softmax.best(rows, cols)
    f = ts.build(s, args, target="cuda")
    x = rng.standard_normal((rows, cols)).astype("float32")
    y = ts.nd.array(np.full_like(x, np.nan), device=dev)
    f(ts.nd.array(x, device=dev), y)
    np.testing.assert_allclose(y.numpy(), softmax.numpy_softmax(x.astype("float64")), rtol=1e-5,
                               atol=1e-7)
    print(f"softmax {rows}x{cols}: correct")
