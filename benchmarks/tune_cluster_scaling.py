"""tune_cluster_scaling: how tessel-tune's measurement scales over the nodes of a Ray cluster
(docs/distributed.md), on one machine.

A local cluster (ray.cluster_utils.Cluster: a head without devices and N nodes of one CPU each)
measures a job with the simulated worker: every candidate takes a simulated device time
(--simulate-ms, 500 by default) and costs a time derived from its steps, so the records of every
run are the same and only the farm's size changes. Printed per node count:
- the farm's measurement throughput: candidates measured per second of measurement (the driver's
  time from a request to its reply, build and dispatch included), against one node's;
- the whole job's speedup: trials per second of the tessel-tune run, against one node's: the
  search and the cost model run on the daemon between rounds, so the job gains less as the farm
  grows (the daemon's own work becomes the limit);
- the same job with search_ahead (--search-ahead true: round N+1 searched while round N
  measures on the nodes): its trials per second and speedup against one node's with
  search_ahead. Its records are those of a one-node search-ahead run (not of the run without:
  each round is searched without the round before it).

Checks first that every run wrote the records of the one-node run (timestamps aside).
Bar (issue 60): 4 nodes measure >= 3.5 x one node's throughput.

--builds: each candidate is also built for real (measure.simulate_builds), and each node count
runs with each place of the builds (--cluster-build nodes, daemon, auto): the job's time and
the farm's throughput against "nodes" (each node builds what it times, before timing it).

    benchmarks/run.sh tune_cluster_scaling [--nodes 1 2 4] [--trials 64] [--simulate-ms 500]
                                           [--no-search-ahead] [--builds]
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("RAY_AUTH_MODE", "token")  # as every cluster should (before Ray's import)
if os.environ["RAY_AUTH_MODE"] == "token":
    os.environ.setdefault("RAY_AUTH_TOKEN", os.urandom(24).hex())

import tessel as ts  # noqa: E402
from tessel.distributed import target_resource  # noqa: E402

TARGET = "llvm -num-cores=2"


def records(log_dir):
    out = []
    for f in sorted(pathlib.Path(log_dir).glob("*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            del r["result"]["timestamp"]
            out.append(r)
    return out


def write_job(path, trials, per_round, simulate_ms, population, builds=False):
    a, b = ts.placeholder((128, 128), name="a"), ts.placeholder((128, 128), name="b")
    ts.auto_schedule.extract_tasks(lambda x, y: ts.op.matmul(x, y), a, b, job=str(path),
                                   target=TARGET, trials=trials, measurements_per_round=per_round,
                                   search={"population": population, "generations": 2,
                                           "min_programs": per_round},
                                   measure={"simulate_ms": simulate_ms,
                                            "simulate_builds": builds})


def run_on(nodes, job, logs, tool, build="auto", extra=()):
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        for _ in range(nodes):
            cluster.add_node(num_cpus=1, resources={target_resource(TARGET): 1})
        cluster.wait_for_nodes()
        env = dict(os.environ, TESSEL_PYTHON=sys.executable,
                   PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        t0 = time.monotonic()
        p = subprocess.run([tool, "run", str(job), "--log-dir", str(logs), "-q", "--cluster",
                            cluster.address, "--cluster-build", build, *extra],
                           capture_output=True, text=True, env=env)
        wall = time.monotonic() - t0
    finally:
        cluster.shutdown()
    if p.returncode != 0:
        sys.exit("tessel-tune failed on %d nodes:\n%s" % (nodes, p.stderr))
    m = re.search(r"measurement: (\d+) candidates in ([0-9.]+) s", p.stderr)
    if not m:
        sys.exit("no measurement line from the driver:\n" + p.stderr)
    return int(m.group(1)), float(m.group(2)), wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--per-round", type=int, default=16)
    parser.add_argument("--simulate-ms", type=float, default=500)
    parser.add_argument("--population", type=int, default=256)
    parser.add_argument("--no-search-ahead", action="store_true",
                        help="leave out the runs with search_ahead")
    parser.add_argument("--builds", action="store_true",
                        help="build each candidate for real; compare where the builds run")
    args = parser.parse_args()
    if args.builds:
        return compare_builds(args)
    tool = pathlib.Path(ts.__file__).resolve().parents[2] / "tools" / "tessel-tune" / "tessel-tune"
    if not tool.exists():
        sys.exit("tessel-tune is not built beside this tessel package (%s)" % tool)
    nodes = sorted(set([1] + args.nodes))
    with tempfile.TemporaryDirectory() as tmp:
        job = pathlib.Path(tmp) / "mm.json"
        write_job(job, args.trials, args.per_round, args.simulate_ms, args.population)
        modes = [("", ())] + ([] if args.no_search_ahead else
                              [(" search-ahead", ("--search-ahead", "true"))])
        runs = {}  # (mode, nodes) -> (farm rate, job rate)
        for mode, extra in modes:
            reference = None
            for n in nodes:
                logs = pathlib.Path(tmp) / ("logs%d%s" % (n, mode.strip()))
                candidates, seconds, wall = run_on(n, job, logs, str(tool), extra=extra)
                got = records(logs)
                if reference is None:
                    reference = got
                elif got != reference:
                    sys.exit("%d nodes%s wrote other records than one node" % (n, mode))
                trials = len([r for r in got if r["provenance"]["origin"] not in ("remeasure", "check")])
                runs[mode, n] = (candidates / seconds, trials / wall)
                print("%d node(s)%s: %d candidates measured in %.2f s (%.2f/s); job %.2f s "
                      "(%.2f trials/s)" % (n, mode, candidates, seconds, candidates / seconds,
                                           wall, trials / wall), flush=True)
    one = runs["", 1]
    for n in nodes:
        if n == 1:
            continue
        farm, job_rate = runs["", n]
        print("BENCH tune_cluster_scaling measure_%d_nodes tessel=%.3f one_node=%.3f ratio=%.2f"
              % (n, farm, one[0], farm / one[0]))
        print("BENCH tune_cluster_scaling job_%d_nodes tessel=%.3f one_node=%.3f ratio=%.2f"
              % (n, job_rate, one[1], job_rate / one[1]))
    if not args.no_search_ahead:
        ahead_one = runs[" search-ahead", 1]
        for n in nodes:
            job_rate = runs[" search-ahead", n][1]
            if n == 1:  # against the same node count without search_ahead
                print("BENCH tune_cluster_scaling job_ahead_1_node tessel=%.3f sequential=%.3f "
                      "ratio=%.2f" % (job_rate, one[1], job_rate / one[1]))
                continue
            print("BENCH tune_cluster_scaling job_ahead_%d_nodes tessel=%.3f one_node=%.3f "
                  "ratio=%.2f" % (n, job_rate, ahead_one[1], job_rate / ahead_one[1]))
            print("BENCH tune_cluster_scaling job_ahead_vs_sequential_%d_nodes tessel=%.3f "
                  "sequential=%.3f ratio=%.2f" % (n, job_rate, runs["", n][1],
                                                  job_rate / runs["", n][1]))
    if 4 in runs:
        ratio = runs[4][0] / one[0]
        print("bar: 4 nodes measure %.2f x one node's throughput (>= 3.5): %s"
              % (ratio, "met" if ratio >= 3.5 else "MISSED"))
        return 0 if ratio >= 3.5 else 1
    return 0


def without_build_seconds(rs):
    return [dict(r, result={k: v for k, v in r["result"].items() if k != "build_seconds"})
            for r in rs]


def compare_builds(args):
    """Each node count with the builds on the nodes, on the daemon, and both (auto)."""
    tool = pathlib.Path(ts.__file__).resolve().parents[2] / "tools" / "tessel-tune" / "tessel-tune"
    modes = ["nodes", "daemon", "auto"]
    with tempfile.TemporaryDirectory() as tmp:
        job = pathlib.Path(tmp) / "mm.json"
        write_job(job, args.trials, args.per_round, args.simulate_ms, args.population, True)
        reference = None
        for n in sorted(set(args.nodes)):
            runs = {}
            for mode in modes:
                logs = pathlib.Path(tmp) / ("logs%d%s" % (n, mode))
                candidates, seconds, wall = run_on(n, job, logs, str(tool), mode)
                got = without_build_seconds(records(logs))
                reference = reference or got
                if got != reference:
                    sys.exit("%d nodes, builds on %s: other records than the first run" % (n, mode))
                runs[mode] = (candidates / seconds, wall)
                print("%d node(s), builds on %-6s: %d candidates measured in %.2f s (%.2f/s); "
                      "job %.2f s" % (n, mode, candidates, seconds, candidates / seconds, wall),
                      flush=True)
            for mode in modes[1:]:
                print("BENCH tune_cluster_scaling builds_%s_%d_nodes tessel=%.2f nodes=%.2f "
                      "ratio=%.2f" % (mode, n, runs[mode][1], runs["nodes"][1],
                                      runs["nodes"][1] / runs[mode][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
