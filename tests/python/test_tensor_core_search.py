"""The tensor-core sketch from Python (ts.auto_schedule): an fp16 GEMM with fp32 accumulation on
sm_80 gets the multi_level_tiling_tensor_core sketch; its sampled states run correct in tessel's
SPMD interpreter (warps, fragment layouts) against numpy and compile to PTX with mma.sync; the
pipelining choices of the shared tiles show in the states; float32 keeps the plain rules unless
tensor_core_tf32 is asked for."""
import ml_dtypes
import numpy as np

import tessel as ts

A = ts.auto_schedule
SM80 = "cuda -arch=sm_80"


def fp16_gemm(m=128, n=128, k=64, dtype="float16", target=SM80):
    return ts.SearchTask("matmul_mixed", (m, n, k, dtype), target=target)


def interpret(task, schedule, seed=0):
    m, k = task.dag.inputs[0].shape
    n = task.dag.inputs[1].shape[1]
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype("float16")
    b = rng.standard_normal((k, n)).astype("float16")
    c = np.full((m, n), np.nan, dtype="float32")
    args = list(task.dag.inputs) + list(task.dag.outputs)
    ts.lower(schedule, args).run(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=2e-3,
                               atol=2e-3)


def test_fp16_gemm_gets_the_tensor_core_sketch_and_its_states_run():
    task = fp16_gemm()
    space = A.SearchSpace(task)
    assert [k.trace for k in space.sketches] == [["C: multi_level_tiling_tensor_core"]]
    assert space.sketches[0].stage_kinds == [
        "placeholder", "tensor_core_fetch", "tensor_core", "placeholder", "tensor_core_fetch",
        "tensor_core", "tensor_core", "tensor_core"]
    # The Hopper rule comes first on every GPU target and applies on sm_90a alone.
    assert A.builtin_sketch_rules(SM80)[:2] == ["multi_level_tiling_wgmma",
                                                "multi_level_tiling_tensor_core"]
    r = space.sample(4, seed=3)
    assert len(r["states"]) == 4
    for s in r["states"][:2]:
        assert "tensorize" in s.to_python()
        interpret(task, s.schedule)
    args = list(task.dag.inputs) + list(task.dag.outputs)
    ptx = ts.build(r["states"][0].schedule, args, target=SM80).get_source("ptx")
    assert "mma.sync.aligned.m16n8k16" in ptx
    # The shared tiles' pipelining is drawn: none, double_buffer or pipeline(2..4) on sm_80.
    many = space.sample(32, seed=4)["states"]
    texts = [s.to_python() for s in many]
    assert any(".pipeline(" in t for t in texts) and any(".double_buffer(" in t for t in texts)
    mutant = next(m for m in (space.mutate(s, seed=i) for i, s in enumerate(many)) if m)
    assert space.check(mutant.schedule) == ""
    assert "mutate_pipelining" in space.mutations(many[0])


def test_sm90a_gets_the_wgmma_sketches_and_their_states_run():
    # One sketch per block tile (rows 64 or 128, columns 64 or 128 here) before mma.sync's.
    task = fp16_gemm(128, 128, 128, "bfloat16", target="cuda -arch=sm_90a")
    space = A.SearchSpace(task)
    assert [k.trace for k in space.sketches] == [
        [f"C: multi_level_tiling_wgmma {bm}x{bn}"] for bm in (128, 64) for bn in (128, 64)
    ] + [["C: multi_level_tiling_tensor_core"]]
    assert space.sketches[0].stage_kinds == [
        "placeholder", "wgmma_fetch", "placeholder", "wgmma_fetch", "tensor_core", "tensor_core"]
    states = [s for s in space.sample(12, seed=2)["states"] if "wgmma" in s.to_python()]
    assert states
    m, k = task.dag.inputs[0].shape
    n = task.dag.inputs[1].shape[1]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
    c = np.full((m, n), np.nan, dtype="float32")
    args = list(task.dag.inputs) + list(task.dag.outputs)
    ts.lower(states[0].schedule, args).run(a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-3, atol=1e-3)


def test_float32_and_old_gpus_keep_the_plain_rules():
    fp32 = fp16_gemm(64, 64, 32, "float32")
    assert not any("tensor_core" in " ".join(k.trace) for k in A.generate_sketches(fp32))
    tf32 = A.generate_sketches(fp32, tensor_core_tf32=True)
    assert [k.trace for k in tf32] == [["C: multi_level_tiling_tensor_core"]]
    sm70 = fp16_gemm(64, 64, 32, target="cuda -arch=sm_70")
    assert not any("tensor_core" in " ".join(k.trace) for k in A.generate_sketches(sm70))


def test_sampling_a_large_fp32_gemm_for_sm90_survives_oversized_shared_tiles():
    # A 4096^3 GEMM draws shared tiles that alone exceed the block's shared memory: the pipelining
    # choice must still be "none" there (it indexed an empty list and crashed the tuner), and the
    # shared-memory check rejects the state.
    task = ts.SearchTask("op.matmul", [4096, 4096, 4096, 0, 0, "float32"],
                         target="cuda -arch=sm_90")
    r = A.SearchSpace(task).sample(64, seed=1)
    assert len(r["states"]) > 0
