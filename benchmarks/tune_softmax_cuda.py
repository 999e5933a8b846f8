"""tune_softmax_cuda: tessel's tuner on the row softmax of an 8192 x 8192 float32 matrix for
`cuda`, then the best schedule against torch.softmax(x, dim=1) and the GPU softmax tutorial's
hand-written schedule (tutorials/06_gpu_softmax.py, step 2), timed in one process. GB/s counts the
input read once and the output written once. Resumable from its log (support/tune_cuda.py):

    benchmarks/run.sh tune_softmax_cuda --trials 1000 --max-seconds 480   # repeat until 1000
"""
import os
import sys

import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402
import tune_cuda  # noqa: E402

ROWS = COLS = 8192


def main():
    a = tune_cuda.parse(__doc__.splitlines()[0], f"tune_softmax_cuda_{ROWS}x{COLS}.jsonl")
    task = ts.SearchTask("op.softmax", [[ROWS, COLS], 1, "float32"], target="cuda")
    records = tune_cuda.tune(task, a)
    nbytes = 2.0 * ROWS * COLS * 4
    if not any(r.ok for r in records):
        return tune_cuda.report("tune_softmax_cuda", f"{ROWS}x{COLS}", records, nbytes, "GB/s",
                                None, None, None, "torch")
    tuned = tune_cuda.build_best(task, a.log)
    hand_s, hand_args = cuda_bench.tutorial("06_gpu_softmax").step2(ROWS, COLS)
    hand = ts.build(hand_s, hand_args, target="cuda")
    x = torch.randn(ROWS, COLS, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    ref = torch.softmax(x.double(), dim=1)
    outs = {}
    for label, f in (("tuned", tuned), ("tutorial", hand)):
        outs[label] = torch.full((ROWS, COLS), float("nan"), device="cuda")
        f(x, outs[label])
        err = cuda_bench.relative_error(outs[label], ref)
        print(f"relative error of the {label} kernel: {err:.2e}")
        assert err < 1e-5, f"the {label} softmax is wrong"
    return tune_cuda.report("tune_softmax_cuda", f"{ROWS}x{COLS}", records, nbytes, "GB/s",
                            lambda: tuned(x, outs["tuned"]), lambda: torch.softmax(x, dim=1),
                            lambda: hand(x, outs["tutorial"]), "torch")


if __name__ == "__main__":
    sys.exit(main())
