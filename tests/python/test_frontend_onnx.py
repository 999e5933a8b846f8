# tessel.frontend.from_onnx and ts.compile against onnxruntime: one small graph per operator, the
# three test models at reduced width, the folding of shape subgraphs and of BatchNormalization,
# fusion, task extraction, and clear errors for malformed models (with a small fuzz test).
import json
import pathlib

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

import tessel as ts  # noqa: E402
from tessel.frontend import ModelError, from_onnx, models  # noqa: E402
from tessel.frontend.compiled import kernel_nodes  # noqa: E402

RNG = np.random.default_rng(7)


def model(nodes, inputs, outputs, inits=(), opset=17):
    """A one-graph model: inputs and outputs as (name, shape[, elem type]); inits name -> array."""
    def vi(spec):
        name, shape = spec[0], spec[1]
        return h.make_tensor_value_info(name, spec[2] if len(spec) > 2 else T.FLOAT, shape)
    g = h.make_graph(nodes, "g", [vi(i) for i in inputs], [vi(o) for o in outputs],
                     [nh.from_array(np.asarray(v), k) for k, v in dict(inits).items()])
    opsets = [h.make_opsetid("", opset)]
    return h.make_model(g, opset_imports=opsets, ir_version=h.find_min_ir_version_for(opsets))


def reference(m, feeds):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(m.SerializeToString(), so,
                                providers=["CPUExecutionProvider"]).run(None, feeds)


def rel_l2(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)


def check(m, feeds, tol=1e-5, **import_args):
    graph = from_onnx(m, **import_args)
    outs = ts.compile(graph, "llvm")(*feeds.values())
    outs = outs if isinstance(outs, list) else [outs]
    refs = reference(m, feeds)
    assert len(outs) == len(refs)
    for y, r in zip(outs, refs):
        assert y.shape == r.shape and y.dtype == r.dtype
        assert rel_l2(y, r) <= tol, (rel_l2(y, r), graph.nodes)
    return graph


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


X4 = ("x", [1, 4, 6, 6])


UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Neg", "Abs"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op):
    check(model([h.make_node(op, ["x"], ["y"])], [("x", [2, 3, 5])], [("y", [2, 3, 5])]),
          {"x": f32(2, 3, 5)})


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    m = model([h.make_node("Gelu", ["x"], ["y"], approximate=approximate)], [("x", [4, 9])],
              [("y", [4, 9])], opset=20)
    check(m, {"x": f32(4, 9)})


def test_sqrt_log():
    m = model([h.make_node("Abs", ["x"], ["a"]), h.make_node("Sqrt", ["a"], ["s"]),
               h.make_node("Log", ["s"], ["y"])], [("x", [3, 7])], [("y", [3, 7])])
    check(m, {"x": f32(3, 7) + 3})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
def test_binary_broadcast(op):
    m = model([h.make_node(op, ["x", "c"], ["t"]), h.make_node(op, ["t", "z"], ["y"])],
              [("x", [2, 3, 4]), ("z", [4])], [("y", [2, 3, 4])],
              {"c": f32(3, 1) + 3})
    check(m, {"x": f32(2, 3, 4), "z": f32(4) + 3})


def test_pow_and_clip():
    m = model([h.make_node("Pow", ["x", "two"], ["p"]),
               h.make_node("Clip", ["p", "lo", "hi"], ["y"])], [("x", [5, 5])], [("y", [5, 5])],
              {"two": np.float32(2), "lo": np.float32(0.1), "hi": np.float32(2.0)})
    check(m, {"x": f32(5, 5)})


@pytest.mark.parametrize("group,stride,pads", [(1, 1, [1, 1, 1, 1]), (1, 2, [0, 1, 1, 0]),
                                               (4, 1, [1, 1, 1, 1]), (2, 1, [0, 0, 0, 0])])
def test_conv(group, stride, pads):
    w = f32(8 if group != 4 else 4, 4 // group, 3, 3)
    m = model([h.make_node("Conv", ["x", "w", "b"], ["y"], group=group, strides=[stride] * 2,
                           pads=pads)], [X4], [("y", None)], {"w": w, "b": f32(w.shape[0])})
    check(m, {"x": f32(1, 4, 6, 6)})


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_and_pool_auto_pad(auto_pad):
    m = model([h.make_node("Conv", ["x", "w"], ["c"], auto_pad=auto_pad, strides=[2, 2]),
               h.make_node("MaxPool", ["c"], ["y"], auto_pad=auto_pad, kernel_shape=[2, 2])],
              [("x", [1, 4, 7, 7])], [("y", None)], {"w": f32(8, 4, 4, 4)})
    check(m, {"x": f32(1, 4, 7, 7)})


def test_conv_batchnorm_relu_fold_and_fuse():
    c = 8
    inits = {"w": f32(c, 4, 3, 3), "g": f32(c), "b": f32(c), "m": f32(c),
             "v": np.abs(f32(c)) + 0.5}
    m = model([h.make_node("Conv", ["x", "w"], ["c"], pads=[1] * 4),
               h.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["n"]),
               h.make_node("Relu", ["n"], ["y"])], [X4], [("y", [1, c, 6, 6])], inits)
    g = check(m, {"x": f32(1, 4, 6, 6)})
    assert [n.op_type for n in g.nodes] == ["Conv+Relu"]  # BN folded into the weights
    unfused = from_onnx(m, fuse=False)
    assert [n.op_type for n in unfused.nodes] == ["Conv", "Relu"]


