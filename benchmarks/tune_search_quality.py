"""tune_search_quality: does the cost model make the search better than random? (issue 19)

    benchmarks/run.sh tune_search_quality                                  # the figures
    benchmarks/run.sh tune_search_quality --random-trials 200 --model-trials 64 --seeds 1  # quick

For each workload (a 512^3 fp32 GEMM and ResNet-50's 3x3 conv2d 64->64 on 56x56, both for
`llvm -num-cores=2`) and seed, tessel's tuner runs twice with the same measurement options:

- **random**: `--random-trials` trials (1000) with a model that never trains (`min_programs`
  above the trial count), so every round is random samples of the search space;
- **model**: `--model-trials` trials (300) as tune() runs by default (XGBoost model, evolutionary
  search, 5 % random).

Both runs leave out the default schedule's trial (`measure_default=False`): the figure is about
the search, and the rules' schedule would be the same first trial of both.

The figure is the first trial of the model run whose best time is within `--tolerance` (2 %, the
spread of timing one candidate twice) of the random run's best of all its trials. Bar: reached
within 300 trials, on every workload (on the median over seeds). Each run writes its JSON-lines log
to build/bench/tune_search_quality/<date-time>/; `--report DIR` reprints a run from its logs.
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TESSEL_NUM_THREADS", "2")

import tessel as ts  # noqa: E402

TARGET = "llvm -num-cores=2"
WORKLOADS = {
    "gemm": ("op.matmul", [512, 512, 512, 0, 0, "float32"]),
    "conv2d": ("op.conv2d_nchw", [1, 64, 56, 56, 64, [3], [1], [1], [1], 1, "float32"]),
}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def curve(log, task):
    """The best time after each trial of the log (infinity until the first success; a schedule
    costs the median of its measurements)."""
    records, skipped, reasons = ts.read_records(log)
    if skipped:
        raise RuntimeError(f"{log}: {skipped} lines skipped: {reasons}")
    mine = [r for r in records if r.task_key == task.key]
    return [p.best_seconds for p in ts.auto_schedule.tuning_curve(mine)]


def tune(task, log, trials, seed, random_only):
    if os.path.exists(log):
        os.remove(log)
    start = time.perf_counter()
    result = ts.auto_schedule.tune(task, trials=trials, log_file=log, seed=seed,
                                   min_programs=trials + 1 if random_only else 16,
                                   measure_default=False, progress=False, print_schedule=False)
    return time.perf_counter() - start, result.flops


def reached_at(model_curve, target_seconds, tolerance):
    for i, best in enumerate(model_curve, 1):
        if best <= target_seconds * (1 + tolerance):
            return i
    return None


def gflops(task_flops, seconds):
    return task_flops / seconds / 1e9 if seconds < float("inf") else 0.0


def report(rows, model_trials, bar):
    print()
    print(f"{'workload':8} {'seed':>4} {'random best':>12} {'trials':>7} {'model best':>11} "
          f"{'model@300':>10} {'reached at':>10}")
    by_workload = {}
    for r in rows:
        at = r["reached_at"]
        print(f"{r['workload']:8} {r['seed']:>4} {r['random_gflops']:>8.1f} GF/s "
              f"{r['random_trials']:>7} {r['model_gflops']:>7.1f} GF/s "
              f"{r['model_gflops_at_bar']:>6.1f} GF/s {at if at else 'never':>10}")
        by_workload.setdefault(r["workload"], []).append(at if at else float("inf"))
    print()
    ok = True
    for name, ats in by_workload.items():
        med = statistics.median(ats)
        shown = "never" if med == float("inf") else f"{med:g}"
        passed = med <= bar
        ok = ok and passed
        print(f"BENCH tune_search_quality workload={name} seeds={len(ats)} "
              f"reached_random_best_at={shown} bar={bar} {'pass' if passed else 'FAIL'}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--random-trials", type=int, default=1000)
    p.add_argument("--model-trials", type=int, default=300)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--tolerance", type=float, default=0.02)
    p.add_argument("--report", help="reprint a run from its directory's summary.json")
    a = p.parse_args()
    bar = 300
    if a.report:
        with open(os.path.join(a.report, "summary.json")) as f:
            summary = json.load(f)
        return 0 if report(summary["rows"], summary["model_trials"], bar) else 1
    names = [w for w in a.workloads.split(",") if w]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; known: {sorted(WORKLOADS)}")
    out_dir = os.path.join(ROOT, "build", "bench", "tune_search_quality",
                           time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out_dir, exist_ok=True)
    print(f"tune_search_quality: {names}, random {a.random_trials} trials vs model "
          f"{a.model_trials}, {a.seeds} seed(s), tolerance {a.tolerance:.0%}; logs in {out_dir}",
          flush=True)
    rows = []
    for name in names:
        workload, params = WORKLOADS[name]
        task = ts.SearchTask(workload, params, target=TARGET)
        for seed in range(1, a.seeds + 1):
            logs = {kind: os.path.join(out_dir, f"{name}_{kind}_seed{seed}.jsonl")
                    for kind in ("random", "model")}
            secs = {}
            for kind, trials in (("random", a.random_trials), ("model", a.model_trials)):
                secs[kind], flops = tune(task, logs[kind], trials, seed, kind == "random")
                best = curve(logs[kind], task)[-1]
                print(f"  {name} seed {seed} {kind}: {trials} trials in {secs[kind]:.0f} s, "
                      f"best {gflops(flops, best):.1f} GFLOP/s", flush=True)
            rc, mc = curve(logs["random"], task), curve(logs["model"], task)
            at = reached_at(mc, rc[-1], a.tolerance)
            rows.append({"workload": name, "seed": seed, "random_trials": len(rc),
                         "random_gflops": gflops(flops, rc[-1]),
                         "model_gflops": gflops(flops, mc[-1]),
                         "model_gflops_at_bar": gflops(flops, mc[min(bar, len(mc)) - 1]),
                         "reached_at": at, "seconds": secs,
                         "random_curve": [gflops(flops, x) for x in rc],
                         "model_curve": [gflops(flops, x) for x in mc]})
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"rows": rows, "model_trials": a.model_trials,
                   "random_trials": a.random_trials, "tolerance": a.tolerance}, f)
    return 0 if report(rows, a.model_trials, bar) else 1


if __name__ == "__main__":
    sys.exit(main())
