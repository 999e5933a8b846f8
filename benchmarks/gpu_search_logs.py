"""gpu_search_logs: what the logs of `tune_gemm_cuda` (fp32 GEMM, 4096^3 by default) say
about the GPU search, read on a machine without a GPU (docs/perf/gpu-gemm-search.md).

    python3 benchmarks/gpu_search_logs.py classes LOG...
        the measured states by structure (pipelining, A's layout, block tile, threads, vthreads,
        per-thread tile, k tile): per class the best TFLOP/s, how many were measured and when
    python3 benchmarks/gpu_search_logs.py crossrun LOG...
        tessel's CostModel trained on one log (on rounds 0..r, as its run had them) and scored on
        every other log's states: does what one run learned rank another run's fastest states?
    python3 benchmarks/gpu_search_logs.py compile [-jJOBS] N|all LOG...
        compiles the 10 fastest and N random (or all) measured states of each log with NVRTC and
        ptxas on JOBS processes (no GPU needed; cuobjdump on PATH or in $CUOBJDUMP) and caches per
        state the registers, spills and SASS instruction counts (resumable)
    python3 benchmarks/gpu_search_logs.py codecols LOG...
        pack-sum boosters (cost_model_diagnosis's: Python's xgboost, tessel's objective) trained
        on all logs but one and tested on that one, with Ansor's columns, with the compiled
        code's columns added, and with the code's columns alone (the states `compile` has done)

benchmarks/gpu_search_diagnosis.cpp is the other half: it scores step 6 itself, its mutants and
one search round under one log's model. A log may be gzipped (benchmarks/logs/*.jsonl.gz).
Ansor's feature rows and the code columns are computed once per log and kept in
build/gpu_search_logs/.
TESSEL_TUNE_GEMM_N names another size, as for tune_gemm_cuda.
"""
import collections
import gzip
import json
import math
import os
import pickle
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import tessel as ts

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost_model_diagnosis  # noqa: E402 (its pack-sum booster, tessel's objective)

A = ts.auto_schedule
N = int(os.environ.get("TESSEL_TUNE_GEMM_N", "4096"))
TARGET = "cuda -arch=sm_90"
TASK = ts.SearchTask("op.matmul", [N, N, N, 0, 0, "float32"], target=TARGET)
CODE_KEYS = ["regs", "spill", "total", "ffma", "lds", "lds128", "ldg", "sts", "ldgsts", "bar",
             "intops", "bra"]


def trials(log):
    """The log's trials (re-measurements left out), in order, as parsed records (a .gz log is
    read through gzip)."""
    with (gzip.open(log, "rt") if log.endswith(".gz") else open(log)) as f:
        rows = [json.loads(line) for line in f]
    return [r for r in rows if r.get("provenance", {}).get("origin") not in ("remeasure", "check")]


def seconds(r):
    return statistics.median(r["result"]["costs"]) if r["result"]["error_code"] == "none" else None


def tflops(s):
    return 2.0 * N**3 / s / 1e12


def structure(steps):
    """(pipelining, A's layout, block tile, threads, vthreads, per-thread tile, k tile) of a GEMM
    state of the GPU sketch: its output stage's ten tile splits (two of k, four each of j, i,
    innermost first), or None for another sketch."""
    sp = [s for s in steps if s["kind"] == "split" and s["stage"] == 2][:10]
    by = {it: [s["factor"] for s in sp if s["iter"] == it] for it in (0, 1, 2)}
    if len(by[2]) != 2 or len(by[1]) != 4 or len(by[0]) != 4:
        return None
    i, j, k = by[0], by[1], by[2]
    pipe = "none"
    for s in steps:
        if s["kind"] == "double_buffer":
            pipe = "double_buffer"
        if s["kind"] == "pipeline":
            pipe = f"pipeline({s['depth']})"
    layout = "transposed" if any(s["kind"] == "storage_reorder" for s in steps) else "kept"
    return (pipe, layout, (math.prod(i), math.prod(j)), i[2] * j[2], i[3] * j[3],
            (i[0] * i[1], j[0] * j[1]), k[0] * k[1])


def classes(logs):
    for log in logs:
        best, count, first = {}, collections.Counter(), {}
        rows = trials(log)
        for n, r in enumerate(rows, 1):
            c = structure(r["schedule"]["steps"])
            s = seconds(r)
            if c is None or s is None:
                continue
            key = c[:4]
            count[key] += 1
            first.setdefault(key, n)
            if s < best.get(key, (math.inf,))[0]:
                best[key] = (s, c, n)
        print(f"{log}: {len(rows)} trials")
        for key, (s, c, n) in sorted(best.items(), key=lambda kv: kv[1][0])[:12]:
            print(f"  {tflops(s):5.1f} TFLOP/s  {count[key]:4d} measured, first at {first[key]:4d},"
                  f" best at {n:4d}: {c}")