def test_batchnorm_alone():
    inits = {"g": f32(4), "b": f32(4), "m": f32(4), "v": np.abs(f32(4)) + 0.5}
    m = model([h.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"])], [X4],
              [("y", [1, 4, 6, 6])], inits)
    check(m, {"x": f32(1, 4, 6, 6)})


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    ("GlobalAveragePool", {}), ("GlobalMaxPool", {})])
def test_pool(op, attrs):
    check(model([h.make_node(op, ["x"], ["y"], **attrs)], [X4], [("y", None)]),
          {"x": f32(1, 4, 6, 6)})


@pytest.mark.parametrize("tb,alpha,beta", [(1, 1.0, 1.0), (0, 0.5, 2.0)])
def test_gemm(tb, alpha, beta):
    w = f32(6, 5) if tb else f32(5, 6)
    m = model([h.make_node("Gemm", ["x", "w", "b"], ["y"], transB=tb, alpha=alpha, beta=beta)],
              [("x", [3, 5])], [("y", [3, 6])], {"w": w, "b": f32(6)})
    check(m, {"x": f32(3, 5)})


def test_gemm_runtime_operands():
    m = model([h.make_node("Gemm", ["a", "b"], ["y"], transA=1)],
              [("a", [5, 3]), ("b", [5, 4])], [("y", [3, 4])])
    check(m, {"a": f32(5, 3), "b": f32(5, 4)})


def test_matmul_weights_and_batched():
    m = model([h.make_node("MatMul", ["x", "w"], ["p"]), h.make_node("Add", ["p", "b"], ["q"]),
               h.make_node("MatMul", ["q", "z"], ["y"])],
              [("x", [2, 3, 4, 5]), ("z", [2, 3, 6, 2])], [("y", [2, 3, 4, 2])],
              {"w": f32(5, 6), "b": f32(6)})
    g = check(m, {"x": f32(2, 3, 4, 5), "z": f32(2, 3, 6, 2)})
    # The bias joins the dense product's stage; each product computes a 2-D / 3-D tensor of
    # which the model's shape is a view (no kernel).
    assert [(n.op_type, n.view) for n in g.nodes] == [
        ("MatMul", False), ("Reshape", True), ("MatMul", False), ("Reshape", True)]
    assert ts.compile(g, "llvm").kernels == 2


def test_layout_operators():
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1, 3]),
             h.make_node("Reshape", ["t", "shape"], ["r"]),
             h.make_node("Unsqueeze", ["r", "ax"], ["u"]),
             h.make_node("Squeeze", ["u", "ax"], ["s"]),
             h.make_node("Slice", ["s", "st", "en", "axs", "sp"], ["sl"]),
             h.make_node("Concat", ["sl", "sl"], ["c"], axis=-2),
             h.make_node("Flatten", ["c"], ["y"], axis=-1)]
    inits = {"shape": np.array([0, -1, 6], np.int64), "ax": np.array([1], np.int64),
             "st": np.array([1, -5], np.int64), "en": np.array([100, 0], np.int64),
             "axs": np.array([2, 1], np.int64), "sp": np.array([2, -1], np.int64)}
    check(model(nodes, [("x", [2, 3, 4, 6])], [("y", None)], inits), {"x": f32(2, 3, 4, 6)})


def test_softmax_layernorm_reducemean():
    nodes = [h.make_node("Softmax", ["x"], ["s"], axis=1),
             h.make_node("LayerNormalization", ["s", "g", "b"], ["l"], epsilon=1e-5),
             h.make_node("ReduceMean", ["l", "ax"], ["y"], keepdims=0)]
    m = model(nodes, [("x", [2, 5, 8])], [("y", [2, 8])],
              {"g": f32(8), "b": f32(8), "ax": np.array([1], np.int64)}, opset=18)
    check(m, {"x": f32(2, 5, 8)})


def test_gather_cast_where_expand():
    nodes = [h.make_node("Gather", ["emb", "ids"], ["e"], axis=0),
             h.make_node("Gather", ["e", "neg"], ["last"], axis=1),
             h.make_node("Cast", ["m"], ["mb"], to=T.BOOL),
             h.make_node("Expand", ["last", "shape"], ["ex"]),
             h.make_node("Where", ["mb", "ex", "zero"], ["y"])]
    m = model(nodes, [("ids", [2, 3], T.INT64), ("m", [2, 4], T.INT64)], [("y", [3, 2, 4])],
              {"emb": f32(10, 4), "neg": np.int64(-1), "shape": np.array([3, 1, 4], np.int64),
               "zero": np.float32(0)})
    check(m, {"ids": np.array([[1, 9, 0], [3, 3, 2]], np.int64),
              "m": np.array([[1, 0, 1, 1], [0, 0, 1, 0]], np.int64)})


