"""TVM's Ansor tuning API over tessel's tuner (tessel.auto_scheduler, docs/tvm.md): the steps of
TVM's "auto-scheduling a matrix multiplication" tutorial, with the imports changed, tune a
registered workload, write the log, and apply_best gives a schedule that builds into a correct
kernel; TVM-only machinery is a TypeError naming it."""
import numpy as np
import pytest

import tessel as ts
from tessel import auto_scheduler

from util import requires_llvm

pytestmark = pytest.mark.skipif(not ts.auto_schedule.CostModel.available(),
                                reason="built without XGBoost")


@auto_scheduler.register_workload
def compat_matmul_add(N, L, M, dtype):
    A = ts.placeholder((N, L), name="A", dtype=dtype)
    B = ts.placeholder((L, M), name="B", dtype=dtype)
    C = ts.placeholder((N, M), name="C", dtype=dtype)
    k = ts.reduce_axis((0, L), name="k")
    matmul = ts.compute((N, M), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    out = ts.compute((N, M), lambda i, j: matmul[i, j] + C[i, j], name="out")
    return [A, B, C, out]


@requires_llvm
def test_an_ansor_tutorial_script_runs_with_its_imports_changed(tmp_path):
    log_file = str(tmp_path / "matmul.json")
    task = auto_scheduler.SearchTask(func=compat_matmul_add, args=(32, 32, 32, "float32"),
                                     target="llvm -num-cores=2")
    assert [t.name for t in task.compute_dag.args] == ["A", "B", "C", "out"]
    tune_option = auto_scheduler.TuningOptions(
        num_measure_trials=8, num_measures_per_round=4, verbose=0,
        runner=auto_scheduler.LocalRunner(min_repeat_ms=5),
        measure_callbacks=[auto_scheduler.RecordToFile(log_file)])
    result = task.tune(tune_option)
    assert result.trials == 8
    records, skipped, _ = ts.read_records(log_file)
    assert sum(r.is_trial for r in records) == 8 and skipped == 0  # and the re-measurements
    sch, args = task.apply_best(log_file)
    assert "split" in sch.to_python()  # the tuned schedule, not an empty one
    func = ts.build(sch, args, task.target)
    rng = np.random.default_rng(1)
    a, b, c = (rng.standard_normal((32, 32)).astype("float32") for _ in range(3))
    out = np.full((32, 32), np.nan, dtype="float32")
    func(a, b, c, out)
    np.testing.assert_allclose(out, a @ b + c, rtol=1e-4, atol=1e-4)
    assert "def apply_schedule" in task.print_best(log_file)
    with auto_scheduler.ApplyHistoryBest(log_file) as best:
        assert best.records == len(records)  # the trials and their re-measurements


def test_tvm_only_machinery_is_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match="runner"):
        auto_scheduler.TuningOptions(runner=object())
    with pytest.raises(TypeError, match="RecordToFile"):
        auto_scheduler.TuningOptions(measure_callbacks=[print])
    with pytest.raises(TypeError, match="hardware_params"):
        auto_scheduler.SearchTask(func=compat_matmul_add, args=(8, 8, 8, "float32"),
                                  target="llvm", hardware_params=object())
    task = auto_scheduler.SearchTask(func="compat_matmul_add", args=(8, 8, 8, "float32"),
                                     target="llvm")
    with pytest.raises(TypeError, match="search_policy"):
        task.tune(auto_scheduler.TuningOptions(num_measure_trials=4), search_policy=object())
    with pytest.raises(ValueError, match="num_measure_trials"):
        task.tune(auto_scheduler.TuningOptions())
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(RuntimeError, match="no successful record"):
        task.apply_best(str(empty))
