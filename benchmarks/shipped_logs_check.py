"""shipped_logs_check: is each task's record in the shipped tuning logs still faster than the
operator library's rules? A record is applied whatever the rules' speed (docs/tuning.md,
"Shipped tuning logs"), so a record the rules have overtaken (the rules improved after the log
was made) makes the default build slower than not tuning.

For every task of the logs in FOLDER whose target this machine serves, measures the task's best
record (the schedule ApplyHistoryBest would apply) and the rules' schedule
(op::default_schedule_rules: the shipped logs off) with the tuner's Measurer (tessel-measure
workers, every output checked) in interleaved rounds, then prints per task the medians, the
ratio rules / record and a verdict: "keep" (the record is faster), "rules" (the rules are as
fast or faster: the record should go) or "same" (the record is the rules' schedule: not timed,
it adds nothing). With --write OUT, writes FOLDER's logs to OUT without the records of the tasks
marked "rules" or "same".

    python benchmarks/shipped_logs_check.py [--rounds 5] [--write OUT] [FOLDER]
    (default FOLDER: tuning_logs/cuda-sm_90)
"""
import argparse
import json
import os
import statistics
import sys
from collections import OrderedDict

import numpy as np
import tessel as ts

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def task_of(recorded):
    """The SearchTask of a record's "task" object (its registered workload rebuilt here)."""
    params = [np.dtype(p["dtype"]) if isinstance(p, dict) else p for p in recorded["params"]]
    task = ts.SearchTask(recorded["workload"], params, target=recorded["target"],
                         constant=recorded.get("constant", []))
    assert task.dag_hash == recorded["dag_hash"], f"{recorded['workload']}: another DAG here"
    return task


def read_tasks(folder):
    """{task key: (task, [(file, line, record)])} over the folder's logs, in file order."""
    tasks = OrderedDict()
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        for line in open(os.path.join(folder, name)):
            record = ts.record_from_json(line)
            if record is None:
                continue
            key = record.task_key
            if key not in tasks:
                tasks[key] = (task_of(json.loads(line)["task"]), [])
            tasks[key][1].append((name, line, record))
    return tasks


def best_record(records):
    """The record of the fastest schedule (median of its successful measurements)."""
    costs = ts.ScheduleCosts()
    for _, _, r in records:
        costs.add(r)
    best = costs.best()
    return None if best is None else records[best[1]][2]


def rules_schedule(task):
    ts.auto_schedule.use_shipped_logs(False)
    try:
        rules = ts.op.default_schedule(task.dag.outputs, target=task.target)
    finally:
        ts.auto_schedule.use_shipped_logs(True)
    return task.apply_record(rules.to_json())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?", default=os.path.join(REPO, "tuning_logs", "cuda-sm_90"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--write", metavar="OUT")
    args = p.parse_args()
    measurer = ts.Measurer()
    tasks = read_tasks(args.folder)
    dropped = set()
    print(f"{'task':48} {'record ms':>10} {'rules ms':>10} {'rules/record':>12}  verdict")
    for key, (task, records) in tasks.items():
        best = best_record(records)
        name = f"{task.workload_name}{tuple(task.params)}"[:48]
        if best is None:
            print(f"{name:48} no successful record")
            continue
        try:
            schedules = [task.apply_record(best.schedule_json), rules_schedule(task)]
        except ts.TesselError as e:
            print(f"{name:48} not rebuilt: {type(e).__name__}: {e}")
            continue
        if schedules[0].to_json() == schedules[1].to_json():
            dropped.add(key)
            print(f"{name:48} the record is the rules' schedule  same")
            continue
        times = [[], []]
        for _ in range(args.rounds):
            for i, result in enumerate(measurer.measure(task, schedules)):
                if result.error != "none":
                    sys.exit(f"{name}: {['record', 'rules'][i]} failed: {result.error} "
                             f"{result.error_message}")
                times[i].append(statistics.mean(result.costs))
        record_ms, rules_ms = (statistics.median(t) * 1e3 for t in times)
        verdict = "keep" if record_ms < rules_ms else "rules"
        if verdict == "rules":
            dropped.add(key)
        print(f"{name:48} {record_ms:10.4f} {rules_ms:10.4f} {rules_ms / record_ms:12.3f}  "
              f"{verdict}")
    print(f"{len(tasks) - len(dropped)} of {len(tasks)} tasks keep their record")
    if args.write:
        os.makedirs(args.write, exist_ok=True)
        for name in sorted(os.listdir(args.folder)):
            if name.endswith(".jsonl"):
                with open(os.path.join(args.write, name), "w") as out:
                    for line in open(os.path.join(args.folder, name)):
                        r = ts.record_from_json(line)
                        if r is None or r.task_key not in dropped:
                            out.write(line)


if __name__ == "__main__":
    main()