@pytest.mark.parametrize("op", ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"])
def test_comparisons_broadcast_into_a_mask(op):
    """A comparison of broadcast inputs (a row against a column), then a logical And with a
    mask, Not and IsNaN: bool tensors at run time, as an attention mask's arithmetic has them."""
    nodes = [h.make_node(op, ["a", "b"], ["c"]),
             h.make_node("IsNaN", ["a"], ["nan"]),
             h.make_node("Not", ["nan"], ["ok"]),
             h.make_node("And", ["c", "ok"], ["both"]),
             h.make_node("Or", ["both", "m"], ["any"]),
             h.make_node("Where", ["any", "a", "zero"], ["y"])]
    m = model(nodes, [("a", [3, 1, 5]), ("b", [4, 1]), ("m", [5], T.BOOL)], [("y", [3, 4, 5])],
              {"zero": np.float32(0)})
    a = np.round(f32(3, 1, 5))
    a[0, 0, 2] = np.nan
    check(m, {"a": a, "b": np.round(f32(4, 1)), "m": np.array([1, 0, 0, 1, 0], bool)})


def test_gather_elements_of_constants_folds():
    """GatherElements on constants (BERT's token-type buffer as PyTorch exports it) folds at
    import; an index out of range is a clear error naming the node."""
    nodes = [h.make_node("GatherElements", ["data", "idx"], ["g"], axis=1),
             h.make_node("Add", ["x", "g"], ["y"])]
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[3, 0], [1, -1]], np.int64)
    m = model(nodes, [("x", [2, 2])], [("y", [2, 2])], {"data": data, "idx": idx})
    g = check(m, {"x": f32(2, 2)})
    assert [n.op_type for n in g.nodes] == ["Add"]
    bad = model(nodes, [("x", [2, 2])], [("y", [2, 2])],
                {"data": data, "idx": np.array([[4, 0], [1, 0]], np.int64)})
    with pytest.raises(ModelError, match="GatherElements.*outside"):
        from_onnx(bad)


def test_a_constant_output_keeps_its_name():
    """An output that folds to a constant under the output's own name (Shape of an input) is
    copied into a buffer of its own, never written over the constant."""
    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Relu", ["x"], ["y"])]
    m = model(nodes, [("x", [2, 3])], [("y", [2, 3]), ("s", [2], T.INT64)])
    g = from_onnx(m)
    cm = ts.compile(g, "llvm")
    for _ in range(2):  # a second call reads the same constant
        y, s = cm(f32(2, 3))
        np.testing.assert_array_equal(s, [2, 3])
    assert np.array_equal(g.constants["s"], [2, 3])


def test_shape_subgraph_folds_into_reshape():
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             h.make_node("Unsqueeze", ["n", "ax"], ["nu"]),
             h.make_node("Concat", ["nu", "minus1"], ["shape"], axis=0),
             h.make_node("Reshape", ["x", "shape"], ["y"])]
    m = model(nodes, [("x", [3, 4, 5])], [("y", [3, 20])],
              {"zero": np.int64(0), "ax": np.array([0], np.int64),
               "minus1": np.array([-1], np.int64)})
    g = check(m, {"x": f32(3, 4, 5)})
    assert [n.op_type for n in g.nodes] == ["Reshape"]


def test_symbolic_dimension_needs_a_size():
    m = model([h.make_node("Relu", ["x"], ["y"])], [("x", ["batch", 4])], [("y", ["batch", 4])])
    with pytest.raises(ModelError, match=r"input 'x'.*symbolic \('batch'\)"):
        from_onnx(m)
    check(m, {"x": f32(3, 4)}, shapes={"x": (3, 4)})


def test_unsupported_operator_names_node_and_opset():
    m = model([h.make_node("Hardmax", ["x"], ["y"], name="hm")], [("x", [2, 3])], [("y", [2, 3])])
    with pytest.raises(ModelError, match=r"node 'hm' \(Hardmax, opset 17\): operator not"):
        from_onnx(m)
    with pytest.raises(ModelError, match="opset 11 is not supported"):
        from_onnx(model([h.make_node("Relu", ["x"], ["y"])], [("x", [2])], [("y", [2])],
                        opset=11))


# --- the three models, reduced ------------------------------------------------------------

def test_resnet50_reduced():
    m = models.resnet50(width=0.125, layers=(1, 1, 1, 1), image=32, classes=10)
    g = check(m, {"input": f32(1, 3, 32, 32)}, tol=1e-4)
    groups = [n.op_type for n in g.nodes]
    assert not any("BatchNormalization" in t for t in groups)
    assert groups.count("Conv+Relu") == 1 + 2 * 4 and groups.count("Add+Relu") == 4