def cache_path(log, kind):
    """Where a log's computed columns are kept: build/gpu_search_logs/<log's name>.<kind>.pkl."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                          "gpu_search_logs")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"{os.path.basename(log)}.{kind}.pkl")


def ansor_rows(log):
    """[(round, feature rows, costs or [])] per trial, cached (cache_path)."""
    cache = cache_path(log, "features")
    if os.path.exists(cache):
        with open(cache, "rb") as f:
            return pickle.load(f)
    out = []
    for r in trials(log):
        _, feat = A.features(TASK.apply_record(json.dumps(r["schedule"])), TASK)
        ok = r["result"]["error_code"] == "none"
        costs = r["result"]["costs"] if ok else []
        out.append((r["provenance"].get("round"), np.array(feat), costs))
    with open(cache, "wb") as f:
        pickle.dump(out, f)
    return out


def programs(recs):
    return [A.MeasuredProgram(TASK.key, f, costs=c, error=0 if c else 1) for _, f, c in recs]


def crossrun(logs):
    runs = {log: ansor_rows(log) for log in logs}
    for train_log, train in runs.items():
        rounds = sorted({r for r, _, _ in train if r is not None})
        for test_log, test_all in runs.items():
            if test_log == train_log:
                continue
            test = [x for x in test_all if x[2]]
            costs = np.array([statistics.median(c) for _, _, c in test])
            fastest = np.argsort(costs)[:10]
            print(f"train {train_log}, test {test_log} ({len(test)} states, best "
                  f"{tflops(costs.min()):.1f} TFLOP/s)")
            for r in rounds[::3] + ([rounds[-1]] if (len(rounds) - 1) % 3 else []):
                cm = A.CostModel(seed=1, nthread=2)
                cm.train(programs([x for x in train if x[0] is not None and x[0] <= r]))
                scores = cm.predict(programs(test))
                rank = np.empty(len(scores), int)
                rank[np.argsort(-np.asarray(scores))] = np.arange(len(scores))
                q = A.ranking_quality(programs(test), scores)
                print(f"  rounds 0..{r}: pairwise {q.pairwise_accuracy:.3f} recall@30 "
                      f"{q.recall_at_k:.3f}; ranks of the test's 10 fastest "
                      f"{[int(rank[i]) for i in fastest]}", flush=True)


def code_columns(schedule_json, cuobjdump):
    """Registers, spill bytes and SASS instruction counts of one state's kernel."""
    m = ts.build(TASK.apply_record(schedule_json), list(TASK.dag.args), target=TARGET)
    log = m.get_source("nvrtc_log")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.ptx"), "w") as f:
            f.write(m.get_source("ptx"))
        subprocess.run(["ptxas", "-arch=sm_90", "-O3", "k.ptx", "-o", "k.cubin"], cwd=d, check=True)
        sass = subprocess.run([cuobjdump, "-sass", os.path.join(d, "k.cubin")], check=True,
                              capture_output=True, text=True).stdout
    ops = collections.Counter(
        re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass))

    def count(*prefixes):
        return sum(v for op, v in ops.items() if op.startswith(prefixes))

    return dict(regs=int(re.search(r"Used (\d+) registers", log).group(1)),
                spill=sum(int(x) for x in re.findall(r"(\d+) bytes spill", log)),
                total=sum(ops.values()), ffma=ops["FFMA"], lds=count("LDS"),
                lds128=count("LDS.128"), ldg=count("LDG."), sts=count("STS"),
                ldgsts=count("LDGSTS"), bar=count("BAR"),
                intops=count("IADD3", "IMAD", "LEA", "SHF", "LOP3", "ISETP"), bra=count("BRA"))


def compile_one(schedule_json):
    """code_columns of one state in a worker process, or the error's text."""
    cuobjdump = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    try:
        return code_columns(schedule_json, cuobjdump)
    except (RuntimeError, subprocess.CalledProcessError, AttributeError) as e:
        return str(e)


