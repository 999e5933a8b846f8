# ts.SearchTask: a registered workload (C++ built-in or Python) for a target, its key, its JSON
# rebuilt in another process that never registered the workload, and the hash checks.
import json
import subprocess
import sys

import numpy as np
import pytest

import tessel as ts
import util


@ts.register_workload
def scaled_rows(n, m, scale):
    X = ts.placeholder((n, m), name="X")
    k = ts.reduce_axis((0, m), name="k")
    S = ts.compute((n,), lambda i: ts.sum(X[i, k] * scale, axis=k), name="S")
    return [X, S]


def test_task_of_a_builtin_workload():
    task = ts.SearchTask("matmul", (16, 12, 8, "float32"), target="llvm")
    assert task.workload_name == "matmul" and task.params == [16, 12, 8, "float32"]
    assert task.key == f'{ts.workload_key("matmul", (16, 12, 8, "float32"))} {ts.Target("llvm")} {task.dag_hash}'
    assert task.hardware["cache_line_bytes"] == 64
    gpu = ts.SearchTask("matmul", (16, 12, 8, "float32"), target=ts.Target("cuda -arch=sm_80"))
    assert gpu.dag_hash == task.dag_hash and gpu.key != task.key
    assert gpu.hardware["max_threads_per_block"] == 1024


def test_python_workload_task_rebuilds_in_a_process_without_it(tmp_path):
    task = ts.SearchTask(scaled_rows, (6, 10, 0.5), target="llvm")
    s = task.initial_schedule()
    s.split(1, 0, factor=2)
    (tmp_path / "task.json").write_text(task.to_json())
    (tmp_path / "record.json").write_text(s.to_json())
    script = f"""
import json, numpy as np, tessel as ts
task = ts.SearchTask.from_json(open({str(tmp_path / 'task.json')!r}).read())
assert "scaled_rows" not in ts.workload_names()
s = task.apply_record(open({str(tmp_path / 'record.json')!r}).read())
print(task.key)
print(ts.lower(s, task.dag.args))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    key, ir = out.split("\n", 1)
    assert key == task.key
    assert ir.strip() == str(ts.lower(s, task.dag.args)).strip()
    if util.HAVE_LLVM:
        x = util.rand(6, 10)
        got = util.run(task.dag.args, [x], schedule=s)
        np.testing.assert_allclose(got, (x * 0.5).sum(axis=1), rtol=1e-5)


def test_edited_hash_and_foreign_records_are_refused():
    task = ts.SearchTask("matmul", (8, 8, 8, "float32"), target="llvm")
    doc = json.loads(task.to_json())
    doc["dag_hash"] = "1234abcd"
    with pytest.raises(ts.ScheduleError, match="records 1234abcd"):
        ts.SearchTask.from_json(json.dumps(doc))
    other = ts.SearchTask("matmul", (8, 8, 9, "float32"), target="llvm").initial_schedule()
    other.split(2, 0, factor=4)
    with pytest.raises(ts.ScheduleError, match="cannot be replayed"):
        task.apply_record(other.to_json())
    with pytest.raises(ts.DSLError, match="not both"):
        ts.SearchTask("matmul", (8, 8, 8, "float32"), dag=task.dag)