def test_mobilenet_v2_reduced():
    m = models.mobilenet_v2(width=0.25, layers=1, image=32, classes=10)
    check(m, {"input": f32(1, 3, 32, 32)}, tol=1e-4)


def test_bert_encoder_reduced():
    m = models.bert_encoder(layers=2, hidden=64, heads=2, seq=16, vocab=50)
    mask = np.ones((1, 16), np.int64)
    mask[0, 11:] = 0
    g = check(m, {"input_ids": RNG.integers(0, 50, (1, 16)), "attention_mask": mask}, tol=1e-4)
    assert not any(n.op_type in ("Shape", "Concat") for n in g.nodes)  # folded at import


# --- blocked activations (layout="NCHW16c") ----------------------------------------------------

def test_resnet50_reduced_on_blocked_activations():
    """The layers agree on the blocked layout: the RGB input blocked once (one block of its 3
    channels), the pooled features unblocked once before the classifier, every convolution a
    conv2d_nchwc, the residual adds and the max pool on blocked tensors; outputs as onnxruntime's."""
    m = models.resnet50(width=0.25, layers=(1, 1, 1, 1), image=32, classes=10)
    g = check(m, {"input": f32(1, 3, 32, 32)}, tol=1e-4, layout="NCHW16c")
    groups = [n.op_type for n in g.nodes]
    assert groups.count("NchwToNchwc") == 1 and groups.count("NchwcToNchw") == 1, groups
    assert groups.count("Conv+Relu") == 1 + 2 * 4 and groups.count("Add+Relu") == 4
    for n in g.nodes:
        if n.op_type.startswith("Conv"):
            assert len(g.values[n.output].shape) == 5 and "nchwc" in repr(n.signature), n
    # The 3 x 3 stride-1 convolutions by Winograd (docs/operators.md), the others direct.
    kinds = ["nchwc_winograd" in repr(n.signature) for n in g.nodes if n.op_type.startswith("Conv")]
    assert any(kinds) and not all(kinds), kinds
    assert g.values[g.outputs[0].name].shape == (1, 10)


def test_blocked_activations_meet_operators_that_do_not_keep_them():
    """A blocked conv output read by an operator that does not keep the layout (a transpose), by
    a per-channel multiply (a (1, C, 1, 1) constant), by a residual add with an NCHW tensor, and
    returned as a model output: each reader gets the NCHW tensor, made once; a channel count no
    block divides stays NCHW."""
    inits = {"w": f32(32, 4, 3, 3), "b": f32(32), "s": f32(1, 32, 1, 1), "w2": f32(24, 32, 1, 1),
             "w3": f32(32, 4, 1, 1)}
    m = model([h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1] * 4),
               h.make_node("Relu", ["c"], ["r"]),
               h.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 3, 1]),
               h.make_node("Mul", ["r", "s"], ["scaled"]),
               h.make_node("Conv", ["x", "w3"], ["plain"]),
               h.make_node("Add", ["scaled", "plain"], ["sum"]),
               h.make_node("Conv", ["r", "w2"], ["narrow"])],
              [X4], [("r", None), ("t", None), ("sum", None), ("narrow", None)], inits)
    g = check(m, {"x": f32(1, 4, 6, 6)}, tol=1e-5, layout="NCHW16c")
    groups = [n.op_type for n in g.nodes]
    assert groups.count("NchwcToNchw") == 2, groups  # r, and the conv w3's output for Add
    assert groups.count("NchwToNchwc") == 1, groups  # x for the blocked convs (one block of 4)


def test_blocked_pools_and_layout_errors():
    m = model([h.make_node("Conv", ["x", "w"], ["c"], pads=[1] * 4),
               h.make_node("MaxPool", ["c"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                           pads=[1, 1, 1, 1]),
               h.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 2], strides=[1, 1]),
               h.make_node("GlobalAveragePool", ["a"], ["y"])],
              [("x", [1, 8, 9, 9])], [("y", None)], {"w": f32(16, 8, 3, 3)})
    g = check(m, {"x": f32(1, 8, 9, 9)}, layout="NCHW16c")
    assert [n.op_type for n in g.nodes] == ["NchwToNchwc", "Conv", "MaxPool", "AveragePool",
                                            "GlobalAveragePool", "NchwcToNchw"]
    check(m, {"x": f32(1, 8, 9, 9)}, layout="NCHW8c")
    for bad in ("NHWC", "NCHW1c", "NCHW16C", 16):
        with pytest.raises(ValueError, match="layout"):
            from_onnx(m, layout=bad)


