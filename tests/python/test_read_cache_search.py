"""The register read-cache sketch from Python (ts.auto_schedule): a float32 GEMM on a GPU gets a
second sketch whose shared tiles are also copied into registers (cache_read_local, tutorial 05's
AL and BL); its sampled states run correct in tessel's SPMD interpreter against numpy, at a shape
no tile divides too, and compile through NVRTC; the shared tiles' layouts (storage_reorder,
storage_align) are drawn and mutated."""
import numpy as np

import tessel as ts

A = ts.auto_schedule
SM90 = "cuda -arch=sm_90"


def gemm(m, n, k):
    return ts.SearchTask("matmul", (m, n, k, "float32"), target=SM90)


def interpret(task, schedule, seed=0):
    m, k = task.dag.inputs[0].shape
    n = task.dag.inputs[1].shape[1]
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.full((m, n), np.nan, dtype="float32")
    args = list(task.dag.inputs) + list(task.dag.outputs)
    ts.lower(schedule, args).run(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-4,
                               atol=1e-4)


def variant_states(space, n, seed):
    return [s for s in space.sample(n, seed=seed)["states"] if s.sketch == 1]


def test_a_gpu_gemm_gets_the_read_cache_variant():
    space = A.SearchSpace(gemm(64, 64, 64))
    traces = [k.trace for k in space.sketches]
    assert len(traces) == 2
    assert not any("cache_read_local" in t for t in traces[0])
    assert traces[1][-1] == "A.shared.local: cache_read_local"
    assert "B.shared.local: cache_read_local" in traces[1]
    assert space.sketches[1].stage_kinds == [
        "placeholder", "shared_fetch", "read_cache", "placeholder", "shared_fetch", "read_cache",
        "tiled", "fused"]
    rules = A.builtin_sketch_rules(SM90)
    assert rules.index("cache_read_local") == rules.index("cache_read_shared") + 1
    assert "cache_read_local" not in A.builtin_sketch_rules("llvm")


def test_read_cache_states_run_and_their_layouts_are_drawn_and_mutated():
    for m, n, k in [(64, 64, 64), (100, 72, 40)]:
        task = gemm(m, n, k)
        space = A.SearchSpace(task)
        states = variant_states(space, 16, seed=m)
        assert states
        for s in states[:2]:
            assert space.check(s.schedule) == ""
            interpret(task, s.schedule)
        args = list(task.dag.inputs) + list(task.dag.outputs)
        assert ts.build(states[0].schedule, args, target=SM90).get_source("ptx")
    texts = [s.to_python() for s in variant_states(space, 32, seed=5)]
    assert any("storage_reorder" in t for t in texts)
    assert any("storage_align" in t for t in texts)
    assert any(".vectorize(" in t for t in texts)
    assert "mutate_shared_layout" in space.mutations(states[0])
    mutants = (space.mutate(states[i % len(states)], seed=i) for i in range(400))
    layout = next(m for m in mutants if m is not None and m.origin == "mutate_shared_layout")
    assert space.check(layout.schedule) == ""
    interpret(task, layout.schedule)
    # A record's schedule read back is a state of the variant again.
    assert space.state(task.apply_record(states[0].to_json())).sketch == 1
