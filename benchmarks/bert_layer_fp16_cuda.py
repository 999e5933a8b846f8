"""bert_layer_fp16_cuda: one BERT-base encoder layer in float16 (sequence 128, batch 1), tessel's
operators called in sequence under their default "cuda" schedules (ts.op.default_schedule, the
shipped tuning logs off) against PyTorch eager (transformers' BertLayer, .half(), eval, no_grad)
in the same process, with the same weights and inputs (issue 59's figure: no slower than PyTorch
eager).

tessel's layer, one kernel each: the fused QKV dense (bias in the epilogue), the heads' layout
(one transpose of Q, K and V), the attention scores (batch_matmul Q K^T on the tensor cores), the
scaled, masked softmax, the context (batch_matmul P V), the heads back, the output dense, the
residual add with layer norm, the FFN's first dense with GELU, its second dense, and the residual
add with layer norm: eleven launches, each a callable built once. Its output is checked against
PyTorch's (relative L2 error below 1e-2: both accumulate in float32 and round to float16 between
operators, at different places).

Latency: median of --reps calls (after warm-up), each from its first launch to the end of its
work, the device synchronised before and after (what a caller waits for), PyTorch's the same way;
beside it the GPU's time alone (CUDA events with the queue pre-filled, support/cuda_bench.py),
which leaves out both sides' launch overheads.

    benchmarks/run.sh bert_layer_fp16_cuda [--reps 200]
    python benchmarks/bert_layer_fp16_cuda.py --dry-run     no GPU: build every kernel for sm_90a

Prints the two latencies and
  BENCH bert_layer_fp16_cuda latency_us tessel=<us> torch=<us> ratio=<torch / tessel>
(ratio > 1: tessel faster).
"""
import argparse
import os
import sys
import time

import numpy as np

import tessel as ts  # before torch: the process uses tessel's NVRTC

HIDDEN, HEADS, SEQ, FFN = 768, 12, 128, 3072
DH = HIDDEN // HEADS


