"""The search space from Python (ts.auto_schedule): sketches, sampling, mutation and crossover
give schedules that build and compute what the DAG computes; user sketch rules written in Python
come before the built-in ones and keep the sketch's stage data in step with stages they insert;
bad rules are typed errors."""
import numpy as np
import pytest

import tessel as ts

from util import HAVE_LLVM, requires_llvm

A = ts.auto_schedule


def matmul_task(n=32, target="llvm -num-cores=2"):
    return ts.SearchTask("op.matmul", (n, n, n, 0, 0, "float32"), target=target)


def run_matches_numpy(task, schedule):
    args = list(task.dag.inputs) + list(task.dag.outputs)
    f = ts.build(schedule, args, task.target)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 32)).astype("float32")
    b = rng.standard_normal((32, 32)).astype("float32")
    c = np.full((32, 32), np.nan, dtype="float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_sketches_on_a_cpu():
    sketches = A.generate_sketches(matmul_task())
    assert [k.trace for k in sketches] == [
        ["matmul: multi_level_tiling"],
        ["matmul: cache_write", "matmul.local: multi_level_tiling_with_fusion(1)"],
        ["matmul: cache_write", "matmul.local: multi_level_tiling_with_fusion(2)"],
    ]
    assert sketches[1].stage_kinds == ["placeholder", "placeholder", "tiled", "fused"]
    # SSRSRS: two spatial axes in 4 levels, one reduction axis in 2: 3 + 3 + 1 open lengths.
    assert len(sketches[0].tiles) == 3
    assert sum(len(t["steps"]) for t in sketches[0].tiles) == 3 + 3 + 1
    assert A.builtin_sketch_rules("llvm")[0] == "always_inline"
    assert "cross_thread_reduction" in A.builtin_sketch_rules("cuda -arch=sm_90")


@requires_llvm
def test_samples_mutations_and_crossovers_compute_the_matmul():
    task = matmul_task()
    space = A.SearchSpace(task)
    r = space.sample(12, seed=5)
    assert len(r["states"]) == 12 and r["rejection_rate"] < 0.2
    again = space.sample(12, seed=5)["states"]
    assert [s.to_json() for s in again] == [s.to_json() for s in r["states"]]
    for s in r["states"][:3]:
        assert space.check(s.schedule) == ""
        run_matches_numpy(task, s.schedule)
    assert "mutate_tile_size" in space.mutations(r["states"][0])
    mutated = [m for m in (space.mutate(s, seed=i) for i, s in enumerate(r["states"])) if m]
    assert mutated and all(m.origin.startswith("mutate_") for m in mutated)
    run_matches_numpy(task, mutated[0].schedule)
    by_sketch = {}
    for s in r["states"]:
        by_sketch.setdefault(s.sketch, []).append(s)
    pair = next(v for v in by_sketch.values() if len(v) >= 2)
    child = next(c for c in (space.crossover(pair[0], pair[1], seed=i) for i in range(8)) if c)
    assert child.origin == "crossover" and child.sketch == pair[0].sketch
    run_matches_numpy(task, child.schedule)
    # A record's schedule read back becomes a state of its sketch again.
    back = space.state(task.apply_record(child.to_json()))
    assert back.sketch == child.sketch


def test_a_gpu_softmax_has_row_sketches():
    """The row-group rules: max and sum computed at the output's row (one kernel), the input's
    row in shared memory or not; the rule names and stage kinds as Python sees them."""
    task = ts.SearchTask("op.softmax", [[37, 1000], 1, "float32"], target="cuda -arch=sm_90")
    rows = [k for k in A.generate_sketches(task) if "softmax: row_block" in k.trace]
    assert len(rows) == 2
    assert rows[0].stage_kinds == ["placeholder", "row_reduction", "inlined", "row_reduction",
                                   "row_block"]
    assert "x.shared: row_fetch" in rows[1].trace
    rules = A.builtin_sketch_rules("cuda -arch=sm_90")
    assert rules.index("row_reduction") < rules.index("cross_thread_reduction")
    assert "row_block" not in A.builtin_sketch_rules("llvm")


def test_a_python_rule_comes_first_and_can_stop_the_others():
    calls = []

    def condition(ctx, sketch, stage):
        op = ctx.dag_index(sketch, stage)
        calls.append((stage, op))
        return "apply_and_skip_rest" if ctx.needs_multi_level_tiling(op) else "skip"

    def apply(ctx, sketch, stage):
        k = sketch.copy()
        k.tile(stage, "SRS")
        k.add_trace(stage, "my_tiling")
        return [(k, stage - 1)]

    task = matmul_task()
    rule = A.SketchRule("my_tiling", condition, apply)
    sketches = A.generate_sketches(task, rules=[rule])
    assert [k.trace for k in sketches] == [["matmul: my_tiling"]]
    assert len(sketches[0].tiles) == 3  # i, j and k, each in two levels
    assert calls and calls[0] == (2, 2)
    space = A.SearchSpace(task, rules=[rule])
    r = space.sample(6, seed=1)
    assert len(r["states"]) == 6
    if HAVE_LLVM:
        run_matches_numpy(task, r["states"][0].schedule)


def test_a_python_rule_that_inserts_a_stage_keeps_the_stage_data_in_step():
    def condition(ctx, sketch, stage):
        op = ctx.dag_index(sketch, stage)  # -1 for a stage a rule inserted
        return "apply_and_skip_rest" if op >= 0 and ctx.needs_multi_level_tiling(op) else "skip"

    def apply(ctx, sketch, stage):
        k = sketch.copy()
        k.schedule.cache_write(stage, "local")  # inserts matmul.local at `stage`
        k.tile(stage, "SSRSRS")
        k.add_trace(stage, "cache_then_tile")
        return [(k, stage - 1)]

    sketches = A.generate_sketches(matmul_task(), rules=[A.SketchRule("c", condition, apply)])
    k = sketches[0]
    assert k.trace == ["matmul.local: cache_then_tile"]
    assert k.stage_kinds == ["placeholder", "placeholder", "tiled", "plain"]
    assert all(t["stage"] == 2 for t in k.tiles)


def test_bad_rules_are_typed_errors():
    task = matmul_task()
    with pytest.raises(ts.DSLError, match="condition returned"):
        A.generate_sketches(task, rules=[A.SketchRule("r", lambda c, k, s: 7, lambda c, k, s: [])])

    def returns_junk(ctx, sketch, stage):
        return "not a list"

    with pytest.raises(ts.DSLError, match="list of \\(Sketch, next stage\\) pairs"):
        A.generate_sketches(task, rules=[A.SketchRule("r", lambda c, k, s: True, returns_junk)])
    with pytest.raises(ts.DSLError, match="callables"):
        A.SketchRule("r", 1, 2)
    kept = []
    A.generate_sketches(task, rules=[A.SketchRule("r", lambda c, k, s: kept.append(c),
                                                  lambda c, k, s: [])])
    with pytest.raises(RuntimeError, match="after the rule call"):
        kept[0].num_ops

    def raises(ctx, sketch, stage):
        raise ValueError("from the rule")

    with pytest.raises(ValueError, match="from the rule"):
        A.generate_sketches(task, rules=[A.SketchRule("r", raises, raises)])
    with pytest.raises(ts.DSLError, match="n must be"):
        A.SearchSpace(task).sample(-1)


def test_a_primitive_a_rule_applies_refusing_skips_the_rule_there():
    def bad_split(ctx, sketch, stage):
        k = sketch.copy()
        k.schedule.split(stage, 99, 2)  # no loop 99: ScheduleError
        return [(k, stage - 1)]

    task = matmul_task()
    plain = [k.trace for k in A.generate_sketches(task)]
    rule = A.SketchRule("bad", lambda c, k, s: "apply_and_skip_rest", bad_split)
    assert [k.trace for k in A.generate_sketches(task, rules=[rule])] == plain


def test_search_suite_tasks_have_sketches():
    suite = A.search_suite("small", "llvm -num-cores=2")
    assert len(suite) >= 10
    for label, task in suite:
        assert A.generate_sketches(task), label


def conv_states(task, n=40, seed=3):
    """The sampled states of `task` from its implicit_gemm sketches."""
    r = A.SearchSpace(task).sample(n, seed=seed)
    assert r["rejection_rate"] < 0.2, r["rejected"]
    return [s for s in r["states"] if '"kind":"reindex"' in s.to_json()]


def interpreter_matches_the_unscheduled_dag(task, schedule, seed=0):
    args = list(task.dag.inputs) + list(task.dag.outputs)
    rng = np.random.default_rng(seed)
    ins = [rng.standard_normal([int(d) for d in t.shape]).astype("float32")
           for t in task.dag.inputs]
    out = np.full([int(d) for d in task.dag.outputs[0].shape], np.nan, dtype="float32")
    ts.lower(schedule, args).run(*ins, out)
    ref = np.zeros_like(out)
    ts.lower(ts.create_schedule(list(task.dag.outputs)), args).run(*ins, ref)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def states_and_mutations_compute_it(task, states, step):
    """At least 10 sampled `states` (of the sketch whose schedules have `step`): the first two
    pass the space's check and compute the task in the interpreter, and so does a mutation of
    one, which keeps `step`."""
    assert len(states) >= 10
    space = A.SearchSpace(task)
    for s in states[:2]:
        assert space.check(s.schedule) == ""
        interpreter_matches_the_unscheduled_dag(task, s.schedule)
    mutated = [m for m in (space.mutate(s, seed=i) for i, s in enumerate(states)) if m]
    assert mutated and step in mutated[0].to_json()
    interpreter_matches_the_unscheduled_dag(task, mutated[0].schedule)


@pytest.mark.parametrize("workload,params", [
    ("op.conv2d_nchw", [2, 8, 9, 9, 12, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 1, "float32"]),
    ("op.conv2d_nhwc", [2, 9, 9, 8, 12, [3, 3], [1, 1], [1, 1, 1, 1], [2, 2], 1, "float32"]),
], ids=["nchw_stride2", "nhwc_dilation2"])
def test_gpu_conv_has_implicit_gemm_sketches_whose_states_compute_it(workload, params):
    # Beside the direct convolution's sketches, the conv reindexed into a product (the GPU
    # default's implicit GEMM) with open tiles: its gathers fetched into shared memory and
    # inlined there; samples, mutations and crossovers compute the conv.
    task = ts.SearchTask(workload, params, target="cuda -arch=sm_90")
    traces = [k.trace for k in A.generate_sketches(task)]
    name = workload.split(".")[1]
    implicit = [t for t in traces if t[0] == f"{name}.reindex: implicit_gemm"]
    assert len(implicit) == 2 and len(traces) == 4
    assert f"{name}.pad.gather: always_inline" in implicit[0]
    assert f"{name}.pad.gather.shared: cache_read_shared" in implicit[0]
    states_and_mutations_compute_it(task, conv_states(task), '"kind":"reindex"')


@pytest.mark.parametrize("workload,params", [
    ("op.matmul", [33, 20, 383, 0, 0, "float32"]),
    ("op.batch_matmul", [2, 33, 20, 260, "float32"]),
    ("op.dense", [17, 19, 256, 1, "gelu", "float32"]),
], ids=["matmul_odd_k", "batch_matmul", "dense_gelu"])
def test_gpu_products_with_few_tiles_have_split_k_sketches_whose_states_compute_them(workload,
                                                                                     params):
    # Beside the plain tiling, the GPU default's split-K with open tiles: the reduction in the
    # default's parts (the last bounded by k), the partial sums tiled as a batch of products in
    # registers, then summed; samples and mutations compute the product.
    task = ts.SearchTask(workload, params, target="cuda -arch=sm_90")
    traces = [k.trace for k in A.generate_sketches(task)]
    split = [t for t in traces if t[0].endswith(".rf.local: split_k")]
    assert len(split) == 2 and len(traces) == 4
    r = A.SearchSpace(task).sample(40, seed=1)
    assert r["rejection_rate"] < 0.2, r["rejected"]
    states = [s for s in r["states"] if '"kind":"rfactor"' in s.to_json()]
    states_and_mutations_compute_it(task, states, '"kind":"rfactor"')


def test_gpu_products_that_fill_the_gpu_have_no_split_k_sketch():
    task = ts.SearchTask("op.matmul", [2048, 1024, 4096, 0, 0, "float32"], target="cuda -arch=sm_90")
    assert not [k for k in A.generate_sketches(task) if "split_k" in " ".join(k.trace)]


def test_gpu_conv_with_an_epilogue_fuses_the_product_into_it():
    x = ts.placeholder((1, 6, 7, 7), name="x")
    w = ts.placeholder((10, 6, 3, 3), name="w")
    y = ts.op.relu(ts.op.conv2d_nchw(x, w, padding=1))
    task = ts.SearchTask(dag=ts.make_tensor_dag([y]), target="cuda -arch=sm_90")
    traces = [k.trace for k in A.generate_sketches(task)]
    assert ["conv2d_nchw.reindex: implicit_gemm"] == [t[0] for t in traces if "reindex" in t[0]][:1]
    states = conv_states(task)
    assert states
    stages = [st.name for st in states[0].schedule.stages]
    assert "conv2d_nchw.reindex" in stages and "relu" in stages
    interpreter_matches_the_unscheduled_dag(task, states[0].schedule)
