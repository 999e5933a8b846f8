"""Times benchmarks/experiments/sgemm_warp_tiled.cu's variants next to tutorial 05's step 6 (when
the tessel extension is importable) and cuBLAS (PyTorch, TF32 off) at 4096^3, in one process:
benchmarks/support/cuda_bench.py checks each kernel against a float64 product and times them in
interleaved rounds (an experiment for issue 19's GPU bar: see the .cu).

    python3 benchmarks/experiments/sgemm_warp_tiled.py CUBIN_DIR [ROUNDS]

CUBIN_DIR holds `<variant>.cubin` files (build_variants.sh DIR makes them)."""
import ctypes
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import cuda_bench  # noqa: E402 (torch)

N = 4096
cuda = ctypes.CDLL("libcuda.so.1")


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: CUDA driver error {rc}")


def kernel(path):
    """f(x, y, out) launching the cubin's `sgemm` on n x n row-major tensors."""
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(open(path, "rb").read())),
          "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"sgemm"), "cuModuleGetFunction")

    def run(x, y, out):
        n = x.shape[0]
        vals = [ctypes.c_void_p(t.data_ptr()) for t in (x, y, out)] + [ctypes.c_int(n)] * 3
        args = (ctypes.c_void_p * 6)(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p)
                                       for v in vals])
        check(cuda.cuLaunchKernel(fn, n // 128, n // 128, 1, 256, 1, 1, 0, None, args, None),
              "cuLaunchKernel")
    return run


def main():
    import torch
    torch.zeros(1, device="cuda")  # the primary context current on this thread, for the loads
    kernels = []
    try:
        import tessel as ts
        t5 = cuda_bench.tutorial("05_gpu_gemm")
        s, args = t5.step6(N, sm_count=ts.Target("cuda").sm_count)
        kernels.append(("tessel tutorial step6", ts.build(s, args, target="cuda")))
    except ImportError:
        print("tessel is not importable: step 6 left out")
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.cubin"))):
        kernels.append((os.path.basename(path)[:-6], kernel(path)))
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    cuda_bench.interleaved_gemm_report(kernels, N, rounds)


if __name__ == "__main__":
    main()