def build_layer(target):
    """The layer's kernels: [(name, built function, its placeholders' names in call order)]."""
    f16 = "float16"
    P = lambda shape, name: ts.placeholder(shape, dtype=f16, name=name)  # noqa: E731
    kernels = []

    def kernel(name, ins, out):
        s = ts.op.default_schedule(out, ts.Target(target))
        kernels.append((name, ts.build(s, ins + [out], target=target)))

    x, wqkv, bqkv = P((SEQ, HIDDEN), "x"), P((3 * HIDDEN, HIDDEN), "wqkv"), P((3 * HIDDEN,), "bqkv")
    kernel("qkv", [x, wqkv, bqkv], ts.op.dense(x, wqkv, bqkv))
    qkv = P((SEQ, 3, HEADS, DH), "qkv")
    kernel("heads", [qkv], ts.op.transpose(qkv, [1, 2, 0, 3]))  # [3, heads, seq, dh]
    q, k = P((HEADS, SEQ, DH), "q"), P((HEADS, SEQ, DH), "k")
    kernel("scores", [q, k], ts.op.batch_matmul(q, k, transpose_b=True))
    s, scale, mask = P((HEADS, SEQ, SEQ), "s"), P((1,), "scale"), P((1, 1, SEQ), "mask")
    kernel("softmax", [s, scale, mask],
           ts.op.softmax(ts.op.add(ts.op.multiply(s, scale), mask), axis=2))
    p, v = P((HEADS, SEQ, SEQ), "p"), P((HEADS, SEQ, DH), "v")
    kernel("context", [p, v], ts.op.batch_matmul(p, v))
    c = P((HEADS, SEQ, DH), "c")
    kernel("heads_back", [c], ts.op.transpose(c, [1, 0, 2]))  # [seq, heads, dh]
    a, wo, bo = P((SEQ, HIDDEN), "a"), P((HIDDEN, HIDDEN), "wo"), P((HIDDEN,), "bo")
    kernel("out", [a, wo, bo], ts.op.dense(a, wo, bo))
    o, r, g, b = P((SEQ, HIDDEN), "o"), P((SEQ, HIDDEN), "r"), P((HIDDEN,), "g"), P((HIDDEN,), "b")
    kernel("add_norm", [o, r, g, b], ts.op.layer_norm(ts.op.add(o, r), g, b, 1e-12))
    h, w1, b1 = P((SEQ, HIDDEN), "h"), P((FFN, HIDDEN), "w1"), P((FFN,), "b1")
    kernel("ffn1", [h, w1, b1], ts.op.dense(h, w1, b1, activation="gelu"))
    f, w2, b2 = P((SEQ, FFN), "f"), P((HIDDEN, FFN), "w2"), P((HIDDEN,), "b2")
    kernel("ffn2", [f, w2, b2], ts.op.dense(f, w2, b2))
    return dict(kernels)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args()
    ts.auto_schedule.use_shipped_logs(False)
    if args.dry_run:
        k = build_layer("cuda -arch=sm_90a")
        print(f"bert_layer_fp16_cuda: dry run, {len(k)} kernels built for sm_90a")
        return
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "support"))
    import cuda_bench
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer

    torch.manual_seed(0)
    cfg = BertConfig(hidden_act="gelu")  # the erf GELU, as ts.op's
    layer = BertLayer(cfg).half().cuda().eval()
    k = build_layer("cuda")
    dev, f16 = "cuda", torch.float16
    x = torch.randn(1, SEQ, HIDDEN, device=dev, dtype=f16)
    mask01 = torch.ones(SEQ, device=dev, dtype=f16)
    mask01[SEQ - 9:] = 0  # the last 9 positions are padding
    ext = ((1 - mask01) * torch.finfo(f16).min)[None, None, None, :]  # BERT's additive mask

    att = layer.attention
    wqkv = torch.cat([att.self.query.weight, att.self.key.weight,
                      att.self.value.weight]).detach().contiguous()
    bqkv = torch.cat([att.self.query.bias, att.self.key.bias, att.self.value.bias]).detach()
    scale = torch.tensor([1 / DH ** 0.5], device=dev, dtype=f16)
    mask = ext.reshape(1, 1, SEQ).contiguous()
    W = dict(wo=att.output.dense.weight, bo=att.output.dense.bias,
             g1=att.output.LayerNorm.weight, b1n=att.output.LayerNorm.bias,
             w1=layer.intermediate.dense.weight, b1=layer.intermediate.dense.bias,
             w2=layer.output.dense.weight, b2=layer.output.dense.bias,
             g2=layer.output.LayerNorm.weight, b2n=layer.output.LayerNorm.bias)
    W = {n: t.detach().contiguous() for n, t in W.items()}
    e = lambda *shape: torch.empty(shape, device=dev, dtype=f16)  # noqa: E731
    qkv, heads = e(SEQ, 3 * HIDDEN), e(3, HEADS, SEQ, DH)
    s, pr = e(HEADS, SEQ, SEQ), e(HEADS, SEQ, SEQ)
    ctx, back, o, h, f, f2, y = (e(HEADS, SEQ, DH), e(SEQ, HEADS, DH), e(SEQ, HIDDEN),
                                 e(SEQ, HIDDEN), e(SEQ, FFN), e(SEQ, HIDDEN), e(SEQ, HIDDEN))
    x2 = x.reshape(SEQ, HIDDEN)
    qkv4 = qkv.view(SEQ, 3, HEADS, DH)
    back2 = back.view(SEQ, HIDDEN)

    def tessel_layer():
        k["qkv"](x2, wqkv, bqkv, qkv)
        k["heads"](qkv4, heads)
        k["scores"](heads[0], heads[1], s)
        k["softmax"](s, scale, mask, pr)
        k["context"](pr, heads[2], ctx)
        k["heads_back"](ctx, back)
        k["out"](back2, W["wo"], W["bo"], o)
        k["add_norm"](o, x2, W["g1"], W["b1n"], h)
        k["ffn1"](h, W["w1"], W["b1"], f)
        k["ffn2"](f, W["w2"], W["b2"], f2)
        k["add_norm"](f2, h, W["g2"], W["b2n"], y)
        return y

    def torch_layer():
        return layer(x, attention_mask=ext)[0]

    with torch.no_grad():
        want = torch_layer().reshape(SEQ, HIDDEN).float()
        got = tessel_layer().float()
        torch.cuda.synchronize()
        err = (torch.linalg.norm(got - want) / torch.linalg.norm(want)).item()
        print(f"relative L2 error against PyTorch: {err:.2e}")
        assert err < 1e-2, f"tessel's layer differs from PyTorch's: {err}"
        times = {}
        for name, fn in (("tessel", tessel_layer), ("torch", torch_layer)) * 2:
            for _ in range(20):
                fn()
            ts_ = []
            for _ in range(args.reps):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                fn()
                torch.cuda.synchronize()
                ts_.append(time.perf_counter() - t0)
            times[name] = float(np.median(ts_)) * 1e6  # the second round counts
        gpu = {name: cuda_bench.median_ms(fn, reps=50) * 1e3
               for name, fn in (("tessel", tessel_layer), ("torch", torch_layer))}
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}")
    print(f"BERT-base layer, fp16, seq {SEQ}: tessel {times['tessel']:.1f} us, "
          f"PyTorch eager {times['torch']:.1f} us")
    print(f"the GPU's time alone (CUDA events, queue pre-filled): tessel {gpu['tessel']:.1f} us, "
          f"PyTorch {gpu['torch']:.1f} us")
    print(f"BENCH bert_layer_fp16_cuda latency_us tessel={times['tessel']:.1f} "
          f"torch={times['torch']:.1f} ratio={times['torch'] / times['tessel']:.3f}")


if __name__ == "__main__":
    main()
