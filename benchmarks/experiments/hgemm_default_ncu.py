"""The fp16 4096^3 matmul under the sm_90a default (wgmma, TMA, persistent), launched three
times, then cuBLAS once: a host for Nsight Compute's look at the default's kernel
(docs/perf/tensor-cores.md, "Where the default's kernel waits"):

    ncu --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
        --section Occupancy --section LaunchStats \
        python3 benchmarks/experiments/hgemm_default_ncu.py
"""
import tessel as ts  # before torch: the process uses tessel's NVRTC
import torch

N = 4096


def main():
    ts.auto_schedule.use_shipped_logs(False)
    A = ts.placeholder((N, N), dtype="float16", name="A")
    B = ts.placeholder((N, N), dtype="float16", name="B")
    y = ts.op.matmul(A, B)
    f = ts.build(ts.op.default_schedule(y, ts.Target("cuda")), [A, B, y], target="cuda")
    a, b = (torch.randn(N, N, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty(N, N, device="cuda", dtype=torch.float16)
    for _ in range(3):
        f(a, b, c)
    torch.matmul(a, b, out=c)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
