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


def kernels(n, a, b):
    out = []
    for number, group in ((6, 1), (6, 4), (6, 8), (6, 16), (5, 1), (5, 8)):
        if (n // 128) % group:
            continue
        s, args = step(number, group)(n, n, n)
        f = ts.build(s, args, target="cuda")
        c = torch.empty(n, n, device="cuda")
        out.append((f"step{number} group {group}", lambda f=f, c=c: f(a, b, c), c))
    return out


def main():
    cuda_bench.fp16_gemm_experiment(sys.argv[1:], bench.mma_peak, kernels)

if __name__ == "__main__":
    main()
