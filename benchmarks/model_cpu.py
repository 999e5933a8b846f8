"""model_cpu: whole models on the CPU (issue 63): ResNet-50, MobileNetV2 and a BERT-base encoder
(sequence 128, batch 1) from tessel.frontend.models, imported with tessel.frontend.from_onnx and
built with ts.compile(graph, "llvm"), against onnxruntime (ORT_ENABLE_ALL, 2 intra-op threads, 1
inter-op thread, spinning off) in the same process.

Per model: import and build time, the relative L2 error of each output against onnxruntime's
(bar: <= 1e-4 in fp32), and the latency (median of --rounds interleaved samples, a sample the mean
of as many calls as fill --sample-ms after one untimed call) with the rule-based default schedules
(the shipped tuning logs off), with the same on blocked activations (from_onnx(layout=
"NCHW16c"): the convolutions as conv2d_nchwc, the layers agreeing on the layout; --blocked-layout
another, "none" to skip) and with the shipped tuning logs on. Printed only, no bar on speed.

    benchmarks/run.sh model_cpu [--models resnet50 mobilenet_v2 bert] [--width 1.0] [--layers N]
                                [--blocked-layout NCHW16c]
"""
import argparse
import os
import time

import numpy as np
import onnxruntime as ort

import tessel as ts
from tessel.frontend import from_onnx, models


def build_models(args):
    out = {}
    for name in args.models:
        if name == "resnet50":
            layers = (3, 4, 6, 3) if args.layers is None else (args.layers,) * 4
            m = models.resnet50(width=args.width, layers=layers)
            feeds = {"input": np.random.default_rng(0).standard_normal(
                (1, 3, 224, 224)).astype(np.float32)}
        elif name == "mobilenet_v2":
            m = models.mobilenet_v2(width=args.width, layers=args.layers)
            feeds = {"input": np.random.default_rng(0).standard_normal(
                (1, 3, 224, 224)).astype(np.float32)}
        elif name == "bert":
            hidden = max(64, int(768 * args.width) // 64 * 64)
            m = models.bert_encoder(layers=12 if args.layers is None else args.layers,
                                    hidden=hidden, heads=hidden // 64)
            mask = np.ones((1, 128), np.int64)
            mask[0, 100:] = 0
            feeds = {"input_ids": np.random.default_rng(0).integers(0, 30522, (1, 128)),
                     "attention_mask": mask}
        else:
            raise SystemExit(f"unknown model {name}")
        out[name] = (m, feeds)
    return out


def ort_session(m):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


def sample(fn, ms):
    fn()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        t = time.perf_counter() - t0
        if t * 1e3 >= ms:
            return t / n


def rel_l2(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", nargs="+", default=["resnet50", "mobilenet_v2", "bert"])
    p.add_argument("--width", type=float, default=1.0)
    p.add_argument("--layers", type=int, default=None)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--sample-ms", type=float, default=300)
    p.add_argument("--no-shipped", action="store_true", help="skip the shipped-logs build")
    p.add_argument("--blocked-layout", default="NCHW16c",
                   help="the blocked activations' layout for the 'rules, blocked' build "
                        "(none: skip it)")
    args = p.parse_args()
    print(f"CPU: {ts.Target('llvm').describe()}; TESSEL_NUM_THREADS="
          f"{os.environ.get('TESSEL_NUM_THREADS', '(default)')}; onnxruntime {ort.__version__}")
    failed = False
    for name, (m, feeds) in build_models(args).items():
        t0 = time.perf_counter()
        graph = from_onnx(m)
        t_import = time.perf_counter() - t0
        sess = ort_session(m)
        refs = sess.run(None, feeds)
        variants = [("rules", False, graph)]
        if args.blocked_layout != "none":
            variants.append((f"rules, {args.blocked_layout}", False,
                             from_onnx(m, layout=args.blocked_layout)))
        if not args.no_shipped:
            variants.append(("shipped logs", True, graph))
        contenders = {"onnxruntime": lambda: sess.run(None, feeds)}
        for label, shipped, g in variants:
            ts.auto_schedule.use_shipped_logs(shipped)
            cm = ts.compile(g, "llvm")
            outs = cm(*feeds.values())
            outs = outs if isinstance(outs, list) else [outs]
            errs = [rel_l2(y, r) for y, r in zip(outs, refs)]
            ok = all(e <= 1e-4 for e in errs)
            failed |= not ok
            print(f"{name} [{label}]: import {t_import:.2f} s, build {cm.build_seconds:.1f} s "
                  f"({cm.kernels} kernels for {len(g.nodes)} groups, scratch "
                  f"{cm.buffer_bytes / 2**20:.1f} MiB), rel. L2 vs onnxruntime "
                  f"{', '.join(f'{e:.2e}' for e in errs)} {'PASS' if ok else 'FAIL'}")
            contenders[f"tessel {label}"] = (lambda cm=cm: cm(*feeds.values()))
        ts.auto_schedule.use_shipped_logs(True)
        times = {k: [] for k in contenders}
        for _ in range(args.rounds):
            for k, fn in contenders.items():
                times[k].append(sample(fn, args.sample_ms))
        base = np.median(times["onnxruntime"])
        for k, v in times.items():
            med = float(np.median(v))
            print(f"  {k:22s} {med * 1e3:9.2f} ms   onnxruntime / this = {base / med:.2f}")
            key = k.replace(",", "").replace(" ", "_")
            print(f"BENCH model_cpu {name} {key}_ms={med * 1e3:.3f}")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
