"""Times benchmarks/experiments/hgemm_l2_bound.cu's variants next to cuBLAS (PyTorch, fp16 in,
fp32 out) and, when the tessel extension is importable, tutorial 07's default step (the
register-only mma.sync peak printed first), at n^3, in interleaved rounds of CUDA-event timings
(an experiment for issue 25's bar: see the .cu).

    python3 benchmarks/experiments/hgemm_l2_bound.py CUBIN_DIR [N] [ROUNDS]

CUBIN_DIR holds `hgemm_<variant>.cubin` files (build_variants.sh DIR makes them); a variant
whose name has `half_b` or `no_fetch` computes on tiles that were never copied (its speed is a
bound, its result is not checked); every other is checked against a float64 product first."""
import ctypes
import glob
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import cuda_bench  # noqa: E402
import nvrtc_kernel  # noqa: E402


def tensor_map(cuda, t, box_cols, box_rows):
    """A CUtensorMap (128 bytes) of the row-major fp16 matrix t: boxes of box_rows x box_cols,
    128-byte swizzled (hgemm_tma.cu's layout)."""
    rows, cols = t.shape
    buf = (ctypes.c_uint8 * (128 + 64))()  # CU_TENSOR_MAP_NUM_QWORDS x 8, 64-byte aligned
    m = (ctypes.c_uint64 * 16).from_address((ctypes.addressof(buf) + 63) & ~63)
    m._buf = buf  # the storage lives as long as the map
    dims = (ctypes.c_uint64 * 2)(cols, rows)
    strides = (ctypes.c_uint64 * 1)(cols * 2)
    box = (ctypes.c_uint32 * 2)(box_cols, box_rows)
    elem = (ctypes.c_uint32 * 2)(1, 1)
    # FLOAT16 = 6, INTERLEAVE_NONE = 0, SWIZZLE_128B = 3, L2_PROMOTION_L2_256B = 3, OOB fill none
    rc = cuda.cuTensorMapEncodeTiled(ctypes.byref(m), 6, 2, ctypes.c_void_p(t.data_ptr()), dims,
                                     strides, box, elem, 0, 3, 3, 0)
    assert rc == 0, f"cuTensorMapEncodeTiled failed with error {rc}"
    return m


def kernel(path):
    """f(a, b, c) launching the cubin's `hgemm` (its STAGES and BK from the name: `stages<S>`,
    `bk<K>`; 3 and 32 by default; hgemm_ws.cu's, named `ws_[p<P>_]...`,
    with 256 + 32 P threads, P = 1 by default; hgemm_tma.cu's, named `tma_...`, with 288 threads
    and its two tensor maps)."""
    stages = int((re.search(r"stages(\d+)", path) or [0, 3])[1])
    bk = int((re.search(r"bk(\d+)", path) or [0, 32])[1])
    shared = stages * (128 * (bk + 8) + bk * 264) * 2
    producers = int((re.search(r"hgemm_ws_p(\d+)_", path) or [0, 1])[1])  # hgemm_ws.cu's
    threads = 256 + 32 * producers if os.path.basename(path).startswith("hgemm_ws_") else 256
    tma = os.path.basename(path).startswith("hgemm_tma_")  # + tensor maps; swizzled, unpadded
    if tma:
        threads, shared = 288, stages * (128 * 64 + 64 * 256) * 2 + 1024
    k = nvrtc_kernel.Kernel(open(path, "rb").read(), "hgemm")
    k.allow_dynamic_shared(shared)
    maps = {}

    def run(a, b, c):
        n = a.shape[0]
        args = [ctypes.c_void_p(t.data_ptr()) for t in (a, b, c)] + [ctypes.c_int(n)] * 3
        if tma:
            key = (a.data_ptr(), b.data_ptr())
            if key not in maps:
                maps[key] = (tensor_map(k.cuda, a, 64, 128), tensor_map(k.cuda, b, 64, 64))
            args += list(maps[key])
        k.launch((n // 256, n // 128, 1), (threads, 1, 1), args, shared=shared)
    return run


def main():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    g = torch.Generator(device="cuda").manual_seed(n)
    a = torch.randn(n, n, device="cuda", generator=g).half()
    b = torch.randn(n, n, device="cuda", generator=g).half()
    ref = a.double() @ b.double()
    timed = [("cublas (fp32 out)", lambda: torch.mm(a, b, out_dtype=torch.float32))]
    try:
        import tessel as ts
        sys.path.insert(0, os.path.join(HERE, ".."))
        import gemm_fp16_cuda  # the register-only mma.sync peak (the yardstick)
        print(f"register-only mma.sync peak: {gemm_fp16_cuda.mma_peak() / 1e3:.1f} TFLOP/s")
        t7 = cuda_bench.tutorial("07_tensor_core_gemm")
        s, args = t7.step5(n, n, n)
        kernels = [("tessel tutorial 07 step5", ts.build(s, args, target="cuda"))]
        for depth in (3, 4):  # step 5 with k tiles of 64
            s, args = t7.step2(n, n, n, bn=256, bk=64, pipeline=depth, swizzle=True)
            kernels.append((f"tessel step5 bk64 pipeline({depth})",
                            ts.build(s, args, target="cuda")))
    except ImportError:
        print("tessel is not importable: tutorial 07 left out")
        kernels = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "hgemm_*.cubin"))):
        kernels.append((os.path.basename(path)[6:-6], kernel(path)))
    for label, k in kernels:
        c = torch.full((n, n), float("nan"), device="cuda")
        k(a, b, c)
        torch.cuda.synchronize()
        if "half_b" in label or "no_fetch" in label:
            print(f"{label}: not a GEMM (tiles never copied): not checked")
        else:
            err = cuda_bench.relative_error(c, ref)
            print(f"{label}: relative error {err:.1e}")
            assert err < 1e-4, f"{label} is wrong"
        timed.append((label, lambda k=k, c=c: k(a, b, c)))
    print(f"n={n}")
    cuda_bench.interleaved_rounds(timed, rounds, 2.0 * n ** 3, "cublas (fp32 out)", digits=1)

if __name__ == "__main__":
    main()