def test_compiled_model_reuses_buffers_and_kernels():
    m = models.resnet50(width=0.125, layers=(2, 1, 1, 1), image=32, classes=10)
    g = from_onnx(m)
    cm = ts.compile(g, "llvm")
    assert cm.kernels < len(g.nodes)  # the equal blocks share their kernels
    total = sum(np.prod(g.values[n.output].shape) * 4 for n in g.nodes)
    assert cm.buffer_bytes < total
    x = f32(1, 3, 32, 32)
    assert rel_l2(cm(x), reference(m, {"input": x})[0]) <= 1e-4
    assert rel_l2(cm(ts.nd.array(x)), reference(m, {"input": x})[0]) <= 1e-4  # DLPack input
    with pytest.raises(ValueError, match="input 'input': shape"):
        cm(f32(1, 3, 16, 16))


# --- tasks ---------------------------------------------------------------------------------

def test_extract_tasks_of_a_model(tmp_path):
    m = models.resnet50(width=0.125, layers=(2, 1, 1, 1), image=32, classes=10)
    g = from_onnx(m)
    tasks = ts.auto_schedule.extract_tasks(g, job=str(tmp_path / "job.json"), fused=False)
    convs = [t for t in tasks if t["workload"] == "op.conv2d_nchw"]
    # the stem; stage 1: 3 + 1 (downsample) + 3; stages 2-4: 3 + 1 each
    assert convs and sum(t["weight"] for t in convs) == 1 + 7 + 3 * 4
    assert max(t["weight"] for t in convs) >= 2
    job = json.loads((tmp_path / "job.json").read_text())
    assert job["tasks"] == tasks


def test_fused_groups_are_dag_tasks(tmp_path):
    """Each distinct fused group (conv + bias + ReLU, the residual add + ReLU, dense + ...) is one
    DAG task weighted by how many groups compute it; its DAG is the kernel ts.compile builds."""
    m = models.resnet50(width=0.125, layers=(2, 1, 1, 1), image=32, classes=10)
    g = from_onnx(m)
    tasks = ts.auto_schedule.extract_tasks(g, job=str(tmp_path / "job.json"))
    kernels = kernel_nodes(g)
    assert sum(t["weight"] for t in tasks) == len(kernels)
    assert len(tasks) == ts.compile(g, "llvm").kernels  # equal groups: one task, one kernel
    assert max(t["weight"] for t in tasks) >= 2
    assert all(set(t) == {"dag", "weight"} for t in tasks)
    # a conv + ReLU group's DAG holds both stages; each task rebuilds as a SearchTask
    fused = next(n for n in g.nodes if n.op_type == "Conv+Relu")
    from tessel._tasks import group_dag
    dag = group_dag(g, fused)
    assert len(dag.outputs) == 1 and len(dag.inputs) == 3  # x, the folded weight, the bias
    hashes = {ts.SearchTask(dag=ts.dag_from_json(json.dumps(t["dag"])), target="llvm").dag_hash
              for t in tasks}
    assert ts.SearchTask(dag=dag, target="llvm").dag_hash in hashes
    job = json.loads((tmp_path / "job.json").read_text())
    assert job["tasks"] == tasks


def _residual_block():
    """conv + bias + ReLU, then the residual add and its ReLU: two fused groups."""
    w = (RNG.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32)
    return model([h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
                  h.make_node("Relu", ["c"], ["r"], name="relu"),
                  h.make_node("Add", ["r", "x"], ["s"], name="add"),
                  h.make_node("Relu", ["s"], ["y"], name="relu2")],
                 [X4], [("y", [1, 4, 6, 6])], {"w": w, "b": f32(4)})


def test_weights_are_marked_constant_and_laid_out_once():
    """A group's initializers are constant placeholders (its task's DAG says so); the conv's
    weight is pre-transformed when the model is built, and the model still computes what
    onnxruntime does."""
    w = (RNG.standard_normal((32, 8, 3, 3)) * 0.3).astype(np.float32)  # channels in vectors
    m = model([h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
               h.make_node("Relu", ["c"], ["y"], name="relu")],
              [("x", [1, 8, 7, 5])], [("y", [1, 32, 7, 5])], {"w": w, "b": f32(32)})
    g = from_onnx(m)
    conv = g.nodes[0]
    phs = g.placeholders(conv)
    assert [p.op.is_constant for p in phs] == [i in g.constants for i in conv.inputs]
    assert any(p.op.is_constant for p in phs) and not phs[0].op.is_constant
    if "llvm" not in ts.targets():
        pytest.skip("runs on the CPU")
    cm = ts.compile(g, "llvm")
    weight = conv.inputs[1]
    assert f"{weight}@k0" in cm._plan[3] and weight not in cm._plan[0][0][1]
    x = f32(1, 8, 7, 5)
    assert rel_l2(cm(x), reference(m, {"x": x})[0]) <= 1e-5


@pytest.mark.parametrize("layout,groups", [
    ("NCHW", ["Conv+Relu", "Add+Relu"]),
    ("NCHW4c", ["NchwToNchwc", "Conv+Relu", "Add+Relu", "NchwcToNchw"])])
