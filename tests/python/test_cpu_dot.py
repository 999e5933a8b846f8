# The CPU's dot-product instructions through tensorize (docs/schedule.md, "The CPU's dot-product
# instructions"): the documented uint8 x int8 GEMM and its bfloat16 twin against numpy, with the
# instruction in the code where this CPU has it.
import numpy as np
import pytest

import tessel as ts
from util import requires_llvm

ml_dtypes = pytest.importorskip("ml_dtypes")


def packed_gemm(m, n, k, a_dtype, b_dtype, acc, lanes, group, intrin):
    A = ts.placeholder((m, k), dtype=a_dtype, name="A")
    B = ts.placeholder((k, n), dtype=b_dtype, name="B")
    Bp = ts.compute((n // lanes, k // group, lanes, group),
                    lambda jo, ko, j, q: B[ko * group + q, jo * lanes + j], name="Bp")
    r = ts.reduce_axis((0, k), name="r")
    C = ts.compute((m, n), lambda i, j: ts.sum(
        A[i, r].astype(acc) * Bp[j // lanes, r // group, j % lanes, r % group].astype(acc),
        axis=r), name="C")
    s = ts.create_schedule(C)
    jo, ji = s[C].split(C.op.axis[1], lanes)
    ko, ki = s[C].split(C.op.reduce_axis[0], group)
    s[C].reorder(C.op.axis[0], jo, ko, ji, ki)
    s[C].tensorize(ji, intrin)
    return s, [A, B, C]


@requires_llvm
@pytest.mark.parametrize("intrin,lanes", [("dot_16x4_u8s8", 16), ("dot_8x4_u8s8", 8)])
def test_uint8_int8_gemm(intrin, lanes):
    m, n, k = 7, 3 * lanes, 36
    s, args = packed_gemm(m, n, k, "uint8", "int8", "int32", lanes, 4, intrin)
    assert f"dot_product({lanes}, 4," in str(ts.lower(s, args))
    f = ts.build(s, args, target="llvm")
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    c = np.zeros((m, n), np.int32)
    f(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))
    has = ts.Target("llvm").has_feature
    if has("avx512vnni") and (lanes == 16 or has("avx512vl")) or (lanes == 8 and has("avxvnni")):
        assert "vpdpbusd" in f.get_source("asm")


@requires_llvm
def test_bfloat16_gemm():
    m, n, k = 5, 32, 38
    s, args = packed_gemm(m, n, k, "bfloat16", "bfloat16", "float32", 16, 2, "dot_16x2_bf16")
    f = ts.build(s, args, target="llvm")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float32).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((k, n)).astype(np.float32).astype(ml_dtypes.bfloat16)
    c = np.zeros((m, n), np.float32)
    f(a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
    if ts.Target("llvm").has_feature("avx512bf16"):
        assert "vdpbf16ps" in f.get_source("asm")


def test_the_target_says_which_features_it_has():
    assert not ts.Target("cuda -arch=sm_90").has_feature("avx512f")
    if "llvm" in ts.targets():
        assert ts.Target("llvm -mcpu=cascadelake").has_feature("avx512vnni")
        assert not ts.Target("llvm -mcpu=cascadelake -mattr=-avx512vnni").has_feature("avx512vnni")
