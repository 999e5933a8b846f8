"""gemm_cuda_kept_a: an experiment for the GPU search's two basins (docs/notes/gpu-gemm-search.md):
tutorial 05's register-tile schedule with A's shared tile kept as it is ([i][k], so cp.async
copies it 16 bytes at a time) and A's register read cache loaded along k (4 columns of k per
128-bit load, attached one k split above the innermost k loop) instead of A's tile stored
transposed. If its pipelined variants reach step 6 (double buffered, transposed A), the GPU
sketch gets this read-cache placement as a choice. Times every variant, step 6 and step 7 (A
transposed, pipeline(3)) against cuBLAS in one process (support/cuda_bench.py: each kernel
checked against a float64 reference, then interleaved rounds of CUDA-event timings).

    python3 benchmarks/gemm_cuda_kept_a.py [ROUNDS]          # 5 by default; n = 4096
    python3 benchmarks/gemm_cuda_kept_a.py --check            # no GPU: interpreter + NVRTC only
"""
import importlib.util
import os
import sys

import tessel as ts

HERE = os.path.dirname(os.path.abspath(__file__))
N = 4096


def _tutorial_05():  # as cuda_bench.tutorial, which needs torch (--check runs without it)
    path = os.path.join(HERE, "..", "tutorials", "05_gpu_gemm.py")
    spec = importlib.util.spec_from_file_location("gpu_gemm_tutorial", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


T5 = _tutorial_05()


def kept_a(n, block=128, threads=16, bk=8, vthreads=2, double_buffer=False, pipeline=3, kvec=4):
    """Step 4's schedule with A kept in shared memory and read along k (see the file comment)."""
    A, B, C = T5.gemm(n)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    AL = s.cache_read(AS, "local", [C])
    BL = s.cache_read(BS, "local", [C])
    CL = s.cache_write(C, "local")
    tx, yi, xi = T5.tile_c(s, C, block, threads, vthreads)
    xo, xv = s[C].split(xi, factor=4)
    s[C].unroll(yi)
    s[C].unroll(xo)
    s[C].vectorize(xv)
    s[CL].compute_at(s[C], tx)
    per_thread = block // threads // vthreads
    _, yo = s[CL].split(CL.op.axis[0], factor=per_thread)
    _, xo = s[CL].split(CL.op.axis[1], factor=per_thread)
    (k,) = CL.op.reduce_axis
    ko, ki = s[CL].split(k, factor=bk)
    kio, kii = s[CL].split(ki, factor=kvec)
    s[CL].reorder(ko, kio, kii, yo, xo)
    for loop in (kio, kii, yo, xo):
        s[CL].unroll(loop)
    s[AS].storage_align(0, bk, 4)  # rows of bk + 4 floats: 16-byte aligned, rows apart in banks
    s[AL].compute_at(s[CL], kio)  # per_thread rows x kvec columns of k: one 128-bit load a row
    i, kk = s[AL].op.axis
    _, i = s[AL].split(i, factor=per_thread)
    s[AL].unroll(i)
    s[AL].vectorize(kk)
    s[BL].compute_at(s[CL], kii)  # as step 4: per_thread columns of B, 128-bit loads
    _, j = s[BL].op.axis
    _, j = s[BL].split(j, factor=per_thread)
    o, v = s[BL].split(j, factor=4)
    s[BL].unroll(o)
    s[BL].vectorize(v)
    for T in (AS, BS):
        s[T].compute_at(s[CL], ko)
        T5.stage_copy(s, T, threads, 4)
        if double_buffer:
            s[T].double_buffer()
        if pipeline:
            s[T].pipeline(pipeline)
    return s, [A, B, C]


VARIANTS = [
    ("kept A, pipeline(3)", dict(pipeline=3)),
    ("kept A, pipeline(4)", dict(pipeline=4)),
    ("kept A, pipeline(3), bk 16", dict(pipeline=3, bk=16)),
    ("kept A, pipeline(3), no vthreads", dict(pipeline=3, vthreads=1)),
    ("kept A, double_buffer", dict(pipeline=0, double_buffer=True)),
]


def main():
    if "--check" in sys.argv:
        for label, kw in VARIANTS:
            T5.check_in_interpreter(lambda n: kept_a(n, **kw))
            s, args = kept_a(N, **kw)
            log = ts.build(s, args, target="cuda -arch=sm_90").get_source("nvrtc_log")
            regs = [line.strip() for line in log.splitlines() if "Used" in line or "spill" in line]
            print(f"{label}: correct in the interpreter; {' '.join(regs)}")
        return 0
    sys.path.insert(0, os.path.join(HERE, "support"))
    import cuda_bench  # torch: only where the kernels are timed

    sms = ts.Target("cuda").sm_count
    kernels = []
    for label, make in (("tutorial step6", T5.step6), ("tutorial step7", T5.step7)):
        s, args = make(N, sm_count=sms)
        kernels.append((label, ts.build(s, args, target="cuda")))
    for label, kw in VARIANTS:
        s, args = kept_a(N, **kw)
        kernels.append((label, ts.build(s, args, target="cuda")))
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    cuda_bench.interleaved_gemm_report(kernels, N, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
