"""fp16 matmuls under the CUDA default (no tuning logs), each launched three times beside
cuBLAS's (torch.matmul): a host for Nsight Compute's durations of every kernel a call launches
(docs/perf/tensor-cores.md, "64 x 4096 x 4096: the second kernel"). The shapes are the arguments
(m x n x k; default 64x4096x4096 1000x1000x1000):

    ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
        python3 benchmarks/experiments/matmul_kernels_ncu.py 64x4096x4096
"""
import sys

import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch


def main():
    ts.auto_schedule.use_shipped_logs(False)
    gen = torch.Generator("cuda").manual_seed(1)
    for shape in sys.argv[1:] or ["64x4096x4096", "1000x1000x1000"]:
        m, n, k = map(int, shape.split("x"))
        a = ts.placeholder((m, k), dtype="float16", name="a")
        b = ts.placeholder((k, n), dtype="float16", name="b")
        y = ts.op.matmul(a, b)
        f = ts.build(ts.op.default_schedule(y, ts.Target("cuda")), [a, b, y], target="cuda")
        at = torch.randn(m, k, device="cuda", generator=gen).half()
        bt = torch.randn(k, n, device="cuda", generator=gen).half()
        out = torch.empty(m, n, device="cuda", dtype=torch.float16)
        for _ in range(3):
            f(at, bt, out)
            ref = at @ bt
        torch.cuda.synchronize()
        err = ((out.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
        print(f"{shape}: max error {err:.2e} of cuBLAS's largest")


if __name__ == "__main__":
    main()
