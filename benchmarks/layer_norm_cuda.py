"""layer_norm_cuda: float32 layer norm over the rows of an n x m matrix (with gamma and beta, eps
1e-5), ts.op.layer_norm under its default "cuda" schedule (docs/operators.md, "GPU default
schedules": a warp per row up to 2048 columns, the block's rows staged in shared memory; a block
per row above) against torch.nn.functional.layer_norm. GB/s counts x read once and y written once.
Checked against a float64 layer norm first; median of 30 runs timed with CUDA events, the queue
pre-filled (benchmarks/support/cuda_bench.py).

    python benchmarks/layer_norm_cuda.py [NxM ...]   (default 4096x1000 8192x4096 32768x768 1000x32768)
    python benchmarks/layer_norm_cuda.py --dry-run   no GPU: build for sm_90, check in the interpreter
"""
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC, whose log has ptxas's report.
import tessel as ts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import row_op_bench  # noqa: E402

EPS = 1e-5


def make(n, m):
    x = ts.placeholder((n, m), name="x")
    gamma, beta = ts.placeholder((m,), name="gamma"), ts.placeholder((m,), name="beta")
    return [x, gamma, beta], ts.op.layer_norm(x, gamma, beta, eps=EPS)


def reference(x, gamma, beta):
    import torch

    return torch.nn.functional.layer_norm(x, (x.shape[1],), gamma, beta, eps=EPS)


def numpy_reference(x, gamma, beta):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / (var + EPS) ** 0.5 * gamma + beta


if __name__ == "__main__":
    row_op_bench.main("layer_norm_cuda", make, reference, numpy_reference,
                      ["4096x1000", "8192x4096", "32768x768", "1000x32768"])
