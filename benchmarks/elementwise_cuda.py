"""elementwise_cuda: d = relu(a * b + c) over 2^28 float32 per array (another log2 size as an
argument) against the device-to-device copy bandwidth measured in the same run (a 2^28-float
tensor copied with Tensor.copy_), both in GB/s counting bytes read plus bytes written. The
schedule: one flat loop, 4 floats (128 bits) per thread access, 256 threads per block, each
thread doing `UNROLL` accesses of its block's tile. Checked element by element first; median of
30 runs timed with CUDA events."""
import os
import sys

# tessel before torch: the process then uses tessel's NVRTC, whose log has ptxas's report; the
# NVRTC of torch's wheel, loaded first, would be used instead and reports nothing (docs/cuda.md).
import tessel as ts
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
import cuda_bench  # noqa: E402

THREADS, VECTOR, UNROLL = 256, 4, 4


def schedule(n):
    a, b, c = (ts.placeholder((n,), name=x) for x in "abc")
    d = ts.compute((n,), lambda i: ts.max(a[i] * b[i] + c[i], ts.const(0.0, "float32")),
                   name="d")
    s = ts.create_schedule(d)
    (i,) = d.op.axis
    i, v = s[d].split(i, factor=VECTOR)
    block, i = s[d].split(i, factor=THREADS * UNROLL)
    u, tx = s[d].split(i, factor=THREADS)
    s[d].bind(block, "blockIdx.x")
    s[d].bind(tx, "threadIdx.x")
    s[d].unroll(u)
    s[d].vectorize(v)
    return s, [a, b, c, d]


log2n = int(sys.argv[1]) if len(sys.argv) > 1 else 28
n = 1 << log2n
s, args = schedule(n)
f = ts.build(s, args, target="cuda")
g = torch.Generator("cuda").manual_seed(3)
a, b, c = (torch.randn(n, device="cuda", generator=g) for _ in range(3))
d = torch.full_like(a, float("nan"))
f(a, b, c, d)
torch.cuda.synchronize()
assert torch.equal(d, torch.relu(torch.addcmul(c, a, b))) or \
    torch.allclose(d, torch.relu(a * b + c), rtol=1e-6, atol=1e-6), "tessel's result is wrong"
src, dst = torch.randn(n, device="cuda", generator=g), torch.empty(n, device="cuda")
t_tessel = cuda_bench.median_ms(lambda: f(a, b, c, d))
t_copy = cuda_bench.median_ms(lambda: dst.copy_(src))
print(cuda_bench.bench_line("elementwise_cuda", f"n=2^{log2n}", 4 * n * 4 / t_tessel / 1e6,
                            "d2d_copy", 2 * n * 4 / t_copy / 1e6))
