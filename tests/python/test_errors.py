# Every C++ error type maps to a Python exception: a subclass of tessel.TesselError and of the
# matching built-in (DSLError -> TypeError, ScheduleError -> ValueError, the rest ->
# RuntimeError), carrying the full message.
import numpy as np
import pytest

import tessel as ts
from tessel import _tessel
from util import requires_llvm

CASES = [
    ("DSLError", ts.DSLError, TypeError),
    ("ScheduleError", ts.ScheduleError, ValueError),
    ("CompileError", ts.CompileError, RuntimeError),
    ("RuntimeError", ts.TesselRuntimeError, RuntimeError),
    ("InternalError", ts.InternalError, RuntimeError),
]


@pytest.mark.parametrize("kind,cls,builtin", CASES)
def test_each_cpp_error_type_maps(kind, cls, builtin):
    message = f"{kind}: line one\nline two with the loop nest"
    with pytest.raises(cls) as info:
        _tessel._throw_for_testing(kind, message)
    assert isinstance(info.value, builtin)
    assert isinstance(info.value, ts.TesselError)
    assert str(info.value) == message  # the full message, newlines included


def test_base_error_maps_to_tessel_error():
    with pytest.raises(ts.TesselError, match="base"):
        _tessel._throw_for_testing("Error", "base")


def test_real_dsl_error():
    A = ts.placeholder((4, 4), name="A")
    with pytest.raises(TypeError, match="A"):
        A[1]  # wrong index count


def test_real_schedule_error_names_primitive_and_stage():
    A = ts.placeholder((16,), name="A")
    B = ts.compute((16,), lambda i: A[i] + 1, name="B")
    s = ts.create_schedule(B)
    with pytest.raises(ValueError) as info:
        s[B].split(B.op.axis[0], factor=0)
    assert "split" in str(info.value) and "B" in str(info.value)
    assert s.num_steps == 0  # a failed primitive leaves the schedule unchanged


def test_real_compile_error_for_unknown_target():
    A = ts.placeholder((4,), name="A")
    B = ts.compute((4,), lambda i: A[i] * 2, name="B")
    s = ts.create_schedule(B)
    with pytest.raises(ts.CompileError):
        ts.build(s, [A, B], target="nonsense")


@requires_llvm
def test_real_runtime_error_for_wrong_shape():
    A = ts.placeholder((4,), name="A")
    B = ts.compute((4,), lambda i: A[i] * 2, name="B")
    f = ts.build(ts.create_schedule(B), [A, B])
    with pytest.raises(ts.TesselRuntimeError, match="shape"):
        f(np.zeros(5, "float32"), np.zeros(4, "float32"))
    with pytest.raises(RuntimeError, match="dtype"):
        f(np.zeros(4, "float64"), np.zeros(4, "float32"))
    with pytest.raises(RuntimeError):
        f(np.zeros(4, "float32"))  # argument count


@pytest.mark.parametrize(
    "call",
    [
        lambda: ts.placeholder((-1, 2)),
        lambda: ts.placeholder((2,), dtype="float33"),
        lambda: ts.placeholder("abc"),
        lambda: ts.compute((4,), 5),
        lambda: ts.reduce_axis((0,)),
        lambda: ts.create_schedule(5),
        lambda: ts.sum(ts.var("x")),
        lambda: ts.nd.array(np.zeros(3, dtype=complex)),
        lambda: ts.nd.empty((-1,)),
        lambda: ts.load_module(b"garbage"),
        lambda: ts.device("tpu"),
        lambda: ts.const(2**70),
        lambda: ts.nd.from_dlpack(3),
    ],
)
def test_bad_input_raises_never_crashes(call):
    with pytest.raises((TypeError, ValueError, RuntimeError)):
        call()
