"""Times benchmarks/experiments/sgemm_warp_tiled.cu's variants next to tutorial 05's step 6 (when
the tessel extension is importable) and cuBLAS (PyTorch, TF32 off) at 4096^3, in one process:
benchmarks/support/cuda_bench.py checks each kernel against a float64 product and times them in
interleaved rounds (an experiment for issue 19's GPU bar: see the .cu).

    python3 benchmarks/experiments/sgemm_warp_tiled.py CUBIN_DIR [ROUNDS]

CUBIN_DIR holds `sgemm_<variant>.cubin` files (build_variants.sh DIR makes them)."""
import ctypes
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import cuda_bench  # noqa: E402 (torch)
import nvrtc_kernel  # noqa: E402

N = 4096


def kernel(path):
    """f(x, y, out) launching the cubin's `sgemm` on n x n row-major tensors."""
    k = nvrtc_kernel.Kernel(open(path, "rb").read(), "sgemm")

    def run(x, y, out):
        n = x.shape[0]
        args = [ctypes.c_void_p(t.data_ptr()) for t in (x, y, out)] + [ctypes.c_int(n)] * 3
        k.launch((n // 128, n // 128, 1), (256, 1, 1), args)
    return run


def main():
    kernels = []
    try:
        import tessel as ts
        t5 = cuda_bench.tutorial("05_gpu_gemm")
        s, args = t5.step6(N, sm_count=ts.Target("cuda").sm_count)
        kernels.append(("tessel tutorial step6", ts.build(s, args, target="cuda")))
    except ImportError:
        print("tessel is not importable: step 6 left out")
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "sgemm_*.cubin"))):
        kernels.append((os.path.basename(path)[6:-6], kernel(path)))
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    cuda_bench.interleaved_gemm_report(kernels, N, rounds)


if __name__ == "__main__":
    main()
