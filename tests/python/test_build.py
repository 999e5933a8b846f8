# build(): modules and functions, sources, serialisation, lifetimes, timing, and the GIL.
import gc
import threading
import time

import numpy as np
import pytest

import tessel as ts
from util import rand, requires_llvm

pytestmark = requires_llvm


def add_one(n=64):
    A = ts.placeholder((n,), name="A")
    B = ts.compute((n,), lambda i: A[i] + 1, name="B")
    return A, B


def test_build_and_call_with_numpy_and_ndarrays():
    A, B = add_one()
    f = ts.build(ts.create_schedule(B), [A, B], target="llvm")
    assert isinstance(f, ts.Module) and f.kernel_names == ["main"]
    a = rand(64)
    b = np.zeros(64, "float32")
    f(a, b)
    np.testing.assert_allclose(b, a + 1)
    bn = ts.nd.empty((64,))
    f(ts.nd.array(a), bn)
    np.testing.assert_allclose(bn.numpy(), a + 1)
    g = f["main"]
    assert g.name == "main" and g.arg_names == ["A", "B"]
    assert f.get_function("main").name == "main"
    with pytest.raises(ts.TesselRuntimeError, match="main"):
        f["missing"]


def test_build_a_lowered_function_with_options():
    A, B = add_one()
    s = ts.create_schedule(B)
    f = ts.build(s, [A, B], target="llvm -mattr=+avx2", name="add_one")
    assert f.kernel_names == ["add_one"]
    lowered = ts.lower(s, [A, B], name="lowered")
    g = ts.build(lowered, target="llvm")
    a, b = rand(64), np.zeros(64, "float32")
    g(a, b)
    np.testing.assert_allclose(b, a + 1)


def test_get_source():
    A, B = add_one()
    f = ts.build(ts.create_schedule(B), [A, B])
    assert "ll" in f.source_kinds
    src = f.get_source()
    assert "define" in src and src == f.get_source("ll")
    with pytest.raises(ts.TesselRuntimeError):
        f.get_source("cuda")


def test_save_and_load_module():
    A, B = add_one()
    data = ts.build(ts.create_schedule(B), [A, B]).save()
    assert isinstance(data, bytes) and data.startswith(b"TSLMODUL")
    g = ts.load_module(data)
    a, b = rand(64), np.zeros(64, "float32")
    g(a, b)
    np.testing.assert_allclose(b, a + 1)
    with pytest.raises(ts.TesselRuntimeError):
        ts.load_module(data[:20])


def test_function_keeps_module_and_code_alive():
    A, B = add_one()
    g = ts.build(ts.create_schedule(B), [A, B])["main"]
    gc.collect()  # the module object is gone; the function still holds it
    a, b = rand(64), np.zeros(64, "float32")
    g(a, b)
    np.testing.assert_allclose(b, a + 1)
    assert g.module.kernel_names == ["main"]


def test_time_evaluator():
    A, B = add_one()
    f = ts.build(ts.create_schedule(B), [A, B])
    r = f.time_evaluator(min_repeats=5, min_total_seconds=0.0)(rand(64), np.zeros(64, "float32"))
    assert len(r.samples) >= 5 and r.median > 0 and r.min <= r.median <= r.max
    r2 = f["main"].time_evaluator(warmup=0, min_repeats=2, min_total_seconds=0.0)(rand(64), np.zeros(64, "float32"))
    assert len(r2.samples) >= 2


def slow_kernel():
    # A deliberately slow kernel: ~n^3 work on one thread.
    n = 512
    A = ts.placeholder((n, n), name="A")
    k = ts.reduce_axis((0, n), name="k")
    C = ts.compute((n, n), lambda i, j: ts.sum(A[i, k] * A[k, j], axis=k), name="C")
    return A, C, ts.build(ts.create_schedule(C), [A, C])


def test_gil_is_released_while_a_kernel_runs():
    A, C, f = slow_kernel()
    a = rand(*A.shape)
    c = np.zeros(A.shape, "float32")
    t0 = time.perf_counter()
    f(a, c)
    alone = time.perf_counter() - t0
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    before = len(ticks)
    t0 = time.perf_counter()
    f(a, c)
    during = [x for x in ticks[before:] if t0 <= x <= time.perf_counter()]
    stop.set()
    t.join()
    if alone < 0.03:
        pytest.skip(f"the kernel is too fast ({alone:.3f} s) to observe the ticker")
    # A held GIL would freeze the ticker for the whole call.
    assert len(during) >= 3


def test_in_place_arguments_may_share_memory():
    A, B = add_one()
    s = ts.create_schedule(B)
    strict = ts.build(s, [A, B], name="strict")
    shared = ts.build(s, [A, B], name="shared", in_place=["A", "B"])
    a = ts.nd.array(rand(64))
    before = a.numpy().copy()
    with pytest.raises(ts.TesselRuntimeError, match="overlap"):
        strict(a, a)
    np.testing.assert_array_equal(a.numpy(), before)  # nothing written
    shared(a, a)
    np.testing.assert_allclose(a.numpy(), before + 1)
    with pytest.raises(ts.CompileError, match="'C'"):
        ts.build(s, [A, B], in_place=["C"])


def test_export_library_object_and_header(tmp_path):
    import ctypes

    A, B = add_one()
    f = ts.build(ts.create_schedule(B), [A, B], name="add_one")
    f.export_library(str(tmp_path / "libadd_one.so"))
    f.export_object(str(tmp_path / "add_one.o"))
    f.export_header(str(tmp_path / "add_one.h"))
    header = (tmp_path / "add_one.h").read_text()
    assert "int32_t add_one(void* const* args, const int64_t* shape_vars);" in header
    assert "add_one_call(const float* A, float* B)" in header
    assert header == f.c_header()
    assert (tmp_path / "add_one.o").stat().st_size > 0
    # The kernel calls no runtime function, so the library loads on its own.
    lib = ctypes.CDLL(str(tmp_path / "libadd_one.so"))
    a, b = rand(64), np.zeros(64, "float32")
    args = (ctypes.c_void_p * 2)(a.ctypes.data, b.ctypes.data)
    assert lib.add_one(args, None) == 0
    np.testing.assert_allclose(b, a + 1)
    with pytest.raises(ts.CompileError, match="main"):
        ts.build(ts.create_schedule(B), [A, B]).export_object(str(tmp_path / "main.o"))
