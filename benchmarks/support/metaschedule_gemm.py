"""MetaSchedule's side of the tune_gemm_cpu benchmark (TVM 0.27, `tvm.s_tir.meta_schedule`).

    python metaschedule_gemm.py --n 1024 --trials 1000 --seed 1 --work-dir DIR --out result.json

tunes the fp32 GEMM C = A @ B (row-major n x n) with `tune_tir` into DIR (MetaSchedule's JSON
database and logs) and writes its tuning curve, times and time split to result.json. The
benchmark runs this in a subprocess of its own, so a crash of TVM costs one column, not the run.
`build_best` (used by the re-timing process) builds the best schedule of the first `trials`
records of such a database.

TVM reads TVM_NUM_THREADS when it is imported (its default on this machine class is one thread);
the benchmark sets it to 2 in the environment of the processes it starts.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TVM_NUM_THREADS", "2")

import tvm  # noqa: E402
import tvm_ffi  # noqa: E402
import tvm.s_tir.meta_schedule as ms  # noqa: E402
from tvm import te  # noqa: E402
from tvm.ir.utils import derived_object  # noqa: E402
from tvm.target import codegen  # noqa: E402

# A failed candidate's run time in MetaSchedule's database (build or run error): 1e10 seconds.
FAILED_SECONDS = 1e9
BUILD_TIMEOUT_SECONDS = 120  # MetaSchedule's default, 30, is shorter than its import (see tune)


def target():
    """The host CPU for 2 cores. `{"kind": "llvm", "mcpu": "native"}` is accepted but compiles
    for a generic x86-64 CPU, and 0.27 refuses target strings ("llvm -mcpu=..."): name the CPU."""
    return tvm.target.Target(
        {"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu(), "num-cores": 2})


def gemm_module(n):
    """C[i, j] = sum_k A[i, k] * B[k, j] as a TIR module with one function, "main"."""
    a = te.placeholder((n, n), "float32", name="A")
    b = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return tvm.IRModule({"main": te.create_prim_func([a, b, c])})


def describe():
    t = target()
    return {"tvm_version": tvm.__version__, "target": str(t), "threads": tvm.runtime.num_threads(),
            "vector_width_bits": int(codegen.llvm_get_vector_width(t))}


def read_lines(work_dir):
    """The database's records as JSON, in the order MetaSchedule committed them: one per trial,
    failures included (run time 1e10 s). Its JSON file, line by line; the database object's
    get_all_tuning_records() returns them sorted by run time instead."""
    with open(os.path.join(work_dir, "database_tuning_record.json")) as f:
        return [json.loads(line) for line in f if line.strip()]


def mean_seconds(run_secs):
    return sum(float(x) for x in run_secs) / len(run_secs) if run_secs else float("inf")


def read_records(work_dir):
    """The mean run seconds of every record, in trial order."""
    return [mean_seconds(line[1][1]) for line in read_lines(work_dir)]


def tune(n, trials, seed, work_dir):
    info = describe()
    print(f"MetaSchedule: TVM {info['tvm_version']}, target {info['target']}, "
          f"{info['threads']} threads, vector width {info['vector_width_bits']} bits", flush=True)
    marks = []  # after each measured batch: (trials so far, seconds since the start, profile)
    best = [float("inf")]  # the fastest mean run time so far

    @derived_object
    class Clock(ms.measure_callback.PyMeasureCallback):
        def apply(self, task_scheduler, task_id, candidates, builder_results, runner_results):
            profiler = ms.Profiler.current()
            profile = {k: float(v) for k, v in profiler.get().items()} if profiler else {}
            done = (marks[-1][0] if marks else 0) + len(candidates)
            marks.append((done, time.perf_counter() - start, profile))
            for r in runner_results:
                if r.error_msg is None and r.run_secs:
                    best[0] = min(best[0], sum(float(x) for x in r.run_secs) / len(r.run_secs))
            print(f"MetaSchedule: {done}/{trials} trials, best {2.0 * n ** 3 / best[0] / 1e9:.1f} "
                  f"GFLOP/s, {marks[-1][1]:.0f} s", flush=True)

    mod = gemm_module(n)
    start = time.perf_counter()  # the builder's and runner's start-up counts, as in tune_tir's
    # Each batch's builds run in a fresh pool of worker processes whose first build imports
    # tvm.s_tir.tensor_intrin: 15-30 s on 2 shared cores, counted against the builder's 30 s
    # limit per build, so that every build timed out. A limit of 120 s lets the import finish;
    # everything else is MetaSchedule's default builder (docs/perf/tune-gemm-cpu.md).
    builder = ms.builder.LocalBuilder(timeout_sec=BUILD_TIMEOUT_SECONDS)
    runner = ms.runner.LocalRunner(evaluator_config=ms.runner.EvaluatorConfig(
        number=3, repeat=1, min_repeat_ms=100, enable_cpu_cache_flush=False))
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [Clock()]
    with ms.Profiler() as profiler:
        ms.tune_tir(mod, target(), work_dir=work_dir, max_trials_global=trials,
                    num_trials_per_iter=64, builder=builder, runner=runner,
                    measure_callbacks=callbacks, seed=seed)
    wall = time.perf_counter() - start
    seconds = read_records(work_dir)
    if marks and marks[-1][0] != len(seconds):
        print(f"MetaSchedule: {marks[-1][0]} trials measured but {len(seconds)} records in the "
              "database", flush=True)
    flop = 2.0 * n ** 3
    return dict(info, tuner="metaschedule", n=n, seed=seed, wall_seconds=wall,
                gflops=[flop / s / 1e9 if s < FAILED_SECONDS else 0.0 for s in seconds],
                marks=[{"trials": t, "seconds": s, "split": split(p, s)} for t, s, p in marks],
                split=split({k: float(v) for k, v in profiler.get().items()}, wall),
                profile_table=str(profiler.table()))


def split(profile, total=None):
    """Search / build / run / train seconds from MetaSchedule's profiler scopes: search is every
    outermost `EvoSearch/...` scope (sampling, mutation, the cost model's predictions, picking),
    build `SendToBuilder` (the builder's workers started, the batch compiled and exported), run
    `SendToRunner` + `JoinRunnerFutures`, train `MeasureCallback/UpdateCostModel` (XGBoost);
    "other" is the rest of the wall time (design-space generation, the database, Python)."""
    def outermost(k):
        return not any(k != o and k.startswith(o + "/") for o in profile)

    out = {
        "search": sum(v for k, v in profile.items() if k.startswith("EvoSearch/") and outermost(k)),
        "build": profile.get("SendToBuilder", 0.0),
        "run": profile.get("SendToRunner", 0.0) + profile.get("JoinRunnerFutures", 0.0),
        "train": profile.get("MeasureCallback/UpdateCostModel", 0.0),
    }
    if total is not None:
        out["other"] = max(0.0, total - sum(out.values()))
    return out


def build_best(work_dir, n, trials):
    """The best error-free schedule among the first `trials` records of the database, built:
    (a function taking tvm tensors A, B, C, its record's index, its tuning-time seconds)."""
    t = target()
    lines = read_lines(work_dir)
    seconds = [mean_seconds(line[1][1]) for line in lines]
    first = seconds[:trials]
    best = min(range(len(first)), key=first.__getitem__)
    if first[best] >= FAILED_SECONDS:
        raise RuntimeError(f"{work_dir}: no successful record among the first {trials}")
    with open(os.path.join(work_dir, "database_workload.json")) as f:
        workloads = [ms.database.Workload.from_json(json.loads(w)) for w in f if w.strip()]
    workload = workloads[lines[best][0]]
    if not tvm_ffi.structural_equal(workload.mod, gemm_module(n)):
        raise RuntimeError(f"{work_dir}: the database's workload is not the {n}^3 GEMM")
    if trials >= len(lines):  # the best of all: MetaSchedule's own query must agree
        database = ms.database.JSONDatabase(work_dir=work_dir)
        top = database.query_tuning_record(workload.mod, t, "main")
        if top is None or abs(mean_seconds(top.run_secs) - first[best]) > 1e-9 * first[best]:
            raise RuntimeError(f"{work_dir}: the database's best is not record {best}")
    record = ms.database.TuningRecord.from_json(lines[best][1], workload)
    sch = tvm.s_tir.Schedule(workload.mod)
    record.trace.apply_to_schedule(sch, remove_postproc=False)
    func = tvm.compile(sch.mod, target=t)["main"]
    return func, best, first[best]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--trials", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    result = tune(a.n, a.trials, a.seed, a.work_dir)
    with open(a.out, "w") as f:
        json.dump(result, f)
    print(result["profile_table"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
