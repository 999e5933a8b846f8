"""gemm_cuda_variants: an experiment for issue 19's GPU bar (docs/perf/gpu-gemm-search.md): is
any simple relative of tutorial 05's step 6 faster than step 6 itself? Step 6 is the best of the
tutorial's square-tile sweep; this times rectangular block tiles (larger per-thread tiles: more
FMAs per shared load), other vthread splits and k tiles, all double-buffered with A's tile
transposed, against step 6 and cuBLAS in one process (support/cuda_bench.py: each kernel checked
against a float64 reference, then interleaved rounds of CUDA-event timings). A variant that
does not build is reported and skipped.

    python3 benchmarks/gemm_cuda_variants.py [ROUNDS]          # 5 by default; n = 4096
"""
import os
import sys
import traceback

import tessel as ts

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "support"))
import tutorial_loader  # noqa: E402

N = 4096
T5 = tutorial_loader.tutorial("05_gpu_gemm")


def variant(n, bm, bn, vy, vx, bk, threads=16):
    """Step 6's schedule with bm x bn block tiles of threads x threads threads, vy x vx strided
    vthread parts of (bm / threads / vy) x (bn / threads / vx) results each, k tiles of bk."""
    A, B, C = T5.gemm(n)
    s = ts.create_schedule(C)
    AS = s.cache_read(A, "shared", [C])
    BS = s.cache_read(B, "shared", [C])
    AL = s.cache_read(AS, "local", [C])
    BL = s.cache_read(BS, "local", [C])
    CL = s.cache_write(C, "local")
    i, j = C.op.axis
    by, yi = s[C].split(i, factor=bm)
    bx, xi = s[C].split(j, factor=bn)
    s[C].reorder(by, bx, yi, xi)
    s[C].bind(by, "blockIdx.y")
    s[C].bind(bx, "blockIdx.x")
    vyl, yi = s[C].split(yi, nparts=vy)
    vxl, xi = s[C].split(xi, nparts=vx)
    ty, yi = s[C].split(yi, nparts=threads)
    tx, xi = s[C].split(xi, nparts=threads)
    s[C].reorder(vyl, vxl, ty, tx, yi, xi)
    s[C].bind(vyl, "vthread")
    s[C].bind(vxl, "vthread")
    s[C].bind(ty, "threadIdx.y")
    s[C].bind(tx, "threadIdx.x")
    xo, xv = s[C].split(xi, factor=4)
    s[C].unroll(yi)
    s[C].unroll(xo)
    s[C].vectorize(xv)
    s[CL].compute_at(s[C], tx)
    py, px = bm // threads // vy, bn // threads // vx
    _, yo = s[CL].split(CL.op.axis[0], factor=py)
    _, xo = s[CL].split(CL.op.axis[1], factor=px)
    (k,) = CL.op.reduce_axis
    ko, ki = s[CL].split(k, factor=bk)
    s[CL].reorder(ko, ki, yo, xo)
    for loop in (ki, yo, xo):
        s[CL].unroll(loop)
    s[AS].storage_reorder(1, 0)
    s[AS].storage_align(0, bm, 4)
    for T, per in ((AL, py), (BL, px)):
        s[T].compute_at(s[CL], ki)
        a, b = s[T].op.axis
        inner = a if T == AL else b
        _, inner = s[T].split(inner, factor=per)
        o, v = s[T].split(inner, factor=4)
        s[T].unroll(o)
        s[T].vectorize(v)
    for T in (AS, BS):
        s[T].compute_at(s[CL], ko)
        T5.stage_copy(s, T, threads, 4)
        s[T].double_buffer()
    return s, [A, B, C]


VARIANTS = [  # (bm, bn, vy, vx, bk)
    (128, 128, 2, 2, 8),  # step 6's own tiles, built here (a check of this function)
    (128, 256, 2, 2, 8),  # 8 x 16 per thread
    (256, 128, 2, 2, 8),  # 16 x 8 per thread
    (128, 256, 2, 4, 8),  # 8 x 16 as 2 x 4 parts of 4 x 4
    (128, 128, 2, 2, 16),
    (128, 256, 2, 2, 16),
    (64, 128, 1, 2, 8),  # 4 x 8 per thread
    (128, 64, 2, 1, 8),
]


def main():
    import cuda_bench  # torch

    sms = ts.Target("cuda").sm_count
    kernels = []
    s, args = T5.step6(N, sm_count=sms)
    kernels.append(("tutorial step6", ts.build(s, args, target="cuda")))
    for bm, bn, vy, vx, bk in VARIANTS:
        label = f"{bm}x{bn} vthreads {vy}x{vx} bk {bk}"
        try:
            s, args = variant(N, bm, bn, vy, vx, bk)
            mod = ts.build(s, args, target="cuda")
            log = mod.get_source("nvrtc_log")
            regs = " ".join(line.strip() for line in log.splitlines()
                            if "Used" in line or "spill" in line)
            print(f"{label}: {regs}")
            kernels.append((label, mod))
        except Exception:  # noqa: BLE001 (an experiment: report and go on)
            print(f"{label}: does not build\n{traceback.format_exc(limit=2)}")
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    cuda_bench.interleaved_gemm_report(kernels, N, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
