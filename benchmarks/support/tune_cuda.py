"""The GPU tuning benchmarks' common part (tune_gemm_cuda, tune_softmax_cuda): tune a registered
workload for `cuda` with ts.auto_schedule.tune, resumably, then time the best schedule against
PyTorch and the GPU tutorial's hand-written schedule in one process (CUDA events, median of 30
runs after 5 warm-up runs) and print BENCH lines.

Tuning runs in chunks of one round (--chunk trials) until --trials are in the log or
--max-seconds have passed; the log is the state, so a later command with the same --log goes on
where this one stopped (the GPU host's commands last at most 10 minutes). The report needs at
least one successful record; it says how many trials the log holds.
"""
import argparse
import json
import os
import time
import warnings

import tessel as ts
import torch

import cuda_bench


def parse(description, default_log):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--trials", type=int, default=1000, help="trials in all (the log's included)")
    p.add_argument("--chunk", type=int, default=64, help="trials per tune() call")
    p.add_argument("--max-seconds", type=float, default=480,
                   help="start no tune() call after this many seconds (the report follows)")
    p.add_argument("--log", default=os.path.join(cuda_bench.REPO, "build", "gpu-tune", default_log),
                   help="the tuning log (default build/gpu-tune/<name>.jsonl: a later command "
                   "resumes it)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--restart-after", type=int, default=0,
                   help="restart the search after this many trials without a 1 %% gain of the "
                   "epoch's best (TuningOptions::restart_after; 0: never)")
    p.add_argument("--no-default", action="store_true",
                   help="the search alone: the task's default schedule is not a trial "
                   "(TuningOptions::measure_default off)")
    p.add_argument("--report-only", action="store_true", help="no tuning: time the log's best")
    p.add_argument("--tune-only", action="store_true",
                   help="no report: tune, then stop (time the log's best with --report-only in "
                   "a fresh process: after a tuning, cuBLAS may fail in the tuning's process, "
                   "docs/ideas.md)")
    p.add_argument("--progress", action="store_true",
                   help="the tuner's progress: a line per round with its search / build / run / "
                   "train seconds")
    return p.parse_args()


def records_of(log, task):
    if not os.path.exists(log):
        return []
    records, skipped, reasons = ts.read_records(log)
    if skipped:
        print(f"{log}: {skipped} unreadable lines skipped ({reasons})")
    return [r for r in records if r.task_key == task.key]


def trials_in(records):
    """Trials among the records (not the re-measurements of the fastest)."""
    return sum(1 for r in records if r.is_trial)


def tune(task, a):
    """Tunes in chunks until a.trials or a.max_seconds; returns the tuning curve's points."""
    os.makedirs(os.path.dirname(os.path.abspath(a.log)), exist_ok=True)
    start = time.perf_counter()
    while not a.report_only:
        done = trials_in(records_of(a.log, task))
        if done >= a.trials or time.perf_counter() - start > a.max_seconds:
            break
        ts.auto_schedule.tune(task, trials=min(a.trials, done + a.chunk), log_file=a.log,
                              seed=a.seed, restart_after=a.restart_after, progress=a.progress,
                              measure_default=not a.no_default, print_schedule=False)
        records = records_of(a.log, task)
        ok = [r for r in records if r.ok and r.is_trial]
        best = ts.auto_schedule.tuning_curve(records)[-1].best_seconds
        errors = {}
        for r in [r for r in records if r.is_trial][done:]:
            if not r.ok:
                key = r.error_message.split("\n")[0][:100]
                errors[key] = errors.get(key, 0) + 1
        print(f"tuned {trials_in(records)}/{a.trials} trials in {time.perf_counter() - start:.0f} s: "
              f"best {best * 1e3:.4f} ms, {len(ok)} ok; this chunk's errors: "
              f"{json.dumps(errors) if errors else 'none'}", flush=True)
    if a.tune_only:
        raise SystemExit(0)
    return records_of(a.log, task)


def build_best(task, log):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ts.TuningWarning)  # no silent fallback to a default
        with ts.apply_history_best(log):
            dag = task.dag
            return ts.build(ts.create_schedule(list(dag.outputs)), list(dag.args), target="cuda")


def check_kernels(kernels, x, y, ref, tolerance):
    """Runs each (label, kernel) on x, y into a fresh NaN-filled float32 output, checks it against
    ref (relative error below tolerance); returns the outputs by label."""
    outs = {}
    for label, f in kernels:
        outs[label] = torch.full(tuple(ref.shape), float("nan"), device="cuda")
        f(x, y, outs[label])
        err = cuda_bench.relative_error(outs[label], ref)
        print(f"relative error of the {label} kernel: {err:.2e}")
        assert err < tolerance, f"the {label} kernel is wrong"
    return outs


def curve(records, work):
    """Every 64th trial's best (a schedule costs the median of its measurements)."""
    points = []
    curve = ts.auto_schedule.tuning_curve(records)
    for p in curve:
        if p.trial % 64 == 0 or p.trial == len(curve):
            best = p.best_seconds
            points.append(f"{p.trial}:{work / best / 1e9 if best < float('inf') else 0:.0f}")
    return " ".join(points)


def report(name, case, records, work, unit, run_tuned, run_torch, run_tutorial, torch_name,
           default=None):
    """Times the three in one process and prints the figures and BENCH lines; `work` is the
    flops (unit GFLOP/s) or bytes (GB/s) of one run. With `default` (a run of the task's default
    schedule: a search started without it) that too, and how close the search came to it."""
    ok = [r for r in records if r.ok and r.is_trial]
    trials = trials_in(records)
    print(f"{name} {case}: {trials} trials in the log, {len(ok)} successful")
    print(f"curve (trials:{unit} while tuning): {curve(records, work)}")
    if not ok:
        print(f"BENCH {name} {case} tessel=n/a (no successful record)")
        return 1
    runs = [("tuned", run_tuned), (torch_name, run_torch), ("tutorial", run_tutorial)]
    t = {label: cuda_bench.median_ms(fn) for label, fn in
         runs + ([("default", default)] if default else [])}
    gf = {k: work / v / 1e6 for k, v in t.items()}
    print(f"{name} {case}: tuned {gf['tuned']:.1f}, hand-written (tutorial) {gf['tutorial']:.1f}, "
          f"{torch_name} {gf[torch_name]:.1f} {unit} (median of 30 CUDA-event timings)")
    print(cuda_bench.bench_line(name, f"{case} trials={trials}", gf["tuned"], torch_name,
                                gf[torch_name]))
    print(cuda_bench.bench_line(name, f"{case} trials={trials}", gf["tuned"], "tutorial",
                                gf["tutorial"]))
    if default:
        print(f"{name} {case}: the search alone (started without the default schedule) "
              f"{gf['tuned']:.1f} {unit}, the default schedule {gf['default']:.1f}: "
              f"{gf['tuned'] / gf['default']:.3f} x")
        print(cuda_bench.bench_line(name, f"{case} trials={trials} search-alone", gf["tuned"],
                                    "default", gf["default"]))
    return 0
