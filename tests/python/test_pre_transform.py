# Layout rewrite of constant operands (docs/tuning.md, "Constant operands"): a weight marked
# constant=True is packed once by the module's pre_transform, and the kernel takes the packed
# array in its place; the result is checked against numpy. Off without a constant weight.

import numpy as np
import pytest

import tessel as ts
from tessel import op


def dense(constant):
    x = ts.placeholder((7, 19), name="x")
    w = ts.placeholder((13, 19), name="w", constant=constant)
    return x, w, op.dense(x, w)


def test_dense_with_a_constant_weight():
    x, w, y = dense(True)
    assert w.op.is_constant and not x.op.is_constant
    s = op.default_schedule(y, ts.Target("llvm"))
    assert "pre_transform" in s.to_python()
    m = ts.build(s, [x, w, y], target="llvm", name="dense")
    assert m.kernel_names == ["dense", "dense_pre_transform"]
    assert m["dense"].arg_names == ["x", "w_packed", "dense"]
    rng = np.random.default_rng(0)
    vx = rng.uniform(-1, 1, (7, 19)).astype("float32")
    vw = rng.uniform(-1, 1, (13, 19)).astype("float32")
    packed = m.pre_transform(vw)
    assert packed.numpy().size >= vw.size  # the panels' layout (padded to whole panels)
    out = np.zeros((7, 13), "float32")
    m(vx, packed, out)  # the module calls its kernel
    np.testing.assert_allclose(out, vx @ vw.T, rtol=1e-4, atol=1e-4)
    # The kernel refuses the weight itself: its shape is not the packed one.
    with pytest.raises(ts.TesselRuntimeError):
        m(vx, vw, out)
    with pytest.raises(TypeError, match="1 weight"):
        m.pre_transform(vw, vw)


def test_off_without_a_constant_weight():
    x, w, y = dense(False)
    s = op.default_schedule(y, ts.Target("llvm"))
    assert "pre_transform" not in s.to_python()
    m = ts.build(s, [x, w, y], target="llvm", name="dense")
    assert m.kernel_names == ["dense"]
    with pytest.raises(ts.TesselRuntimeError, match="no pre_transform"):
        m.pre_transform(np.zeros((13, 19), "float32"))


def test_pre_transform_is_a_schedule_step():
    a = ts.placeholder((16, 12), name="a")
    w = ts.placeholder((12, 8), name="w", constant=True)
    k = ts.reduce_axis((0, 12), name="k")
    c = ts.compute((16, 8), lambda i, j: ts.sum(a[i, k] * w[k, j], axis=k), name="c")
    s = ts.create_schedule(c)
    pack = s.cache_read(1, "global", [2])
    s.storage_split(pack, 1, 4)
    s.storage_reorder(pack, [1, 0, 2])
    s.pre_transform(pack)
    assert "s.pre_transform(" in s.to_python()
    m = ts.build(s, [a, w, c], target="llvm", name="mm")
    va = np.random.default_rng(1).uniform(-1, 1, (16, 12)).astype("float32")
    vw = np.random.default_rng(2).uniform(-1, 1, (12, 8)).astype("float32")
    packed = m.pre_transform(vw)
    assert packed.shape == (2, 12, 4)
    np.testing.assert_array_equal(packed.numpy()[1, 3], vw[3, 4:8])
    out = np.zeros((16, 8), "float32")
    m(va, packed, out)
    np.testing.assert_allclose(out, va @ vw, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not ts.auto_schedule.CostModel.available(), reason="built without XGBoost")
def test_tuning_a_task_with_a_constant_weight(tmp_path):
    # The task and its records name the constant input; the default (trial 0) packs it once, and
    # apply-best builds the best record into a module whose kernel, with its pre_transform when
    # it has one, computes the product.
    plain = ts.SearchTask("matmul", (24, 40, 16, "float32"), target="llvm -num-cores=2")
    b_name = plain.dag.inputs[1].name
    task = ts.SearchTask("matmul", (24, 40, 16, "float32"), target="llvm -num-cores=2",
                         constant=[b_name])
    assert task.constant == [b_name] and plain.constant == []
    assert task.key != plain.key
    log = tmp_path / "mm.jsonl"
    r = ts.auto_schedule.tune(task, trials=8, log_file=str(log), seed=1,
                              measurements_per_round=4, population=64, generations=2,
                              min_repeat_ms=5, min_programs=4, num_threads=2, build_threads=2,
                              progress=False, print_schedule=False)
    assert r.trials == 8
    records, skipped, _ = ts.read_records(str(log))
    assert skipped == 0 and all(rec.constant == [b_name] for rec in records)
    default = [rec for rec in records if rec.origin == "default"][0]
    assert default.is_trial and default.costs and "pre_transform" in default.schedule_json
    A, B = task.dag.inputs
    C = task.dag.outputs[0]
    with ts.apply_history_best(str(log)):
        m = ts.build(ts.create_schedule(C), [A, B, C], task.target)
    a = np.random.default_rng(3).uniform(-1, 1, (24, 16)).astype("float32")
    b = np.random.default_rng(4).uniform(-1, 1, (16, 40)).astype("float32")
    c = np.zeros((24, 40), "float32")
    m(a, m.pre_transform(b) if len(m.kernel_names) == 2 else b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
