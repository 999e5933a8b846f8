"""Does the order of the blocks matter to tutorial 07's tensor-core GEMM (issue 25's bar)? Step 6
(and step 5) built with tile_output's `group`: blockIdx.x runs down `group` block rows before the
next block column, so that the 132 blocks running at once read fewer distinct tiles of A and B
(the tile rasterisation Triton calls GROUP_M). Each kernel checked against a float64 product,
then timed with cuBLAS (fp32 output) and the register-only mma.sync peak in interleaved rounds.

    python3 benchmarks/experiments/hgemm_block_order.py [ROUNDS] [N ...]   (default 5; 4096 8192)
"""
import os
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import cuda_bench  # noqa: E402
import gemm_fp16_cuda as bench  # noqa: E402

tc = bench.tc


def step(number, group):
    bk = 64 if number == 6 else 32
    return lambda m, n, k: tc.step2(m, n, k, "float16", bn=256, bk=bk, pipeline=4, swizzle=True,
                                    group=group)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    sizes = [int(x) for x in sys.argv[2:]] or [4096, 8192]
    peak = bench.mma_peak()
    print(f"register-only mma.sync peak: {peak / 1e3:.1f} TFLOP/s")
    for n in sizes:
        g = torch.Generator(device="cuda").manual_seed(n)
        a = torch.randn(n, n, device="cuda", generator=g).half()
        b = torch.randn(n, n, device="cuda", generator=g).half()
        ref = a.double() @ b.double()
        c = torch.empty(n, n, device="cuda")
        timed = [("cublas", lambda: torch.mm(a, b, out_dtype=torch.float32))]
        for number, group in ((6, 1), (6, 4), (6, 8), (6, 16), (5, 1), (5, 8)):
            if (n // 128) % group:
                continue
            s, args = step(number, group)(n, n, n)
            f = ts.build(s, args, target="cuda")
            out = torch.full((n, n), float("nan"), device="cuda")
            f(a, b, out)
            err = cuda_bench.relative_error(out, ref)
            assert err < 1e-4, f"step {number} group {group} is wrong: {err}"
            timed.append((f"step{number} group {group}", lambda f=f, out=out: f(a, b, out)))
        print(f"n={n}:")
        cuda_bench.interleaved_rounds(timed, rounds, 2.0 * n**3, "cublas", digits=1)
        print(f"(0.7 x the mma.sync peak: {0.7 * peak / 1e3:.1f} TFLOP/s)")


if __name__ == "__main__":
    main()
