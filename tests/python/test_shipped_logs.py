"""The tuning logs shipped with tessel (docs/tuning.md, "Shipped tuning logs"): ts.build of a
schedule without steps and ts.op.default_schedule use their record for the computation and target,
build(tuning_logs=False) and ts.auto_schedule.use_shipped_logs(False) turn them off, the built
kernel computes the right result, and TESSEL_TUNING_LOGS names the folder or turns them off."""
import json
import os
import subprocess
import sys

import pytest

import tessel as ts

from util import check_matmul_kernel, requires_llvm


def small_task(n=32, target="llvm"):
    return ts.SearchTask("matmul", (n, n, n, "float32"), target=target)


def write_log(folder, task, factor):
    s = task.initial_schedule()
    c = len(s.stages) - 1
    s.split(c, 1, factor)
    s.parallel(c, 0)
    os.makedirs(folder / "cpu", exist_ok=True)
    result = ts.Measurer(min_repeat_ms=2).measure(task, [s])[0]
    assert result.ok, result.error_message
    ts.RecordWriter(str(folder / "cpu" / "matmul.jsonl")).append(
        [ts.make_record(task, s, result)])
    write_log.last = s


@pytest.fixture
def shipped(tmp_path):
    """A folder of shipped logs for the test's process, restored afterwards."""
    yield tmp_path
    ts.auto_schedule.set_shipped_logs_folder(None)
    ts.auto_schedule.use_shipped_logs(True)


def test_the_repository_logs_are_found_and_read():
    folder = ts.auto_schedule.shipped_logs_folder()
    assert folder is not None and os.path.isdir(folder)
    logs = [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files
            if f.endswith(".jsonl")]
    assert logs
    records, skipped, _ = ts.read_records(logs[0])
    assert records and skipped == 0


@requires_llvm
def test_build_and_default_schedule_use_the_record(shipped):
    task = small_task()
    write_log(shipped, task, 8)
    ts.auto_schedule.set_shipped_logs_folder(str(shipped))
    assert ts.auto_schedule.shipped_logs_folder() == str(shipped)
    A, B = task.dag.inputs
    C = task.dag.outputs[0]
    f = ts.build(ts.create_schedule(C), [A, B, C], task.target)
    assert "tessel_parallel_for" in f.get_source("ll")
    check_matmul_kernel(f, 32)
    default = ts.op.default_schedule(C, task.target)
    assert json.loads(default.to_json())["steps"][0]["factor"] == 8
    # As written, on request; and nothing shipped once they are off.
    plain = ts.build(ts.create_schedule(C), [A, B, C], task.target, tuning_logs=False)
    assert "tessel_parallel_for" not in plain.get_source("ll")
    ts.auto_schedule.use_shipped_logs(False)
    assert not ts.auto_schedule.shipped_logs_enabled()
    plain = ts.build(ts.create_schedule(C), [A, B, C], task.target)
    assert "tessel_parallel_for" not in plain.get_source("ll")


@requires_llvm
def test_a_computation_without_a_record_is_built_as_written(shipped):
    write_log(shipped, small_task(), 8)
    ts.auto_schedule.set_shipped_logs_folder(str(shipped))
    other = small_task(48)
    A, B = other.dag.inputs
    C = other.dag.outputs[0]
    f = ts.build(ts.create_schedule(C), [A, B, C], other.target)
    assert "tessel_parallel_for" not in f.get_source("ll")


@requires_llvm
def test_the_environment_names_the_folder_or_turns_them_off(tmp_path):
    task = small_task()
    write_log(tmp_path, task, 8)
    script = (
        "import tessel as ts\n"
        "t = ts.SearchTask('matmul', (32, 32, 32, 'float32'), target='llvm')\n"
        "C = t.dag.outputs[0]\n"
        "print(ts.auto_schedule.shipped_logs_folder())\n"
        "print(ts.op.default_schedule(C, t.target).to_json())\n")
    outs = {}
    for value in (str(tmp_path), "off"):
        env = dict(os.environ, TESSEL_TUNING_LOGS=value)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, check=True).stdout.splitlines()
        outs[value] = out
    assert outs[str(tmp_path)][0] == str(tmp_path)
    assert outs["off"][0] == "None"
    steps = {k: json.loads(v[1])["steps"] for k, v in outs.items()}
    assert steps[str(tmp_path)] == json.loads(write_log.last.to_json())["steps"]
    assert steps["off"] != steps[str(tmp_path)]


def test_a_name_that_is_not_a_folder_is_refused():
    with pytest.raises(RuntimeError, match="not a folder"):
        ts.auto_schedule.set_shipped_logs_folder("/nonexistent/tessel/tuning_logs")
