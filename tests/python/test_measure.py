"""Measurement, records and apply-best from Python: a Measurer measures schedules of a task (a
wrong one is caught), records round-trip through a log, and apply_history_best makes builds and
default schedules use the log's best record, warning once when it has none."""
import warnings

import pytest

import tessel as ts

from util import check_matmul_kernel, requires_llvm


def small_task(n=32, target="llvm -num-cores=2"):
    return ts.SearchTask("matmul", (n, n, n, "float32"), target=target)


def tiled(task, factor):
    s = task.initial_schedule()
    c = len(s.stages) - 1
    s.split(c, 1, factor)
    s.parallel(c, 0)
    return s


@requires_llvm
def test_measurer_measures_and_records_round_trip(tmp_path):
    task = small_task()
    m = ts.Measurer(min_repeat_ms=2, build_threads=2)
    results = m.measure(task, [tiled(task, 8), tiled(task, 16)], origin="random")
    assert [r.error for r in results] == ["none", "none"]
    assert all(r.ok and r.costs and r.mean_cost > 0 for r in results)
    assert m.stats["candidates"] == 2 and m.stats["workers_started"] == 1
    log = tmp_path / "log.jsonl"
    w = ts.RecordWriter(str(log))
    w.append([ts.make_record(task, tiled(task, f), r, seed=3, round=1, origin="random")
              for f, r in zip((8, 16), results)])
    with open(log, "a") as f:
        f.write('{"format_version": 2, "task": []}\n')  # a bad line, skipped and counted
    records, skipped, reasons = ts.read_records(str(log))
    assert len(records) == 2 and skipped == 1 and sum(reasons.values()) == 1
    assert records[0].task_key == task.key and records[0].origin == "random"
    assert ts.record_from_json(records[1].to_json()).costs == records[1].costs
    assert ts.record_from_json("not json") is None


@requires_llvm
def test_apply_history_best_builds_the_best_record(tmp_path):
    task = small_task(target="llvm")
    result = ts.Measurer(min_repeat_ms=2).measure(task, [tiled(task, 8)])[0]
    assert result.ok, result.error_message
    log = tmp_path / "best.jsonl"
    ts.RecordWriter(str(log)).append([ts.make_record(task, tiled(task, 8), result)])
    A, B = task.dag.inputs
    C = task.dag.outputs[0]
    plain = ts.build(ts.create_schedule(C), [A, B, C], task.target)
    assert "tessel_parallel_for" not in plain.get_source("ll")
    with ts.apply_history_best(str(log)) as best:
        assert best.records == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an exact match warns nothing
            f = ts.build(ts.create_schedule(C), [A, B, C], task.target)
        assert "tessel_parallel_for" in f.get_source("ll")
    check_matmul_kernel(f, 32)


def test_apply_history_best_warns_once_without_a_record(tmp_path):
    log = tmp_path / "empty.jsonl"
    log.write_text("")
    task = small_task()
    C = task.dag.outputs[0]
    with ts.apply_history_best(str(log)):
        with pytest.warns(ts.TuningWarning, match="computation of C .DAG " + task.dag_hash):
            ts.op.default_schedule(C, task.target)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ts.op.default_schedule(C, task.target)  # once per task


def test_measurer_keywords_are_the_described_options():
    # MeasureOptions::fields: each keyword with its default in the docstring; others refused.
    doc = ts.Measurer.__init__.__doc__
    for line in ("number (3):", "min_repeat_ms (100.0):", "worker_memory_limit (0):",
                 "worker_path (''):", "seed (1):", "array_offset (16):"):
        assert line in doc, line
    with pytest.raises(TypeError, match="unexpected keyword argument 'numbr'"):
        ts.Measurer(numbr=3)
    with pytest.raises(TypeError, match="'number' must be an int, not float"):
        ts.Measurer(number=2.5)
    with pytest.raises(TypeError, match="'flush_cache' must be a bool, not str"):
        ts.Measurer(flush_cache="yes")
    ts.Measurer(build_timeout=20, run_timeout=5.5, worker_path="")  # ints are numbers
