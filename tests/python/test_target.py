# ts.Target: parsing, the canonical string, queries, errors, and target= taking a string or a Target.
import pickle

import numpy as np
import pytest

import tessel as ts
from util import rand, requires_llvm


def test_two_spellings_give_one_canonical_string():
    a = ts.Target("llvm -mcpu=haswell -fast-math -num-cores=4")
    b = ts.Target("llvm  -num-cores=4 -fast-math -mcpu=haswell")
    assert str(a) == str(b) == a.str() == "llvm -mcpu=haswell -num-cores=4 -fast-math"
    assert a == b and hash(a) == hash(b)
    assert ts.Target(a.str()) == a
    assert repr(a).startswith("tessel.Target('llvm -mcpu=haswell -num-cores=4 -fast-math')  # 4 cores")
    assert pickle.loads(pickle.dumps(a)) == a


def test_host_target_is_spelled_out():
    t = ts.Target("llvm")
    assert t.kind == "llvm" and not t.is_gpu
    assert "-mcpu=" + t.cpu in str(t) and t.cpu
    assert f"-num-cores={t.num_cores}" in str(t)
    assert ts.Target.host() == t
    assert t.float_mode == "contract"
    assert t.cache_line_bytes == 64
    assert t.vector_lanes("float32") >= 1


def test_cache_sizes_default_to_the_host_and_are_set_in_the_string():
    host = ts.Target("llvm")
    assert 0 < host.l1d_cache_bytes <= host.l2_cache_bytes <= host.l3_cache_bytes
    assert "-l1d" not in str(host)  # the host's sizes are not spelled out
    assert f"L1d {host.l1d_cache_bytes // 1024} KiB" in repr(host) or "L1d" in host.describe()
    t = ts.Target("llvm -mcpu=haswell -l2=1536k -l1d=32768 -num-cores=2")
    assert (t.l1d_cache_bytes, t.l2_cache_bytes) == (32 << 10, 1536 << 10)
    assert t.l3_cache_bytes == host.l3_cache_bytes
    assert str(t) == "llvm -mcpu=haswell -num-cores=2 -l1d=32K -l2=1536K"
    assert ts.Target(str(t)) == t
    assert "L1d 32 KiB, L2 1536 KiB" in t.describe()
    assert "(caches from target string and" in t.describe()
    for bad, match in [("-l2=2X", "bad -l2 value '2X'"), ("-l1d=0", "bad -l1d value"),
                       ("-l3=", "-l3 needs a value"), ("-l1d=64K -l2=32K", "smaller than")]:
        with pytest.raises(ts.CompileError, match=match):
            ts.Target("llvm -mcpu=haswell " + bad)


def test_cpu_queries():
    t = ts.Target("llvm -mcpu=skylake-avx512 -num-cores=16 -strict-float")
    assert t.vector_lanes("float32") == 16 and t.vector_lanes("float64") == 8
    assert t.num_cores == 16 and t.float_mode == "strict"
    with pytest.raises(ts.CompileError, match="CPU target"):
        t.max_threads_per_block


def test_gpu_queries():
    t = ts.Target("cuda -arch=sm_80 -fast-math")
    assert t.kind == "cuda" and t.is_gpu and t.arch == "sm_80"
    assert str(t) == "cuda -arch=sm_80 -fast-math" and t.float_mode == "fast"
    assert t.vector_lanes("float32") == 4 and t.cache_line_bytes == 128
    assert t.warp_size == 32 and t.max_vthread_extent == 8
    if not t.gpu_limits_from_driver:
        assert t.max_threads_per_block == 1024
        assert t.max_shared_memory_per_block == 48 * 1024
        assert t.max_shared_memory_per_block_optin == 163 * 1024
        assert t.max_registers_per_block == 65536
        assert t.sm_count == 108 == t.num_cores
    assert "sm_90" in ts.Target.known_cuda_archs()


def test_unknown_keys_and_values_list_the_legal_ones():
    with pytest.raises(ts.CompileError, match="unknown kind 'opencl'.*llvm, cuda"):
        ts.Target("opencl")
    with pytest.raises(ts.CompileError, match="unknown option '-O3' for llvm.*-mcpu"):
        ts.Target("llvm -O3")
    with pytest.raises(ts.CompileError, match="unknown architecture 'sm_42'.*sm_90"):
        ts.Target("cuda -arch=sm_42")
    with pytest.raises(TypeError, match="string or a tessel.Target"):
        ts.lower_pass_names(42)


def test_lower_takes_a_target_and_stop_after():
    A = ts.placeholder((30, 10), name="A")
    B = ts.compute((30, 10), lambda i, j: A[i, j] * 2, name="B")
    s = ts.create_schedule(B)
    s[B].split(B.op.axis[1], 4)
    names = ts.lower_pass_names("llvm")
    assert names.index("partition_loops") + 1 == names.index("storage_flatten")
    assert "split_host_device" in ts.lower_pass_names(ts.Target("cuda -arch=sm_90"))
    early = str(ts.lower(s, [A, B], target="llvm", stop_after="partition_loops"))
    full = str(ts.lower(s, [A, B], target=ts.Target("llvm")))
    assert "B[i0, i1.outer * 4 + i1.inner]" in early  # multi-dimensional, before flattening
    assert "B[i0 * 10 + " in full
    with pytest.raises(ts.ScheduleError, match="unknown pass 'flatten'.*storage_flatten"):
        ts.lower(s, [A, B], target="llvm", stop_after="flatten")


def test_lower_for_cuda_includes_the_host_device_split():
    A = ts.placeholder((256,), name="A")
    B = ts.compute((256,), lambda i: A[i] + 1, name="B")
    s = ts.create_schedule(B)
    bx, tx = s[B].split(B.op.axis[0], 64)
    s[B].bind(bx, "blockIdx.x")
    s[B].bind(tx, "threadIdx.x")
    assert "device_kernel" in str(ts.lower(s, [A, B], target="cuda -arch=sm_90"))
    assert "device_kernel" not in str(ts.lower(s, [A, B]))
    a = rand(256)
    b = np.zeros(256, "float32")
    ts.lower(s, [A, B], target="cuda -arch=sm_90").run(a, b)
    np.testing.assert_allclose(b, a + 1)


@requires_llvm
def test_build_takes_a_string_or_a_target():
    A = ts.placeholder((64,), name="A")
    B = ts.compute((64,), lambda i: A[i] + 1, name="B")
    s = ts.create_schedule(B)
    for target in ("llvm", ts.Target("llvm"), ts.Target("llvm -strict-float")):
        f = ts.build(s, [A, B], target=target)
        a, b = rand(64), np.zeros(64, "float32")
        f(a, b)
        np.testing.assert_allclose(b, a + 1)
    g = ts.build(ts.lower(s, [A, B]), target=ts.Target("llvm"))
    a, b = rand(64), np.zeros(64, "float32")
    g(a, b)
    np.testing.assert_allclose(b, a + 1)
    with pytest.raises(ts.CompileError, match="unknown option"):
        ts.build(s, [A, B], target="llvm -bogus")
