"""model_cuda: whole models on the GPU (issue 63): ResNet-50, MobileNetV2 and a BERT-base encoder
(sequence 128, batch 1) from tessel.frontend.models, imported with tessel.frontend.from_onnx and
built with ts.compile(graph, "cuda") (weights and buffers on the device), against PyTorch eager in
the same process on the same architectures (torchvision's resnet50 and mobilenet_v2, transformers'
BertModel of BERT-base's configuration; eval mode, no_grad, TF32 off on both sides: tessel's
defaults are float32).

Per model: import and build time, the relative L2 error of each output against onnxruntime's on
the CPU for the same ONNX model (bar: <= 1e-4 in fp32), and the latency (median of --reps calls
after warm-up, each call from its launch to the end of its work: the device synchronised before
and after) with the rule-based default schedules (the shipped tuning logs off) and with the
shipped tuning logs on. Printed only, no bar on speed.

    benchmarks/run.sh model_cuda [--models resnet50 mobilenet_v2 bert] [--reps 50]
"""
import argparse
import time

import numpy as np
import onnxruntime as ort
import torch

import tessel as ts
from model_cpu import build_models, rel_l2  # the same models, inputs and error
from tessel.frontend import from_onnx


def torch_model(name, feeds):
    """PyTorch eager on the GPU: the same architecture (random weights), and its call."""
    if name in ("resnet50", "mobilenet_v2"):
        import torchvision

        net = getattr(torchvision.models, name)(weights=None).eval().cuda()
        x = torch.from_numpy(feeds["input"]).cuda()
        return lambda: net(x)
    from transformers import BertConfig, BertModel

    net = BertModel(BertConfig(), add_pooling_layer=False).eval().cuda()
    ids = torch.from_numpy(feeds["input_ids"]).cuda()
    mask = torch.from_numpy(feeds["attention_mask"]).cuda()
    return lambda: net(input_ids=ids, attention_mask=mask)


def latency_ms(fn, reps):
    with torch.no_grad():
        for _ in range(5):
            fn()
        times = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", nargs="+", default=["resnet50", "mobilenet_v2", "bert"])
    p.add_argument("--reps", type=int, default=50)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"onnxruntime {ort.__version__} (CPU, the reference outputs)")
    failed = False
    full_size = argparse.Namespace(models=args.models, width=1.0, layers=None)
    for name, (m, feeds) in build_models(full_size).items():
        t0 = time.perf_counter()
        graph = from_onnx(m)
        t_import = time.perf_counter() - t0
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        refs = ort.InferenceSession(m.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
        on_device = [torch.from_numpy(feeds[v.name]).cuda() for v in graph.inputs]
        contenders = {"pytorch eager": torch_model(name, feeds)}
        for label, shipped in (("rules", False), ("shipped logs", True)):
            ts.auto_schedule.use_shipped_logs(shipped)
            cm = ts.compile(graph, "cuda")
            outs = cm(*on_device)
            outs = outs if isinstance(outs, list) else [outs]
            errs = [rel_l2(y.numpy(), r) for y, r in zip(outs, refs)]
            ok = all(e <= 1e-4 for e in errs)
            failed |= not ok
            print(f"{name} [{label}]: import {t_import:.2f} s, build {cm.build_seconds:.1f} s "
                  f"({cm.kernels} kernels for {len(graph.nodes)} groups, scratch "
                  f"{cm.buffer_bytes / 2**20:.1f} MiB), rel. L2 vs onnxruntime "
                  f"{', '.join(f'{e:.2e}' for e in errs)} {'PASS' if ok else 'FAIL'}")
            contenders[f"tessel {label}"] = (lambda cm=cm: cm(*on_device))
        ts.auto_schedule.use_shipped_logs(True)
        times = {k: latency_ms(fn, args.reps) for k, fn in contenders.items()}
        base = times["pytorch eager"]
        for k, t in times.items():
            print(f"  {k:22s} {t:9.3f} ms   pytorch / this = {base / t:.2f}")
            print(f"BENCH model_cuda {name} {k.replace(' ', '_')}_ms={t:.3f}")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
