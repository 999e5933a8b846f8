# Workloads and DAGs as data: ts.register_workload / ts.make_workload (the C++ registry, built-in
# workloads included), workload keys, and ts.dag_to_json / ts.dag_from_json.
import json

import numpy as np
import pytest

import tessel as ts
from tessel import _tessel


@ts.register_workload
def py_matmul_relu(n, m, k, dtype):
    A = ts.placeholder((n, k), dtype=dtype, name="A")
    B = ts.placeholder((k, m), dtype=dtype, name="B")
    r = ts.reduce_axis((0, k), name="r")
    C = ts.compute((n, m), lambda i, j: ts.sum(A[i, r] * B[r, j], axis=r), name="C")
    D = ts.compute((n, m), lambda i, j: ts.max(C[i, j], 0.0), name="D")
    return [A, B, D]


def test_builtin_workloads_are_registered():
    names = ts.workload_names()
    for name in ("matmul", "softmax", "conv2d", "max_pool", "layer_norm", "argmax"):
        assert name in names
    assert ts.workload_params("matmul") == [
        ("M", "int"), ("N", "int"), ("K", "int"), ("dtype", "dtype")]


def test_make_builtin_workload():
    dag = ts.make_workload("matmul", [8, 6, 4, "float32"])
    assert [t.name for t in dag.inputs] == ["A", "B"]
    assert [t.name for t in dag.outputs] == ["C"]
    assert len(dag.args) == 3
    assert ts.flop_count(dag.outputs) == 2 * 8 * 6 * 4


def test_python_workload_is_in_the_registry():
    assert "py_matmul_relu" in ts.workload_names()
    assert [p for p, _ in ts.workload_params("py_matmul_relu")] == ["n", "m", "k", "dtype"]
    dag = ts.make_workload("py_matmul_relu", (4, 5, 3, "float32"))
    assert [t.name for t in dag.inputs] == ["A", "B"] and dag.outputs[0].name == "D"


def test_python_workload_built_on_a_cpp_thread():
    text = _tessel._make_workload_on_cpp_thread("py_matmul_relu", [4, 5, 3, "float32"])
    doc = json.loads(text)
    assert [op["name"] for op in doc["ops"]] == ["A", "B", "C", "D"]


def test_decorator_with_a_name_and_override():
    def build(n):
        A = ts.placeholder((n,), name="A")
        return [A, ts.compute((n,), lambda i: A[i] * 2.0, name="B")]

    assert ts.register_workload("py_double")(build) is build
    with pytest.raises(ts.DSLError, match="already registered"):
        ts.register_workload("py_double", build)
    ts.register_workload("py_double", build, override=True)
    assert ts.make_workload("py_double", [3]).outputs[0].name == "B"
    assert ts.unregister_workload("py_double")


def test_errors_name_the_workload():
    with pytest.raises(ts.DSLError, match="unknown workload 'nope'.*registered:.*matmul"):
        ts.make_workload("nope", [])
    with pytest.raises(ts.DSLError, match=r"parameter 1 'N' must be a int"):
        ts.make_workload("matmul", [4, "x", 4, "float32"])
    with pytest.raises(ts.DSLError, match=r"expects 4 parameter"):
        ts.make_workload("py_matmul_relu", [4])

    @ts.register_workload
    def py_bad_order(n):
        A = ts.placeholder((n,), name="A")
        B = ts.compute((n,), lambda i: A[i] + 1.0, name="B")
        return [B, A]

    with pytest.raises(ts.DSLError, match="returned placeholder 'A' after a computed tensor"):
        ts.make_workload("py_bad_order", [3])
    ts.unregister_workload("py_bad_order")


def test_python_exceptions_of_a_builder_come_back():
    @ts.register_workload
    def py_raises(n):
        raise KeyError("from the builder")

    with pytest.raises(KeyError, match="from the builder"):
        ts.make_workload("py_raises", [1])
    ts.unregister_workload("py_raises")


def test_workload_key_round_trips():
    key = ts.workload_key("matmul", [512, 512, 256, "float32"])
    assert key == '["matmul",512,512,256,"float32"]'
    assert ts.parse_workload_key(key) == ("matmul", [512, 512, 256, "float32"])
    key = ts.workload_key("conv", [1.5, [3, 3], np.dtype("float16")])
    assert json.loads(key) == ["conv", 1.5, [3, 3], {"dtype": "float16"}]
    assert ts.parse_workload_key(key) == ("conv", [1.5, [3, 3], "float16"])


def test_dag_json_round_trip_evaluates_the_same():
    dag = ts.make_workload("py_matmul_relu", [6, 5, 4, "float32"])
    text = ts.dag_to_json(dag)
    copy = ts.dag_from_json(text)
    assert ts.dag_hash(copy.outputs) == ts.dag_hash(dag.outputs)
    assert ts.dag_to_json(copy) == text
    assert json.loads(ts.dag_to_json(dag.outputs, indent=2)) == json.loads(text)
    s1, s2 = ts.create_schedule(dag.outputs), ts.create_schedule(copy.outputs)
    for s, d in ((s1, dag), (s2, copy)):
        s[d.outputs[0]].split(d.outputs[0].op.axis[0], 2)
    assert str(ts.lower(s1, dag.args)) == str(ts.lower(s2, copy.args))


def test_malformed_dag_json_is_a_dsl_error():
    with pytest.raises(ts.DSLError, match="malformed JSON"):
        ts.dag_from_json("{")
    doc = json.loads(ts.dag_to_json(ts.make_workload("softmax", [2, 3, "float32"])))
    doc["version"] = 99
    with pytest.raises(ts.DSLError, match="unsupported format version 99"):
        ts.dag_from_json(json.dumps(doc))
