"""Low-precision numerics on the GPU: benchmarks/gemm_lowp_cpu.py's numerics section for "cuda".

fp16 and bf16 matmul (K = 4096), softmax and layer norm under their default GPU schedules: the
relative L2 error against a float64 reference of the same 16-bit inputs, beside NumPy's float32
accumulation (the bar: tessel <= 1.1 x) and PyTorch's operators on the GPU (printed).

    benchmarks/run.sh lowp_numerics_cuda [--mn 256] [--rows 256] [--k 4096]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tessel as ts  # noqa: E402
from gemm_lowp_cpu import (BAR, fmt_err, numerics, print_bench_lines,  # noqa: E402
                           print_numerics)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mn", type=int, default=256)
    p.add_argument("--rows", type=int, default=256)
    p.add_argument("--k", type=int, default=4096)
    args = p.parse_args()
    if not ts.cuda_available():
        raise SystemExit(f"lowp_numerics_cuda: no GPU ({ts.cuda_unavailable_reason()})")
    target = ts.Target("cuda")
    print(f"numerics on {target.describe()}: relative L2 error against float64 (NumPy) on the "
          f"same 16-bit inputs; bar: tessel <= {BAR} x float32 accumulation; torch on the GPU")
    rows = numerics(args.mn, args.rows, args.k, target=target, device=ts.cuda(0),
                    torch_device="cuda")
    print_numerics(rows)
    print_bench_lines(rows, "lowp_numerics_cuda")
    failed = [r for r in rows if not r["pass"]]
    for r in failed:
        why = r["error"].splitlines()[0] if r["error"] else \
            f"{r['ratio']:.3f} x the float32-accumulation error {fmt_err(r['f32acc'])}"
        print(f"FAIL {r['op']} {r['dtype']} {r['dist']}: {why}", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
