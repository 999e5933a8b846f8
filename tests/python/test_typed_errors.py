# Every Python entry point gives typed errors (issue 22): the public API is walked, every function
# and every method of the public classes called with arguments of a wrong type, and each must raise
# TypeError (or ValueError for a wrong value) whose message names a parameter, never a pybind11
# conversion message.
import re

import numpy as np
import pytest

import tessel as ts
from tessel import _typed_errors

PYBIND = ("incompatible function arguments", "Unable to cast", "incompatible constructor",
          "TypeError: __init__")


class Bogus:
    """A value no parameter accepts."""


def signature(fn):
    doc = (getattr(fn, "__doc__", "") or "").splitlines()
    params = _typed_errors._params("\n".join(doc))
    first = next((line for line in doc if _typed_errors._SIG.match(line)), "")
    required = [p for p, _ in params if p != "self" and
                not re.search(rf"\b{re.escape(p)}\s*:[^,()]*=", first)]
    return [p for p, _ in params if p != "self"], required


def check_typed(call, name, params):
    try:
        call()
    except (TypeError, ValueError) as e:
        message = str(e)
        assert not any(p in message for p in PYBIND), f"{name}: pybind11's message: {message}"
        named = any(re.search(rf"\b{re.escape(p)}\b", message) for p in params)
        says_what = re.search(r"expected|must be|\bis\b|\bare an?\b|takes|one of|accepts",
                              message)
        assert (named and says_what) or not params, \
            f"{name}: the message does not name the parameter ({params}) and what it accepts: {message}"
        return True
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"{name}: {type(e).__name__} instead of TypeError/ValueError: {e}")
    return False  # accepted: an argument the function may take as an object


def public_functions():
    out = []
    for mod in (ts, ts.te, ts.tir, ts.op):
        for name in dir(mod):
            obj = getattr(mod, name)
            if name.startswith("_") or isinstance(obj, type) or not callable(obj):
                continue
            wrapped = getattr(obj, "__wrapped__", obj)
            if type(wrapped).__name__ != "builtin_function_or_method":
                continue
            out.append((f"{mod.__name__}.{name}", obj))
    return out


@pytest.mark.parametrize("name,fn", public_functions(), ids=lambda v: v if isinstance(v, str) else "")
def test_functions_raise_typed_errors(name, fn):
    params, required = signature(getattr(fn, "__wrapped__", fn))
    if not params:
        return
    check_typed(lambda: fn(*[Bogus()] * max(len(required), 1)), name, params)


def instances():
    A = ts.placeholder((8, 8), name="A")
    B = ts.compute((8, 8), lambda i, j: A[i, j] * 2.0, name="B")
    s = ts.create_schedule(B)
    out = {"Schedule": s, "Stage": s[B], "Tensor": B, "Operation": B.op,
           "Target": ts.Target("llvm"), "Device": ts.cpu(0),
           "NDArray": ts.nd.array(np.zeros(4, "float32")), "IterVar": B.op.axis[0],
           "LoweredFunc": ts.lower(s, [A, B])}
    if "llvm" in ts.targets():
        m = ts.build(s, [A, B])
        out["Module"] = m
        out["Function"] = m["main"]
    return out


def public_methods():
    out = []
    for cls_name, obj in instances().items():
        for name in dir(type(obj)):
            if name.startswith("_"):
                continue
            attr = getattr(type(obj), name)
            if isinstance(attr, property) or not callable(attr):
                continue
            out.append((f"{cls_name}.{name}", cls_name, name))
    return out


@pytest.mark.parametrize("label,cls_name,name", public_methods(),
                         ids=lambda v: v if isinstance(v, str) and "." in v else "")
def test_methods_raise_typed_errors(label, cls_name, name):
    obj = instances()[cls_name]
    method = getattr(obj, name)
    params, required = signature(getattr(type(obj), name))
    if not params or name in ("copy", "normalize", "numpy", "save", "c_header", "to_python",
                              "to_json", "loop_nest"):
        return
    check_typed(lambda: method(*[Bogus()] * max(len(required), 1)), label, params)


def test_the_stage_primitives_name_what_they_accept():
    A = ts.placeholder((8, 8), name="A")
    B = ts.compute((8, 8), lambda i, j: A[i, j] * 2.0, name="B")
    s = ts.create_schedule(B)
    for call, what in [
        (lambda: s[B].split(B.op.axis[0], factor="4"), "'factor' must be an int"),
        (lambda: s[B].split(Bogus(), factor=4), "a loop is a leaf position"),
        (lambda: s[B].tile(B.op.axis[0], B.op.axis[1], 4, 2.5), "'y_factor' must be an int"),
        (lambda: s[B].bind(B.op.axis[0], 3), "must be a str naming the annotation"),
        (lambda: s[B].pragma(B.op.axis[0], 5, 1), "'pragma_type' must be a str"),
        (lambda: s.cache_read(A, 3.0, [B]), "'scope' must be a str"),
        (lambda: ts.create_schedule("B"), "outputs are a Tensor, an Operation"),
        (lambda: ts.lower(s, [A, 3]), "'args' holds tensors"),
        (lambda: ts.build(s, A), "'args' is a list of tensors"),
        (lambda: ts.nd.array(np.zeros(2), ts.cpu(), copy="yes"), "'copy'"),
        (lambda: ts.te.thread_axis("threadIdx.w"), "'tag' is one of"),
        (lambda: ts.reduce_axis(5), "'dom' is (begin, end)"),
        (lambda: ts.compute((4,), 3), "'fcompute' is a function"),
        (lambda: ts.transform.PassContext(opt_level="3"), "'opt_level'"),
    ]:
        with pytest.raises((TypeError, ValueError), match=re.escape(what)):
            call()


def test_a_failed_init_leaves_no_unconstructed_instance_in_the_traceback():
    # Regression: an __init__ that raised left `self` in the typed wrapper's frame, and repr() of
    # that unconstructed instance (pytest shows a failing test's locals) crashed the process.
    with pytest.raises(ts.DSLError) as info:
        ts.SearchTask("no_such_workload", (1,), target="llvm")
    tb = info.value.__traceback__
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            repr(value)
            for item in value if isinstance(value, (tuple, list)) else ():
                repr(item)
        tb = tb.tb_next
