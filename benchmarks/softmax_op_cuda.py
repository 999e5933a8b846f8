"""softmax_op_cuda: float32 softmax over the rows of an n x m matrix, ts.op.softmax under its
default "cuda" schedule (docs/operators.md, "GPU default schedules") against
torch.softmax(x, dim=1). softmax_cuda times the GPU tutorial's hand-written schedules; this one
what a user of the operator library gets without writing a schedule. GB/s counts x read once and
y written once. Checked against a float64 softmax first; median of 30 runs timed with CUDA events,
the queue pre-filled (benchmarks/support/cuda_bench.py).

    python benchmarks/softmax_op_cuda.py [NxM ...]   (default 8192x8192 4096x1000 32768x768 1000x32768)
    python benchmarks/softmax_op_cuda.py --dry-run   no GPU: build for sm_90, check in the interpreter
"""
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC, whose log has ptxas's report.
import numpy as np

import tessel as ts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import row_op_bench  # noqa: E402


def make(n, m):
    x = ts.placeholder((n, m), name="x")
    return [x], ts.op.softmax(x, axis=1)


def reference(x):
    import torch

    return torch.softmax(x, dim=1)


def numpy_reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    row_op_bench.main("softmax_op_cuda", make, reference, numpy_reference,
                      ["8192x8192", "4096x1000", "32768x768", "1000x32768"])
