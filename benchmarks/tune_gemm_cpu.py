"""tune_gemm_cpu: tessel's tuner against TVM's MetaSchedule on the plain 1024^3 fp32 GEMM
(C = A @ B, row-major), both on 2 threads of this machine, in one run (issue 19).

    benchmarks/run.sh tune_gemm_cpu [--trials 64,256,1000] [--seeds 3]   # the figures
    benchmarks/run.sh tune_gemm_cpu --trials 64 --seeds 1                # quick (a few minutes)

For each seed, each tuner runs in a subprocess of its own (a crash costs its column, not the
run), tuning once up to max(trials); the other trial counts are read off that run's curve (a trial
is one distinct candidate sent to measurement, failures included, as MetaSchedule counts).
MetaSchedule: `tune_tir(max_trials_global=N, num_trials_per_iter=64)` for the host CPU
(support/metaschedule_gemm.py). tessel: `ts.auto_schedule.tune` with 64 measurements per round
(support/tessel_gemm.py), skipped, and said so, while tessel has no tuner. Both time candidates
with number=3, repeat=1, min_repeat_ms=100. Afterwards the best schedule of each tuner, seed and
trial count is re-timed in one process with one harness, interleaved with oneDNN and NumPy
(support/gemm_retime.py): checked first, then the median of >= 30 samples of >= 50 ms each.
Bars (on the medians over seeds): >= 1.0 x MetaSchedule at 64 and 256 trials, tuning wall time
<= MetaSchedule's for the same trials, >= 1.0 x oneDNN at 1000 trials; and the `final@<trials>`
line: tessel's best re-timed here against the figure tune() printed for it (the best timed again
at the end of the tuning), within 5 %.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORT = os.path.join(HERE, "support")
ROOT = os.path.dirname(HERE)
THREADS = "2"
TUNERS = ("metaschedule", "tessel")
NAMES = {"metaschedule": "MetaSchedule", "tessel": "tessel"}


def environment():
    """2 threads for every library; the libraries' idle threads wait passively between runs (as
    in gemm_cpu). Set for the subprocesses, before any of them imports a library."""
    env = dict(os.environ)
    env.update(TVM_NUM_THREADS=THREADS, TESSEL_NUM_THREADS=THREADS, OMP_NUM_THREADS=THREADS,
               OPENBLAS_NUM_THREADS=THREADS, OMP_WAIT_POLICY="passive",
               OPENBLAS_THREAD_TIMEOUT="4", PYTHONUNBUFFERED="1")
    return env


def run_logged(cmd, log_path, echo):
    """Runs cmd, writing its output to log_path and echoing the lines `echo` accepts; returns
    the exit status."""
    with open(log_path, "w") as log:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=environment(), cwd=ROOT)
        for line in p.stdout:
            log.write(line)
            log.flush()  # for tail -f
            if echo(line):
                print("   " + line.rstrip(), flush=True)
        return p.wait()


def tail(path, lines=15):
    with open(path) as f:
        return "".join(f.readlines()[-lines:])


def tune(tuner, n, trials, seed, work):
    """Runs one tuner for one seed in a subprocess; its result (a dict) or None."""
    out = os.path.join(work, f"{tuner}_seed{seed}.json")
    log = os.path.join(work, f"{tuner}_seed{seed}.log")
    if tuner == "metaschedule":
        source = os.path.join(work, f"metaschedule_seed{seed}")
        os.makedirs(source, exist_ok=True)
        args = ["--work-dir", source]
        echo = lambda line: line.startswith("MetaSchedule")  # noqa: E731 (its log is long)
    else:
        source = os.path.join(work, f"tessel_seed{seed}.jsonl")
        args = ["--log", source]
        echo = lambda line: True  # noqa: E731
    print(f"== {NAMES[tuner]}, seed {seed}: tuning {trials} trials (output: {log})", flush=True)
    cmd = [sys.executable, os.path.join(SUPPORT, f"{tuner}_gemm.py"), "--n", str(n),
           "--trials", str(trials), "--seed", str(seed), "--out", out] + args
    status = run_logged(cmd, log, echo)
    if status != 0 or not os.path.exists(out):
        print(f"   {NAMES[tuner]} failed (exit status {status}); the end of its output:\n"
              + tail(log), flush=True)
        return None
    with open(out) as f:
        result = json.load(f)
    result["source"] = source
    return result


# --- tuning curves

def best_so_far(gflops):
    curve, best = [], 0.0
    for g in gflops:
        best = max(best, g)
        curve.append(best)
    return curve


def best_curve(result):
    """The best GFLOP/s after each trial: the tuner's own judgement where it gives one (tessel's
    `best_gflops`: a schedule costs the median of its measurements), else the running maximum."""
    return result.get("best_gflops") or best_so_far(result["gflops"])


def at_trials(result, trials):
    """(best GFLOP/s, wall seconds, time split) once `trials` trials were measured."""
    curve = best_curve(result)
    if not curve:
        return None
    marks = result["marks"] or [{"seconds": result["wall_seconds"], "split": result["split"]}]
    mark = next((m for m in marks if m.get("trials", 0) >= trials), marks[-1])
    return curve[min(trials, len(curve)) - 1], mark["seconds"], mark["split"]


def trial_reaching(result, share=0.95):
    curve = best_curve(result)
    return next((i + 1 for i, g in enumerate(curve) if g >= share * curve[-1]), None)


def curve_points(result, step=64):
    curve = best_curve(result)
    points = list(range(step, len(curve) + 1, step))
    if not points or points[-1] != len(curve):
        points.append(len(curve))
    return " ".join(f"{t}:{curve[t - 1]:.1f}" for t in points)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(x, spec=".1f"):
    return "n/a" if x is None else format(x, spec)


# --- the run

def retime(n, results, trial_list, work, samples):
    kernels = []
    for (tuner, seed), r in sorted(results.items()):
        if r and r.get("available", True):
            for t in trial_list:
                kernels.append({"label": f"{tuner} seed={seed} trials={t}", "tuner": tuner,
                                "source": r["source"], "trials": t})
    spec_path, out_path = os.path.join(work, "retime_spec.json"), os.path.join(work, "retime.json")
    with open(spec_path, "w") as f:
        json.dump({"n": n, "samples": samples, "sample_seconds": 0.05, "kernels": kernels}, f)
    log = os.path.join(work, "retime.log")
    print(f"== re-timing the bests with oneDNN and NumPy in one process (output: {log})",
          flush=True)
    status = run_logged([sys.executable, os.path.join(SUPPORT, "gemm_retime.py"), spec_path,
                         out_path], log, lambda line: True)
    if status != 0:
        print(f"   re-timing failed (exit status {status}):\n" + tail(log), flush=True)
        return None
    with open(out_path) as f:
        return json.load(f)


def seeds_with_results(results, seeds):
    """{tuner: [seeds with a result]}; says why a tuner has none."""
    have = {}
    for t in TUNERS:
        have[t] = [s for s in range(1, seeds + 1)
                   if results.get((t, s)) and results[(t, s)].get("available", True)]
        if not have[t]:
            why = next((r.get("reason") for (u, _), r in results.items() if u == t and r), None)
            print(f"{NAMES[t]}: no results ({why or 'every run failed'})")
    return have


def split_text(splits):
    keys = list(splits[0]) if splits else []
    return ", ".join(f"{k} {fmt(median([sp.get(k) for sp in splits]), '.0f')} s" for k in keys)


def print_curves(results, have):
    print("\n== tuning curves (the tuners' own measurements: best GFLOP/s so far, every 64 trials)")
    for t in TUNERS:
        for s in have[t]:
            print(f"curve {NAMES[t]} seed={s}: {curve_points(results[(t, s)])}")
    for t in TUNERS:
        if not have[t]:
            continue
        r0 = results[(t, have[t][0])]
        if t == "metaschedule":
            print(f"MetaSchedule: TVM {r0['tvm_version']}, target {r0['target']}, "
                  f"{r0['threads']} threads, vector width {r0['vector_width_bits']} bits")
        reach = [trial_reaching(results[(t, s)]) for s in have[t]]
        per_seed = " ".join(fmt(x, "d") for x in reach)
        print(f"{NAMES[t]}: 95% of its final speed first reached at trial "
              f"{fmt(median(reach), '.0f')} (median; seeds: {per_seed})")
        walls = [results[(t, s)]["wall_seconds"] for s in have[t]]
        print(f"{NAMES[t]}: whole run {fmt(median(walls), '.0f')} s (median): "
              + split_text([results[(t, s)]["split"] for s in have[t]]))


def print_counts(results, timed, trial_list, have):
    """The figures at each trial count; returns {(tuner, trials): (re-timed GFLOP/s, wall s)}."""
    print("\n== at each trial count (median over seeds; per seed in brackets)")
    rows = {}
    for trials in trial_list:
        for t in TUNERS:
            pts = [at_trials(results[(t, s)], trials) for s in have[t]]
            pts = [p for p in pts if p]
            tuned, wall = [p[0] for p in pts], [p[1] for p in pts]
            retimed = [timed["kernels"].get(f"{t} seed={s} trials={trials}", {}).get("gflops")
                       if timed else None for s in have[t]]
            rows[(t, trials)] = (median(retimed), median(wall))
            print(f"trials={trials} {NAMES[t]}: re-timed {fmt(median(retimed))} GFLOP/s "
                  f"[{' '.join(fmt(x) for x in retimed)}], while tuning {fmt(median(tuned))} "
                  f"[{' '.join(fmt(x) for x in tuned)}], tuning wall time "
                  f"{fmt(median(wall), '.0f')} s [{' '.join(fmt(x, '.0f') for x in wall)}]")
            if pts:
                print("   split (median): " + split_text([p[2] for p in pts]))
    return rows


def print_references(timed, rows, trial_list):
    refs = {k: timed["kernels"][k]["gflops"] for k in ("onednn", "numpy")} if timed else {}
    if refs:
        print(f"references, re-timed: oneDNN {refs['onednn']:.1f} GFLOP/s, "
              f"NumPy {refs['numpy']:.1f} GFLOP/s")
        for trials in trial_list:
            ms = rows[("metaschedule", trials)][0]
            if ms:
                print(f"trials={trials} MetaSchedule / oneDNN = {ms / refs['onednn']:.3f}, "
                      f"/ NumPy = {ms / refs['numpy']:.3f}")
    return refs


def ratio(x, y):
    return fmt(x / y if x and y else None, ".3f")


def print_bench(rows, refs, trial_list):
    print()
    for trials in trial_list:
        (x, wx), (y, wy) = rows[("tessel", trials)], rows[("metaschedule", trials)]
        print(f"BENCH tune_gemm_cpu trials={trials} tessel={fmt(x)} metaschedule={fmt(y)} "
              f"ratio={ratio(x, y)}")
        print(f"BENCH tune_gemm_cpu tuning_seconds@{trials} tessel={fmt(wx, '.0f')} "
              f"metaschedule={fmt(wy, '.0f')} ratio={ratio(wx, wy)}")
    last = max(trial_list)
    x, d = rows[("tessel", last)][0], refs.get("onednn")
    print(f"BENCH tune_gemm_cpu trials={last} tessel={fmt(x)} onednn={fmt(d)} ratio={ratio(x, d)}")


def print_final(results, rows, trial_list, have):
    """tessel's best in the final check of its tuning (the figure tune() prints first)
    against the re-timing of that best here (issue 61, item 6: within 5 %)."""
    last = max(trial_list)
    finals = [results[("tessel", s)].get("final_gflops") for s in have["tessel"]]
    if finals and all(finals):
        x = rows[("tessel", last)][0]
        print(f"BENCH tune_gemm_cpu final@{last} tessel={fmt(x)} final={fmt(median(finals))} "
              f"ratio={ratio(x, median(finals))}")


def report(results, timed, trial_list, seeds):
    have = seeds_with_results(results, seeds)
    print_curves(results, have)
    rows = print_counts(results, timed, trial_list, have)
    refs = print_references(timed, rows, trial_list)
    print_bench(rows, refs, trial_list)
    print_final(results, rows, trial_list, have)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", default="64,256,1000",
                   help="trial counts, comma-separated (one tuning run per seed, to the largest)")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--samples", type=int, default=30, help="re-timing samples (>= 30 for figures)")
    p.add_argument("--work-dir", help="where the databases, logs and results go (default: "
                   "build/bench/tune_gemm_cpu/<date-time>)")
    p.add_argument("--report", metavar="DIR",
                   help="print the report of an earlier run from DIR/summary.json (no tuning)")
    a = p.parse_args()
    if a.report:
        with open(os.path.join(a.report, "summary.json")) as f:
            summary = json.load(f)
        results = {(key.split()[0], int(key.split("=")[1])): r
                   for key, r in summary["tuning"].items()}
        report(results, summary["retimed"], summary["trials"], summary["seeds"])
        return 0
    trial_list = sorted({int(x) for x in a.trials.split(",")})
    if trial_list[0] < 1 or a.seeds < 1:
        p.error("--trials needs positive counts and --seeds at least 1")
    build = os.environ.get("TESSEL_BENCH_BUILD_DIR", "build/bench")
    work = os.path.abspath(a.work_dir or os.path.join(
        ROOT, build, "tune_gemm_cpu", time.strftime("%Y%m%d-%H%M%S")))
    os.makedirs(work, exist_ok=True)
    print(f"tune_gemm_cpu: n={a.n}, trials {trial_list} (tuned to {trial_list[-1]}), {a.seeds} "
          f"seed(s), {THREADS} threads; results in {work}", flush=True)
    results = {}
    for seed in range(1, a.seeds + 1):
        order = TUNERS if seed % 2 else TUNERS[::-1]  # neither tuner always runs first
        for tuner in order:
            results[(tuner, seed)] = tune(tuner, a.n, trial_list[-1], seed, work)
    timed = None
    if any(r and r.get("available", True) for r in results.values()):
        timed = retime(a.n, results, trial_list, work, a.samples)
    with open(os.path.join(work, "summary.json"), "w") as f:
        json.dump({"trials": trial_list, "seeds": a.seeds, "retimed": timed,
                   "tuning": {f"{t} seed={s}": r for (t, s), r in results.items()}}, f)
    report(results, timed, trial_list, a.seeds)
    return 0 if timed else 1


if __name__ == "__main__":
    sys.exit(main())