def compile_states(n, logs, jobs=1):
    """Compiles the 10 fastest and n random (all: n < 0) measured states of each log on `jobs`
    processes, saving each log's cache every 50 states (resumable)."""
    import concurrent.futures
    import multiprocessing
    cuobjdump = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not cuobjdump or not shutil.which("ptxas"):
        sys.exit("compile needs ptxas and cuobjdump (PyPI: nvidia-cuda-cuobjdump) on PATH")
    work, caches = [], {}
    for log in logs:
        cache = cache_path(log, "code")
        done = {}
        if os.path.exists(cache):
            with open(cache, "rb") as f:
                done = pickle.load(f)
        caches[log] = (cache, done)
        rows = trials(log)
        ok = [i for i, r in enumerate(rows) if seconds(r) is not None]
        pick = sorted(ok, key=lambda i: seconds(rows[i]))[:10]
        pick += ok if n < 0 else random.Random(1).sample(ok, min(n, len(ok)))
        pick = list(dict.fromkeys(i for i in pick if i not in done))
        work.append([(log, i, json.dumps(rows[i]["schedule"])) for i in pick])
    # A state of each log in turn, so that stopping at any time leaves every log sampled.
    order = [w[k] for k in range(max(map(len, work), default=0)) for w in work if k < len(w)]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        futures = {pool.submit(compile_one, j): (log, i) for log, i, j in order}
        for count, f in enumerate(concurrent.futures.as_completed(futures), 1):
            log, i = futures[f]
            cols = f.result()
            if isinstance(cols, str):
                print(f"{log}: trial {i}: {cols}", flush=True)
                cols = None
            caches[log][1][i] = cols
            if count % 50 == 0 or count == len(futures):
                for cache, done in caches.values():
                    with open(cache, "wb") as out:
                        pickle.dump(done, out)
    for log, (_, done) in caches.items():
        print(f"{log}: {sum(1 for v in done.values() if v)} states compiled")


def code_row(d):
    v = [float(d[k]) for k in CODE_KEYS]
    v += [d["ffma"] / max(d["total"], 1), d["lds"] / max(d["ffma"], 1),
          d["intops"] / max(d["ffma"], 1), math.floor(65536 / max(d["regs"], 1) / 32)]
    return np.log2(1 + np.asarray(v, np.float32))


def with_columns(recs, mode):
    """The records as cost_model_diagnosis takes them, (round, rows, costs), with the columns of
    `mode`: Ansor's, Ansor's and the code's on every row, or the code's alone (one row)."""
    out = []
    for f, c, code in recs:
        f = np.asarray(f, np.float32)
        code_rows = np.tile(code, (len(f), 1))
        rows = {"ansor": f, "ansor+code": np.hstack([f, code_rows]), "code": code_rows[:1]}[mode]
        out.append((None, rows, c))
    return out


def codecols(logs):
    import xgboost as xgb
    runs = {}
    for log in logs:
        with open(cache_path(log, "code"), "rb") as f:
            code = pickle.load(f)
        runs[log] = [(f, c, code_row(code[i])) for i, (_, f, c) in enumerate(ansor_rows(log))
                     if c and code.get(i)]
    print("states with code columns:", {log: len(r) for log, r in runs.items()})
    for test_log, test in runs.items():
        train = sum((r for log, r in runs.items() if log != test_log), [])
        c = np.array([statistics.median(c) for _, c, _ in test])
        differ = c[:, None] != c[None, :]
        for mode in ("ansor", "ansor+code", "code"):
            booster = cost_model_diagnosis.pack_sum(with_columns(train, mode))
            x, g = cost_model_diagnosis.rows_of(with_columns(test, mode))
            s = np.bincount(g, weights=booster.predict(xgb.DMatrix(x)), minlength=len(test))
            pairwise = np.mean(((s[:, None] > s[None, :]) == (c[:, None] < c[None, :]))[differ])
            rank = np.empty(len(s), int)
            rank[np.argsort(-s)] = np.arange(len(s))
            fastest = np.argsort(c)[:10]
            recall = len(set(fastest) & set(np.argsort(-s)[:10])) / 10
            ranks = sorted(int(rank[i]) for i in fastest)
            print(f"test {test_log} {mode:10s}: pairwise {pairwise:.3f} recall@10 {recall:.2f}; "
                  f"ranks of its 10 fastest (of {len(test)}): {ranks}", flush=True)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("classes", "crossrun", "compile", "codecols"):
        sys.exit(__doc__)
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "compile":
        jobs = 1
        if args[0].startswith("-j"):
            jobs, args = int(args[0][2:]), args[1:]
        compile_states(-1 if args[0] == "all" else int(args[0]), args[1:], jobs)
    else:
        {"classes": classes, "crossrun": crossrun, "codecols": codecols}[mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