def test_a_tuned_fused_group_applies_in_the_compiled_model(tmp_path, layout, groups):
    """extract -> tessel-tune run (a tiny budget) -> ts.compile with the log: the fused groups'
    records schedule their kernels, and the outputs still equal onnxruntime's; on blocked
    activations too (the blocked conv and the transforms are tasks like any other)."""
    import os
    import subprocess
    import sys
    if "llvm" not in ts.targets():
        pytest.skip("CPU candidates need the LLVM backend")
    tool = pathlib.Path(ts.__file__).resolve().parents[2] / "tools" / "tessel-tune" / "tessel-tune"
    if not tool.exists():
        pytest.skip("tessel-tune is not built beside this tessel package")
    m = _residual_block()
    g = from_onnx(m, layout=layout)
    assert [n.op_type for n in g.nodes] == groups
    job = tmp_path / "block.json"
    tasks = ts.auto_schedule.extract_tasks(
        g, job=str(job), target="llvm -num-cores=2", trials=4 * len(groups),
        measurements_per_round=4,
        search={"population": 16, "generations": 1, "min_programs": 4},
        measure={"min_repeat_ms": 1})
    assert len(tasks) == len(groups)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    logs = tmp_path / "logs"
    run = subprocess.run([str(tool), "run", str(job), "--log-dir", str(logs), "-q"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    log = logs  # the folder of per-task logs reads as one log
    records = [r for r in ts.read_records(str(log))[0] if r.ok]
    assert {r.task_key.split(" ")[0] for r in records} == \
        {'["dag:' + ts.SearchTask(dag=ts.dag_from_json(json.dumps(t["dag"])),
                                  target="llvm").dag_hash + '"]' for t in tasks}
    x = f32(1, 4, 6, 6)
    ref = reference(m, {"x": x})[0]
    cm = ts.compile(g, "llvm -num-cores=2", log=str(log))
    assert sorted(cm.tuned) == sorted(n.name for n in g.nodes)
    assert rel_l2(cm(x), ref) <= 1e-5
    assert ts.compile(g, "llvm").tuned == []  # no log: the default schedules


def test_extract_command(tmp_path):
    import subprocess
    import sys
    p = tmp_path / "m.onnx"
    onnx.save(models.mobilenet_v2(width=0.25, layers=1, image=32, classes=10), str(p))
    out = tmp_path / "job.json"
    r = subprocess.run([sys.executable, "-m", "tessel.frontend", "extract", str(p), "-o",
                        str(out), "--trials-per-task", "8", "--per-operator"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    job = json.loads(out.read_text())
    assert job["trials_per_task"] == 8 and any(
        t["workload"] == "op.depthwise_conv2d_nchw" for t in job["tasks"])
    r = subprocess.run([sys.executable, "-m", "tessel.frontend", "extract", str(p), "-o",
                        str(out), "--trials-per-task", "8"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    job = json.loads(out.read_text())  # the default: one DAG task per distinct fused group
    assert job["tasks"] and all(set(t) == {"dag", "weight"} for t in job["tasks"])
    tool = pathlib.Path(ts.__file__).resolve().parents[2] / "tools" / "tessel-tune" / "tessel-tune"
    if tool.exists():  # tessel-tune checks the job as it would run it, and queues it
        sub = subprocess.run([str(tool), "submit", str(out), "--spool", str(tmp_path / "spool")],
                             capture_output=True, text=True)
        assert sub.returncode == 0, sub.stdout + sub.stderr
        assert (tmp_path / "spool" / "queue" / "job.json").exists()
    bad = subprocess.run([sys.executable, "-m", "tessel.frontend", "extract",
                          str(tmp_path / "missing.onnx"), "-o", str(out)],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "cannot read the model" in bad.stderr
    r = subprocess.run([sys.executable, "-m", "tessel.frontend", "extract", str(p), "-o",
                        str(out), "--layout", "NCHW8c"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert any("conv2d_nchwc" in json.dumps(t["dag"]) for t in json.loads(out.read_text())["tasks"])
    bad = subprocess.run([sys.executable, "-m", "tessel.frontend", "extract", str(p), "-o",
                          str(out), "--layout", "NHWC"], capture_output=True, text=True)
    assert bad.returncode != 0 and "layout" in bad.stderr


# --- export ----------------------------------------------------------------------------------

_CONSUMER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "resnet.h"

int main(int argc, char** argv) {
    static float x[1 * 3 * 32 * 32], y[10];
    FILE* f = fopen(argv[1], "rb");
    if (!f || fread(x, sizeof x, 1, f) != 1) return 2;
    fclose(f);
    const void* inputs[RESNET_NUM_INPUTS] = {x};
    void* outputs[RESNET_NUM_OUTPUTS] = {y};
    if (resnet_run(inputs, outputs) != 0) return 3;
    if (resnet_run(inputs, outputs) != 0) return 3; /* again: the same scratch plan */
    f = fopen(argv[2], "wb");
    if (!f || fwrite(y, sizeof y, 1, f) != 1) return 4;
    fclose(f);
    printf("ok %d\n", RESNET_SCRATCH_BYTES > 0);
    return 0;
}
"""


def test_exported_model_runs_from_c_with_the_runtime_alone(tmp_path):
    """export_library: a shared library of the kernels, the weights and resnet_run, with a C
    header; a C program compiled here against the header, linked with the runtime archive
    alone, computes what onnxruntime and ts.compile compute."""
    import shutil
    import subprocess
    if "llvm" not in ts.targets() or shutil.which("cc") is None:
        pytest.skip("export needs the LLVM backend and a C compiler")
    build_dir = pathlib.Path(ts.__file__).resolve().parents[2]
    runtime = build_dir / "src" / "libtessel_runtime.a"
    if not runtime.exists():
        pytest.skip("the runtime archive is not built beside this tessel package")
    m = models.resnet50(width=0.125, layers=(1, 1, 1, 1), image=32, classes=10)
    g = from_onnx(m)
    cm = ts.compile(g, "llvm", name="resnet")
    # The convolutions' weights are laid out once, at build time, and the library embeds them.
    packed = [k for k in cm._plan[3] if "@k" in k]
    assert packed and all(any(k in names for _, names in cm._plan[0]) for k in packed)
    header = cm.export_library(str(tmp_path / "libresnet.so"))
    assert header == str(tmp_path / "resnet.h")
    text = pathlib.Path(header).read_text()
    assert "int32_t resnet_run(const void* const* inputs, void* const* outputs);" in text
    assert "inputs[0]  input: float32[1, 3, 32, 32]" in text
    (tmp_path / "main.c").write_text(_CONSUMER)

    def sh(*argv):
        r = subprocess.run(list(argv), capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0, (argv, r.stdout + r.stderr)
        return r.stdout

    sh("cc", "-std=c11", "-Wall", "-Werror", "-I.", "-c", "main.c", "-o", "main.o")
    sh("c++", "-o", "main", "main.o", "-L.", "-lresnet", f"-Wl,-rpath,{tmp_path}", str(runtime),
       "-lpthread", "-lm")
    x = f32(1, 3, 32, 32)
    x.tofile(tmp_path / "x.bin")
    assert sh(str(tmp_path / "main"), "x.bin", "y.bin").startswith("ok 1")
    y = np.fromfile(tmp_path / "y.bin", dtype=np.float32).reshape(1, 10)
    assert "LLVM" not in sh("ldd", str(tmp_path / "main"))
    assert rel_l2(y, reference(m, {"input": x})[0]) <= 1e-4
    np.testing.assert_allclose(y, cm(x), rtol=1e-5, atol=1e-6)


def test_export_errors(tmp_path):
    g = from_onnx(relu_chain())
    with pytest.raises(ValueError, match="not a C identifier"):
        ts.compile(g, "llvm", name="bad-name")
    cm = ts.compile(g, "llvm", name="chain")
    with pytest.raises(RuntimeError, match="failed"):  # a folder that does not exist
        cm.export_library(str(tmp_path / "missing" / "libchain.so"),
                          header=str(tmp_path / "chain.h"))


def test_every_group_builds_for_sm90():
    """ts.compile for a GPU target builds every group's kernel (the GPU default schedules,
    compiled to PTX for sm_90); without a CUDA device running it is a clear error."""
    for m in (models.resnet50(width=0.125, layers=(1, 1, 1, 1), image=32, classes=10),
              models.mobilenet_v2(width=0.25, layers=1, image=32, classes=10),
              models.bert_encoder(layers=1, hidden=64, heads=2, seq=16, vocab=100)):
        g = from_onnx(m)
        cm = ts.compile(g, "cuda -arch=sm_90")
        assert cm.kernels == len(cm.modules) == \
            len({n.signature for n in kernel_nodes(g)})
        for mod in cm.modules:
            assert ".target sm_90" in mod.get_source("ptx")
    if not ts.cuda_available():
        with pytest.raises(RuntimeError, match="without a CUDA device"):
            cm(*[np.zeros(v.shape, v.dtype) for v in g.inputs])


@pytest.mark.skipif(not ts.cuda_available(), reason="needs a CUDA device")
def test_models_run_on_the_gpu_as_onnxruntime_on_the_cpu():
    """A model compiled for the GPU runs there (weights and buffers on the device) and gives
    onnxruntime's outputs; host inputs are copied in, CUDA DLPack inputs read in place, outputs
    are device arrays that the next call does not overwrite."""
    mask = np.ones((1, 16), np.int64)
    mask[0, 11:] = 0
    for m, xs in ((models.resnet50(width=0.125, layers=(1, 1, 1, 1), image=32, classes=10),
                   {"input": f32(1, 3, 32, 32)}),
                  (models.mobilenet_v2(width=0.25, layers=1, image=32, classes=10),
                   {"input": f32(1, 3, 32, 32)}),
                  (models.bert_encoder(layers=1, hidden=64, heads=2, seq=16, vocab=100),
                   {"input_ids": RNG.integers(0, 100, (1, 16)), "attention_mask": mask})):
        g = from_onnx(m)
        want = reference(m, xs)
        cm = ts.compile(g, "cuda")
        got = cm(*[xs[v.name] for v in g.inputs])
        got = got if isinstance(got, list) else [got]
        for a, b in zip(got, want):
            assert "cuda" in str(a.device)
            assert rel_l2(a.numpy(), b) <= 1e-4
        again = cm(*[ts.nd.array(xs[v.name], device=ts.cuda(0)) for v in g.inputs])
        again = again if isinstance(again, list) else [again]
        for a, b in zip(again, got):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        with pytest.raises(ValueError, match="shape"):
            cm(*[np.zeros((1,) + tuple(v.shape), v.dtype) for v in g.inputs])


# --- untrusted input -----------------------------------------------------------------------

def relu_chain():
    return model([h.make_node("Relu", ["x"], ["a"], name="n1"),
                  h.make_node("Add", ["a", "c"], ["y"], name="n2")],
                 [("x", [2, 3])], [("y", [2, 3])], {"c": f32(2, 3)})


def test_malformed_models_get_clear_errors():
    m = relu_chain()
    m.graph.node[0].input[0] = "y"  # a cycle: n1 reads n2's output
    with pytest.raises(ModelError, match="cycle"):
        from_onnx(m)
    m = relu_chain()
    m.graph.node[1].input[0] = "nowhere"
    with pytest.raises(ModelError, match=r"node 'n2' \(Add\): input 'nowhere' is not defined"):
        from_onnx(m)
    m = relu_chain()
    m.graph.node[1].output[0] = "a"
    with pytest.raises(ModelError, match="output 'a' is defined twice"):
        from_onnx(m)
    m = relu_chain()
    del m.graph.initializer[:]
    with pytest.raises(ModelError, match="input 'c' is not defined"):
        from_onnx(m)
    m = relu_chain()
    m.graph.initializer[0].dims[:] = [2, 4]
    with pytest.raises(ModelError, match="initializer 'c'"):
        from_onnx(m)
    m = relu_chain()
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1 << 40
    with pytest.raises(ModelError, match="absurd extent"):
        from_onnx(m)
    m = relu_chain()
    m.graph.initializer[0].dims[:] = [1 << 20, 1 << 20]
    with pytest.raises(ModelError, match="initializer 'c'"):
        from_onnx(m)
    huge = model([h.make_node("ConstantOfShape", ["shape"], ["z"], name="zeros"),
                  h.make_node("Add", ["x", "z"], ["y"])], [("x", [2])], [("y", None)],
                 {"shape": np.array([1 << 20, 1 << 20], np.int64)})
    with pytest.raises(ModelError, match=r"node 'zeros' \(ConstantOfShape.*more than"):
        from_onnx(huge)
    with pytest.raises(ModelError, match="not an ONNX model"):
        from_onnx(b"\x08\x07garbage\xff\xff")


def test_fuzz_mutated_models_import_or_fail_clearly():
    """Random mutations of small models: each imports (and then runs like onnxruntime, when
    onnxruntime accepts it too) or raises ModelError; nothing else escapes."""
    rng = np.random.default_rng(3)
    base = models.mobilenet_v2(width=0.25, layers=1, image=16, classes=4)
    names = sorted({n for node in base.graph.node for n in list(node.input) + list(node.output)})
    for trial in range(60):
        m = onnx.ModelProto()
        m.CopyFrom(base)
        for _ in range(rng.integers(1, 3)):
            node = m.graph.node[int(rng.integers(len(m.graph.node)))]
            kind = rng.integers(5)
            if kind == 0 and node.input:
                node.input[int(rng.integers(len(node.input)))] = str(rng.choice(names))
            elif kind == 1 and node.attribute:
                a = node.attribute[int(rng.integers(len(node.attribute)))]
                if a.ints:
                    a.ints[int(rng.integers(len(a.ints)))] = int(rng.integers(-3, 1 << 20))
                elif a.type == onnx.AttributeProto.INT:
                    a.i = int(rng.integers(-3, 64))
            elif kind == 2:
                t = m.graph.initializer[int(rng.integers(len(m.graph.initializer)))]
                if t.dims:
                    t.dims[int(rng.integers(len(t.dims)))] = int(rng.integers(0, 1 << 31))
            elif kind == 3:
                node.op_type = str(rng.choice(["Relu", "Conv", "Softmax", "Foo", "Add"]))
            else:
                del m.graph.node[int(rng.integers(len(m.graph.node)))]
        try:
            from_onnx(m)
        except ModelError:
            pass
