"""The 16-bit 4096^3 matmul of issue 55 on the GPU: tessel's default (float32 accumulation) beside
PyTorch/cuBLAS, its error against the float32 product of the same inputs, and both speeds.

    PYTHONPATH=build/gpu/python python3 benchmarks/experiments/bf16_4096.py
"""
import numpy as np, tessel as ts, torch, ml_dtypes
n = 4096
rng = np.random.default_rng(0)
for dt, tdt in [("bfloat16", torch.bfloat16), ("float16", torch.float16)]:
    a32 = rng.standard_normal((n, n)).astype(np.float32); b32 = rng.standard_normal((n, n)).astype(np.float32)
    A = ts.placeholder((n, n), dtype=dt, name="A"); B = ts.placeholder((n, n), dtype=dt, name="B")
    C = ts.op.matmul(A, B)
    f = ts.build(ts.op.default_schedule(C, "cuda"), [A, B, C], target="cuda")
    ta = torch.from_numpy(a32).to("cuda", tdt); tb = torch.from_numpy(b32).to("cuda", tdt)
    tc = torch.empty((n, n), device="cuda", dtype=tdt)
    f(ta, tb, tc); torch.cuda.synchronize()
    ref = (ta.float() @ tb.float())
    err = ((tc.float() - ref).norm() / ref.norm()).item()
    terr = (((ta @ tb).float() - ref).norm() / ref.norm()).item()
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    for _ in range(3): f(ta, tb, tc)
    s.record(); 
    for _ in range(10): f(ta, tb, tc)
    e.record(); torch.cuda.synchronize(); ms = s.elapsed_time(e) / 10
    s.record()
    for _ in range(10): ta @ tb
    e.record(); torch.cuda.synchronize(); tms = s.elapsed_time(e) / 10
    print(f"{dt} 4096^3: rel L2 vs float32 product: tessel {err:.2e}, torch {terr:.2e}; "
          f"tessel {2*n**3/ms/1e9:.1f} TFLOP/s, cuBLAS {2*n**3/tms/1e9:.1f} TFLOP/s")
