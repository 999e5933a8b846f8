"""What the tuner reports against what a user gets (issue 61, item 6): the best 1024^3 fp32 GEMM
of a tuning log (`op.matmul`, `llvm -num-cores=2`; the log is made first with the tuner, 256
trials, when --log names no file), re-timed in fresh processes the way a user calls it: built
from the log with `ts.apply_history_best`, numpy arrays, 2 threads, and either

  loop          calls back to back, each sample as many calls as fill 50 ms (30 samples; then
                200 calls each timed alone, whose median and 10th percentile are printed
                beside the process's figure: how the calls spread inside a sample), or
  intermittent  one call after a 20 ms pause (30 samples): a program that calls now and then,
                whose pool workers have gone to sleep between its calls (docs/runtime.md),

each with the pool's workers pinned (TESSEL_PIN_THREADS=1, the default) and unpinned (0), the
processes of the four settings alternating, --processes rounds of them. A process's figure is the
median of its samples; a setting's, the median of its processes'. Prints each process's figure,
then
  BENCH user_calls_cpu <setting> tessel=<GFLOP/s> tuner=<the tuner's GFLOP/s> ratio=<x/tuner>
(the tuner's figure: the median of its measurements of the schedule, ts.ScheduleCosts), and
where the tuning was made here, `<setting>,vs_final` lines against the figure tune() prints
first: the best's median in the tuning's final check (TuningResult.final_gflops). With
--seeds S1 S2 ..., one log per seed (tuned with that seed), each re-timed as above; the BENCH line
then gives the median over the seeds of the re-timed figure and of the ratio (the issue's bar: the
median of 3 seeds within 5 %), after a line per seed.
Usage: benchmarks/run.sh user_calls_cpu [--log LOG] [--processes N] [--seeds S ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "support"))
N, TRIALS = 1024, 256
FLOP = 2.0 * N ** 3


def one_process(log, mode):
    """Runs in the child: builds the best, checks it, times it; prints one JSON line."""
    import numpy as np

    import tessel_gemm

    if mode == "remeasure":
        records, best, seconds, _ = tessel_gemm.best_record(log, TRIALS)
        return remeasure(tessel_gemm, records[best], seconds)
    func, _, seconds = tessel_gemm.build_best(log, N, TRIALS)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (N, N)).astype("float32")
    b = rng.uniform(-1, 1, (N, N)).astype("float32")
    c = np.zeros((N, N), "float32")
    func(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    samples = []
    for _ in range(30):
        if mode == "loop":
            start, calls = time.perf_counter(), 0
            while time.perf_counter() - start < 0.05:
                func(a, b, c)
                calls += 1
            samples.append((time.perf_counter() - start) / calls)
        else:
            time.sleep(0.02)
            start = time.perf_counter()
            func(a, b, c)
            samples.append(time.perf_counter() - start)
    result = {"gflops": FLOP / statistics.median(samples) / 1e9, "tuner": FLOP / seconds / 1e9}
    if mode == "loop":
        # Each of 200 calls timed alone, back to back: how the calls spread inside the samples
        # (a virtual machine's slow stretches pull a sample's mean down, the median call less).
        calls = []
        for _ in range(200):
            start = time.perf_counter()
            func(a, b, c)
            calls.append(FLOP / (time.perf_counter() - start) / 1e9)
        calls.sort()
        result["per_call"] = {"p10": calls[20], "p50": statistics.median(calls)}
    print(json.dumps(result))


def remeasure(tessel_gemm, record, seconds, times=5):
    """The tuner's measurement of its best schedule again, now: its record replayed on the task
    and measured `times` times by a ts.Measurer (the tuner's worker process and options; each
    measurement one repeat of at least 100 ms); the median, as the tuner judges a schedule."""
    import tessel as ts

    task = tessel_gemm.task(N)
    measurer = ts.Measurer()
    costs = []
    for _ in range(times):
        r = measurer.measure(task, [task.apply_record(record.schedule_json)])[0]
        if not r.ok:
            sys.exit(f"the re-measurement failed: {r}")
        costs.extend(r.costs)
    print(json.dumps({"gflops": FLOP / statistics.median(costs) / 1e9, "tuner": FLOP / seconds / 1e9}))


def tuned_log(log, seed):
    """Tunes op.matmul into `log` with `seed` unless the log exists."""
    if os.path.exists(log):
        return
    os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
    print(f"tuning op.matmul {N}^3 for {TRIALS} trials (seed {seed}) into {log}", flush=True)
    subprocess.run([sys.executable, os.path.join(HERE, "support", "tessel_gemm.py"), "--n",
                    str(N), "--trials", str(TRIALS), "--seed", str(seed), "--log", log, "--out",
                    log + ".result.json"], check=True, stdout=subprocess.DEVNULL)


def final_figure(log):
    """The tune() result's final_gflops for the log (tuned_log's result file), or None."""
    try:
        with open(log + ".result.json") as f:
            return json.load(f).get("final_gflops") or None
    except (OSError, ValueError):
        return None


def retime(log, processes):
    """The four settings' processes, alternating: ({setting: [GFLOP/s per process]}, tuner)."""
    settings = [("remeasure", "1")]
    settings += [(mode, pin) for mode in ("loop", "intermittent") for pin in ("1", "0")]
    figures = {s: [] for s in settings}
    tuner = None
    for r in range(processes):
        for mode, pin in settings:
            env = dict(os.environ, TESSEL_PIN_THREADS=pin)
            out = subprocess.run([sys.executable, __file__, "--child", log, mode], env=env,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{mode} pin={pin}: {out.stderr}")
            result = json.loads(out.stdout.strip().splitlines()[-1])
            tuner = result["tuner"]
            figures[(mode, pin)].append(result["gflops"])
            spread = ""
            if "per_call" in result:
                spread = (f" (its calls one by one: median {result['per_call']['p50']:.1f}, "
                          f"10th percentile {result['per_call']['p10']:.1f})")
            print(f"round {r}: {mode:12s} pinned={pin}: {result['gflops']:.1f} GFLOP/s{spread}",
                  flush=True)
    return figures, tuner


def setting_name(mode, pin):
    return "remeasured" if mode == "remeasure" else f"{mode},{'pinned' if pin == '1' else 'unpinned'}"


def bench_lines(per_log, suffix=""):
    """BENCH lines from {setting: [(re-timed, the log's figure, the interleaved re-measurement,
    the figure tune() printed first or None) per log]}: the medians over the logs of the figures
    and of each ratio (with one log, its own); each setting against the log's figure, then the
    user's settings against the re-measurement made in the same minutes (the machine's drift
    between the tuning and the re-timing cancels there), then each setting against the best
    in the tuning's final check (where every log has that figure)."""
    def median(values):
        return statistics.median(list(values))

    # (line suffix, the compared figure's index in a run and its name, whether a setting has it)
    comparisons = [("", 1, "tuner", lambda setting, runs: True),
                   (",vs_remeasured", 2, "remeasured",
                    lambda setting, runs: setting[0] != "remeasure"),
                   (",vs_final", 3, "final", lambda setting, runs: all(r[3] for r in runs))]
    for label, i, name, applies in comparisons:
        for setting, runs in per_log.items():
            if applies(setting, runs):
                print(f"BENCH user_calls_cpu {setting_name(*setting)}{label}{suffix} "
                      f"tessel={median(r[0] for r in runs):.1f} "
                      f"{name}={median(r[i] for r in runs):.1f} "
                      f"ratio={median(r[0] / r[i] for r in runs):.3f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log", default=os.path.join("build", "bench", "user_calls", "matmul1024.jsonl"))
    p.add_argument("--processes", type=int, default=5)
    p.add_argument("--seeds", type=int, nargs="+",
                   help="tune one log per seed (LOG with _s<seed> before .jsonl) and re-time each")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args()
    os.environ["TESSEL_NUM_THREADS"] = "2"
    if a.child:
        return one_process(*a.child)
    if not a.seeds:
        tuned_log(a.log, 1)
        figures, tuner = retime(a.log, a.processes)
        final = final_figure(a.log)
        print(f"the tuner's figure for the best schedule: {tuner:.1f} GFLOP/s in the log, "
              f"{final or 0:.1f} in the final check")
        now = statistics.median(figures[("remeasure", "1")])
        bench_lines({s: [(statistics.median(v), tuner, now, final)] for s, v in figures.items()})
        return
    stem = a.log[:-len(".jsonl")] if a.log.endswith(".jsonl") else a.log
    per_seed = {}  # setting -> [(re-timed, tuner, re-measured, final) per seed]
    for seed in a.seeds:
        log = f"{stem}_s{seed}.jsonl"
        tuned_log(log, seed)
        figures, tuner = retime(log, a.processes)
        final = final_figure(log)
        now = statistics.median(figures[("remeasure", "1")])
        for setting, values in figures.items():
            x = statistics.median(values)
            per_seed.setdefault(setting, []).append((x, tuner, now, final))
            print(f"seed {seed}: {setting_name(*setting)}: {x:.1f} GFLOP/s, the tuner's {tuner:.1f}, "
                  f"ratio {x / tuner:.3f}; re-measured {now:.1f}, ratio {x / now:.3f}; timed "
                  f"again at the end {final or 0:.1f}", flush=True)
    bench_lines(per_seed, f",seeds={len(a.seeds)}")


if __name__ == "__main__":
    main()
