# ts.auto_schedule: features of a schedule as (names, numpy matrix), and the cost model over
# MeasuredPrograms (training, ranking figures, determinism, the model file, typed errors).
import math

import numpy as np
import pytest

import tessel as ts


def matmul(n=16):
    A = ts.placeholder((n, n), name="A")
    B = ts.placeholder((n, n), name="B")
    k = ts.reduce_axis((0, n), name="k")
    C = ts.compute((n, n), lambda i, j: ts.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def vectorized_matmul():
    A, B, C = matmul()
    s = ts.create_schedule(C)
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    jo, ji = s[C].split(j, factor=4)
    s[C].reorder(i, jo, k, ji)
    s[C].vectorize(ji)
    s[C].parallel(i)
    return s


def test_features_names_and_matrix():
    names, m = ts.auto_schedule.features(vectorized_matmul(), log_scale=False)
    assert len(names) == ts.auto_schedule.NUM_FEATURES == 164
    assert names == ts.auto_schedule.feature_names()
    assert m.dtype == np.float32 and m.shape == (2, 164)  # the init and the update
    col = {n: i for i, n in enumerate(names)}
    # The update: 16 * 4 * 16 * 4 = 4096 executions of one multiply-add; hand-checked in C++.
    assert m[1, col["float_mad"]] == 4096
    assert m[1, col["vec_len"]] == 4 and m[1, col["vec_pos.inner_spatial"]] == 1
    assert m[1, col["parallel_len"]] == 16 and m[1, col["parallel_pos.outer_spatial"]] == 1
    assert m[1, col["B0.bytes"]] == 2 * 4096 * 4
    assert m[0, col["outer_prod"]] == 256


def test_features_log_scale_and_task():
    s = vectorized_matmul()
    _, raw = ts.auto_schedule.features(s, "llvm", log_scale=False)
    _, scaled = ts.auto_schedule.features(s, ts.Target("llvm"))
    np.testing.assert_allclose(scaled, np.log2(1 + raw), rtol=1e-6)
    task = ts.SearchTask("matmul", (16, 16, 16, "float32"), target="llvm")
    sched = task.initial_schedule()
    _, from_task = ts.auto_schedule.features(sched, task)
    _, from_target = ts.auto_schedule.features(sched, task.target)
    np.testing.assert_array_equal(from_task, from_target)


def test_features_gpu_target():
    A = ts.placeholder((256,), name="A")
    B = ts.compute((256,), lambda i: A[i] * 2.0, name="B")
    s = ts.create_schedule(B)
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, "blockIdx.x")
    s[B].bind(tx, "threadIdx.x")
    names, m = ts.auto_schedule.features(s, "cuda -arch=sm_80", log_scale=False)
    col = {n: i for i, n in enumerate(names)}
    assert m[0, col["is_gpu"]] == 1
    assert m[0, col["blockIdx_x_len"]] == 4 and m[0, col["threadIdx_x_len"]] == 64


def synthetic(n, seed):
    # Throughput = sum over the two rows of feature 0 (+ noise columns): learnable.
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        f = np.zeros((2, 164), dtype=np.float32)
        f[:, :8] = rng.random((2, 8))
        throughput = 0.05 + f[:, 0].sum()
        out.append(ts.auto_schedule.MeasuredProgram("ab"[i % 2], f, [1.0 / throughput]))
    return out


@pytest.mark.skipif(not ts.auto_schedule.CostModel.available(), reason="built without XGBoost")
def test_cost_model_learns_and_round_trips(tmp_path):
    train, test = synthetic(300, 1), synthetic(100, 2)
    model = ts.auto_schedule.CostModel(seed=2, min_programs=20, num_rounds=100)
    assert not model.trained
    first = model.update(train)
    assert not first.from_model and model.trained and model.num_trained_programs == 300
    scores = model.predict(test)
    assert scores.shape == (100,)
    q = ts.auto_schedule.ranking_quality(test, scores, k=10)
    assert q.pairwise_accuracy > 0.85 and q.recall_at_k > 0.5 and q.tasks == 2
    # Deterministic for a seed; matrices and programs predict alike.
    again = ts.auto_schedule.CostModel(seed=2, min_programs=20, num_rounds=100)
    again.train(train)
    np.testing.assert_array_equal(again.predict([p.features for p in test]), scores)
    path = str(tmp_path / "x.model.json")
    assert ts.auto_schedule.CostModel.model_path(str(tmp_path / "x.jsonl")) == path
    model.save(path)
    loaded = ts.auto_schedule.CostModel()
    loaded.load(path)
    np.testing.assert_array_equal(loaded.predict(test), scores)


def test_measured_program_and_figures():
    f = np.zeros((1, 164))
    ok = ts.auto_schedule.MeasuredProgram("t", f, [2.0, 4.0])
    fast = ts.auto_schedule.MeasuredProgram("t", f, [1.0])
    failed = ts.auto_schedule.MeasuredProgram("t", f, error=4)
    assert ok.ok and ok.mean_cost == 3.0 and not failed.ok and math.isinf(failed.mean_cost)
    assert ok.features.shape == (1, 164) and ok.features.dtype == np.float32
    assert ts.auto_schedule.normalized_throughputs([ok, fast, failed]) == [1 / 3, 1.0, 0.0]
    q = ts.auto_schedule.ranking_quality([ok, fast, failed], [0.0, 1.0, 5.0])
    assert q.pairs == 1 and q.pairwise_accuracy == 1.0 and math.isnan(q.recall_at_k)
    assert "pairwise_accuracy=1.0000" in repr(q)


@pytest.mark.skipif(not ts.auto_schedule.CostModel.available(), reason="built without XGBoost")
def test_cost_model_errors_are_typed(tmp_path):
    model = ts.auto_schedule.CostModel()
    bad = ts.auto_schedule.MeasuredProgram("t", np.zeros((2, 100)), [1.0])
    with pytest.raises(ts.TesselRuntimeError, match="expected 164 per row"):
        model.train([bad])
    with pytest.raises(ts.TesselRuntimeError, match="2-D array"):
        ts.auto_schedule.MeasuredProgram("t", np.zeros(164), [1.0])
    with pytest.raises(ts.TesselRuntimeError, match="not trained"):
        model.save(str(tmp_path / "m.json"))
    with pytest.raises(ts.TesselRuntimeError, match="cannot read"):
        model.load(str(tmp_path / "missing.json"))
    with pytest.raises(ts.TesselRuntimeError, match="nthread"):
        ts.auto_schedule.CostModel(nthread=0)
    with pytest.raises(RuntimeError):  # TesselRuntimeError is a RuntimeError
        ts.auto_schedule.ranking_quality([bad], [1.0, 2.0])
