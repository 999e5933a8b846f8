"""tessel's side of the tune_gemm_cpu benchmark: the same GEMM tuned by `ts.auto_schedule.tune`.

    python tessel_gemm.py --n 1024 --trials 1000 --seed 1 --log LOG.jsonl --out result.json

tunes the registered workload `op.matmul` (M = N = K = n, no transposes, float32; the plain
C = A @ B of row-major matrices) for `llvm -num-cores=2` into the JSON-lines log LOG
(docs/tuning.md, "Records") and writes its tuning curve and times to result.json. Until the
tuner exists (issue 19), the result says so ({"available": false, ...}) and nothing is measured.
`build_best` (used by the re-timing process) builds the best of the log's first `trials` trials
through `ts.apply_history_best`. The tuner re-measures its fastest states (records of origin
"remeasure", not trials) and judges a schedule by the median of its measurements
(`ts.ScheduleCosts`); the curve and the bests here judge alike.

tessel reads TESSEL_NUM_THREADS when its thread pool starts; the benchmark sets it to 2.
"""
import argparse
import json
import os
import sys
import tempfile
import time
import warnings

os.environ.setdefault("TESSEL_NUM_THREADS", "2")

import tessel as ts  # noqa: E402

TARGET = "llvm -num-cores=2"  # plain "llvm" is this machine's CPU (docs/target.md)


def task(n):
    return ts.SearchTask("op.matmul", [n, n, n, 0, 0, "float32"], target=TARGET)


def tuner_available():
    """None when ts.auto_schedule.tune exists, else why not."""
    if hasattr(ts.auto_schedule, "tune"):
        return None
    return ("ts.auto_schedule.tune does not exist in this tessel (the tuner of issue 19 has not "
            "landed)")


def read_log(path):
    """The log's records in the order the tuner wrote them (the trials, failures included, and
    the re-measurements of the fastest)."""
    records, skipped, reasons = ts.read_records(path)
    if skipped:
        raise RuntimeError(f"{path}: {skipped} lines skipped: {reasons}")
    return records


def tune(n, trials, seed, log):
    why_not = tuner_available()
    if why_not:
        print(f"tessel: {why_not}; its column is skipped", flush=True)
        return {"tuner": "tessel", "available": False, "reason": why_not}
    if os.path.exists(log):
        os.remove(log)  # the tuner resumes from an existing log: start afresh
    t = task(n)
    print(f"tessel {ts.__version__}: task {t.key}, {t.hardware['num_cores']} cores, vector unit "
          f"{t.hardware['vector_unit_bytes'] * 8} bits", flush=True)
    start_wall = time.time()
    start = time.perf_counter()
    returned = ts.auto_schedule.tune(t, trials=trials, log_file=log, seed=seed,
                                     measurements_per_round=64)
    wall = time.perf_counter() - start
    records = [r for r in read_log(log) if r.task_key == t.key]
    flop = 2.0 * n ** 3
    marks, build, run, trials = [], 0.0, 0.0, 0
    for r in records:
        build += r.build_seconds
        run += r.run_seconds
        trials += r.is_trial
        mark = {"trials": trials, "seconds": r.timestamp - start_wall,
                "split": {"build (sum)": build, "run (sum)": run}}
        if r.is_trial:
            marks.append(mark)
        else:  # a re-measurement after the trial: its time counts there
            marks[-1] = mark
    return {"tuner": "tessel", "available": True, "n": n, "seed": seed, "log": log,
            "tessel_version": ts.__version__, "target": str(t.target), "wall_seconds": wall,
            "gflops": [flop / r.mean_cost / 1e9 if r.ok and r.mean_cost > 0 else 0.0
                       for r in records if r.is_trial],
            # as the tuner judges: a schedule costs the median of its measurements, so the best
            # can fall when a lucky timing is re-measured
            "best_gflops": [p.best_gflops for p in ts.auto_schedule.tuning_curve(records, flop)],
            # the best's median in tune()'s final check, the figure it prints first
            "final_gflops": returned.final_gflops,
            "marks": marks, "split": reported_split(returned, marks, wall)}


def first_trials(records, trials):
    """The records before the (trials + 1)-th trial: the first `trials` trials with their
    re-measurements."""
    seen = 0
    for i, r in enumerate(records):
        seen += r.is_trial
        if seen > trials:
            return i
    return len(records)


def reported_split(returned, marks, wall):
    """The tuner's own search / build / run / train split when tune() returns one (a dict, or an
    object with a `time_split` or `stats` dict); else the records' build and run seconds (summed
    over candidates, which are built several at a time) and the rest."""
    for value in (returned, getattr(returned, "time_split", None),
                  getattr(returned, "stats", None)):
        if isinstance(value, dict) and value:
            return {str(k): float(v) for k, v in value.items() if isinstance(v, (int, float))}
    last = marks[-1]["split"] if marks else {}
    return dict(last, **{"rest (search, train, other)": max(0.0, wall - sum(last.values()))})


def best_record(log, trials):
    """The best schedule among the log's first `trials` trials (with their re-measurements), as
    the tuner judges it: (the log's records, the index of the schedule's first record, its
    seconds: the median of its measurements, the number of records up to the next trial)."""
    records = read_log(log)
    cut = first_trials(records, trials)
    costs = ts.ScheduleCosts()
    for r in records[:cut]:
        costs.add(r)
    if costs.best() is None:
        raise RuntimeError(f"{log}: no successful record among the first {trials} trials")
    seconds, best = costs.best()
    return records, best, seconds, cut


def build_best(log, n, trials):
    """best_record's schedule built with ts.apply_history_best (a log cut before the next trial):
    (the function taking A, B, C, the index of the schedule's first record, its seconds)."""
    t = task(n)
    _, best, seconds, cut = best_record(log, trials)
    with open(log) as f:
        lines = [line for line in f if line.strip()][:cut]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as cut:
        cut.writelines(lines)
    try:
        with warnings.catch_warnings():
            # No record applied (the default schedule instead) must not pass for the tuned one.
            warnings.simplefilter("error", ts.TuningWarning)
            with ts.apply_history_best(cut.name):
                dag = t.dag
                func = ts.build(ts.create_schedule(list(dag.outputs)), list(dag.args),
                                target=TARGET)
    finally:
        os.remove(cut.name)
    return func, best, seconds


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--trials", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    result = tune(a.n, a.trials, a.seed, a.log)
    with open(a.out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
