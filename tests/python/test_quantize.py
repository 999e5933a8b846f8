# Quantized operators (docs/operators.md, "Quantized operators"): requantize, qlinear_matmul,
# qlinear_dense and qlinear_conv2d_nchw under their default CPU schedules, compared bit for bit
# with a numpy implementation of onnxruntime's QLinearMatMul / QLinearConv (and with onnxruntime
# itself when it is installed); their errors.
import os

import numpy as np
import pytest

import tessel as ts
from util import HAVE_LLVM

op = ts.op
pytestmark = pytest.mark.skipif(not HAVE_LLVM, reason="tessel was built without LLVM")

PAIRS = [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")]


# --- numpy reference: onnxruntime's arithmetic ------------------------------------------------

def output_scale(x_scale, w_scale, y_scale):
    """ComputeOutputScale: (x_scale * w_scale) / y_scale, each operation in float32."""
    return (np.float32(x_scale) * np.asarray(w_scale, np.float32)) / np.float32(y_scale)


def requantize_ref(acc, multiplier, y_zp, dtype):
    """MlasRequantizeOutput: float32(acc) * multiplier, clamped to the type's range less the zero
    point, rounded half to even (np.rint), plus the zero point."""
    info = np.iinfo(dtype)
    v = acc.astype(np.int32).astype(np.float32) * multiplier.astype(np.float32)
    assert v.dtype == np.float32
    v = np.clip(v, np.float32(info.min - int(y_zp)), np.float32(info.max - int(y_zp)))
    return (np.rint(v).astype(np.int32) + int(y_zp)).astype(dtype)


def dense_acc(x, x_zp, w, w_zp, bias):
    """sum_k (x - x_zp) * (w - w_zp) + bias, exactly (int64), w of shape (N, K)."""
    acc = (x.astype(np.int64) - int(x_zp)) @ (w.astype(np.int64) - w_zp.reshape(-1, 1)).T
    return acc if bias is None else acc + bias


def conv_acc(x, x_zp, w, w_zp, bias, stride, pad, dilation, groups):
    """QLinearConv's accumulator: x padded with its zero point (a real zero)."""
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xz = np.pad(x.astype(np.int64) - int(x_zp), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    wz = w.astype(np.int64) - w_zp.reshape(-1, 1, 1, 1)
    oh = (h + 2 * pad - dilation * (r - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (s - 1) - 1) // stride + 1
    acc = np.zeros((n, k, oh, ow), np.int64)
    kg = k // groups
    for ry in range(r):
        for rx in range(s):
            y0, x0 = ry * dilation, rx * dilation
            rows = slice(y0, y0 + stride * (oh - 1) + 1, stride)
            cols = slice(x0, x0 + stride * (ow - 1) + 1, stride)
            patch = xz[:, :, rows, cols]
            for g in range(groups):
                acc[:, g * kg:(g + 1) * kg] += np.einsum(
                    "nchw,kc->nkhw", patch[:, g * cg:(g + 1) * cg],
                    wz[g * kg:(g + 1) * kg, :, ry, rx])
    return acc if bias is None else acc + bias.reshape(1, -1, 1, 1)


# --- running tessel ---------------------------------------------------------------------------

def run_default(inputs, arrays, output):
    """`output` under its default "llvm" schedule, run on `arrays`; the result as numpy."""
    f = ts.build(op.default_schedule([output], "llvm"), list(inputs) + [output], target="llvm")
    out = np.zeros([int(d) for d in output.shape], output.dtype)
    f(*arrays, out)
    return out


def operand(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def params(name, values, dtype):
    """A placeholder for a scale or zero point and its numpy value (its shape)."""
    a = np.asarray(values, dtype)
    return ts.placeholder(a.shape, dtype=dtype, name=name), a


class Case:
    """Random operands of a quantized product with their scales and zero points, as numpy values
    and placeholders in ONNX's order (x, x_scale, x_zero_point, w, ..., y_zero_point, B)."""

    def __init__(self, rng, x_shape, w_shape, dtypes, channels, per_channel, bias,
                 scalar_shape=()):
        x_dtype, w_dtype, self.y_dtype = dtypes
        per = (channels,) if per_channel else scalar_shape
        self.values = {
            "x": operand(rng, x_shape, x_dtype),
            "x_scale": np.asarray(rng.uniform(0.01, 0.05, scalar_shape), np.float32),
            "x_zero_point": operand(rng, scalar_shape, x_dtype),
            "w": operand(rng, w_shape, w_dtype),
            "w_scale": np.asarray(rng.uniform(0.004, 0.008, per), np.float32),
            "w_zero_point": operand(rng, per, w_dtype),
            "y_scale": np.ones(scalar_shape, np.float32),  # calibrate() sets them
            "y_zero_point": np.zeros(scalar_shape, self.y_dtype),
        }
        if bias:
            self.values["B"] = rng.integers(-20000, 20000, channels).astype(np.int32)
        self.channels = channels

    def calibrate(self, acc):
        """y_scale and y_zero_point as a calibration would choose them: the real range of the
        middle 94 % of the results, widened to hold 0, maps onto the output type; the rest
        saturate."""
        v = self.values
        real = acc * (v["x_scale"].flat[0] * v["w_scale"].mean())
        lo, hi = min(np.percentile(real, 3), 0), max(np.percentile(real, 97), 0)
        info = np.iinfo(self.y_dtype)
        v["y_scale"][...] = np.float32((hi - lo) / (info.max - info.min))
        zero = np.rint(info.min - lo / v["y_scale"].flat[0])
        v["y_zero_point"][...] = np.clip(zero, info.min, info.max)

    def placeholders(self):
        return {n: ts.placeholder(a.shape, dtype=str(a.dtype), name=n)
                for n, a in self.values.items()}

    def reference(self, acc, channel_shape):
        """The requantized accumulator, per channel along `channel_shape`."""
        v = self.values
        mult = output_scale(v["x_scale"].flat[0], v["w_scale"], v["y_scale"].flat[0])
        mult = np.broadcast_to(mult, (self.channels,)).reshape(channel_shape)
        return requantize_ref(acc, mult, v["y_zero_point"].flat[0], self.y_dtype), acc * mult

    def w_zero_points(self):
        return np.broadcast_to(self.values["w_zero_point"].reshape(-1), (self.channels,))

    def run(self, build, channel_shape):
        """build(**placeholders) under its default schedule, and the reference."""
        P = self.placeholders()
        Y = build(**P)
        assert Y.dtype == self.y_dtype
        got = run_default(list(P.values()), list(self.values.values()), Y)
        return got, self.reference(self.acc, channel_shape)


def dense_case(rng, dtypes, per_channel, bias, m=7, n=13, k=37):
    c = Case(rng, (m, k), (n, k), dtypes, n, per_channel, bias)
    v = c.values
    c.acc = dense_acc(v["x"], v["x_zero_point"], v["w"], c.w_zero_points(), v.get("B"))
    c.calibrate(c.acc)
    return c


# --- tests --------------------------------------------------------------------------------------

def check_saturates_some(ref, dtype):
    info = np.iinfo(dtype)
    assert ((ref == info.max) | (ref == info.min)).any()  # some results saturate
    assert ((ref > info.min) & (ref < info.max)).mean() > 0.6  # most do not


@pytest.mark.parametrize("x_dtype,w_dtype", PAIRS)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_qlinear_dense_matches_onnxruntime_arithmetic(x_dtype, w_dtype, per_channel, bias):
    rng = np.random.default_rng([PAIRS.index((x_dtype, w_dtype)), per_channel, bias])
    y_dtype = "int8" if per_channel else "uint8"
    c = dense_case(rng, (x_dtype, w_dtype, y_dtype), per_channel, bias)
    got, (ref, _) = c.run(op.qlinear_dense, (13,))
    assert got.shape == (7, 13)
    np.testing.assert_array_equal(got, ref)
    check_saturates_some(ref, y_dtype)


@pytest.mark.parametrize("x_dtype,w_dtype", PAIRS)
def test_exact_ties_round_half_to_even(x_dtype, w_dtype):
    # Multipliers of 1/8 and 3/16 (scales with few bits): float32(acc) * m is exact, and about
    # every eighth accumulator lands on a tie.
    rng = np.random.default_rng(3)
    c = dense_case(rng, (x_dtype, w_dtype, "int8"), True, True)
    v = c.values
    v["x_scale"][...] = 0.5
    v["w_scale"][:] = [0.25, 0.375] * 6 + [0.25]
    v["y_scale"][...] = 1.0
    v["y_zero_point"][...] = 1
    v["B"][:] = 0
    for t in ("x", "w"):  # small differences from the zero points: small results
        zp = v[t + "_zero_point"].astype(int).reshape(-1, 1)
        info = np.iinfo(v[t].dtype)
        v[t][:] = np.clip(zp + rng.integers(-4, 5, v[t].shape), info.min, info.max)
    c.acc = dense_acc(v["x"], v["x_zero_point"], v["w"], c.w_zero_points(), v["B"])
    got, (ref, scaled) = c.run(op.qlinear_dense, (13,))
    ties = scaled - np.floor(scaled) == 0.5
    assert ties.sum() >= 5
    np.testing.assert_array_equal(got, ref)
    inside = ties & (np.abs(scaled) < 100)
    assert inside.sum() >= 5
    # Half to even, not half away from zero: every tie rounds to an even number.
    rounded = got[inside].astype(int) - int(v["y_zero_point"])
    np.testing.assert_array_equal(rounded % 2, 0)
    np.testing.assert_array_equal(np.abs(rounded - scaled[inside]), 0.5)


@pytest.mark.parametrize("x_dtype,w_dtype", PAIRS)
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_matmul_matches_onnxruntime_arithmetic(x_dtype, w_dtype, per_channel):
    rng = np.random.default_rng([17, PAIRS.index((x_dtype, w_dtype)), per_channel])
    m, n, k = 7, 13, 37
    c = Case(rng, (m, k), (k, n), (x_dtype, w_dtype, "uint8"), n, per_channel, False,
             scalar_shape=(1,))
    v = c.values
    c.acc = dense_acc(v["x"], v["x_zero_point"][0], v["w"].T, c.w_zero_points(), None)
    c.calibrate(c.acc)

    def build(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point):
        return op.qlinear_matmul(a=x, a_scale=x_scale, a_zero_point=x_zero_point, b=w,
                                 b_scale=w_scale, b_zero_point=w_zero_point, y_scale=y_scale,
                                 y_zero_point=y_zero_point)

    got, (ref, _) = c.run(build, (n,))
    np.testing.assert_array_equal(got, ref)
    check_saturates_some(ref, "uint8")


def conv_case(rng, dtypes, per_channel, bias, groups=1, dilation=1):
    c = Case(rng, (2, 6, 9, 11), (9, 6 // groups, 3, 3), dtypes, 9, per_channel, bias)
    v = c.values
    c.acc = conv_acc(v["x"], v["x_zero_point"], v["w"], c.w_zero_points(), v.get("B"), 2, 1,
                     dilation, groups)
    c.calibrate(c.acc)
    c.attrs = {"stride": 2, "padding": 1, "dilation": dilation, "groups": groups}
    return c


@pytest.mark.parametrize("x_dtype,w_dtype", PAIRS)
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_qlinear_conv2d_matches_onnxruntime_arithmetic(x_dtype, w_dtype, per_channel, bias):
    rng = np.random.default_rng([2, PAIRS.index((x_dtype, w_dtype)), per_channel, bias])
    c = conv_case(rng, (x_dtype, w_dtype, "int8"), per_channel, bias)
    got, (ref, _) = c.run(lambda **p: op.qlinear_conv2d_nchw(**p, **c.attrs), (1, 9, 1, 1))
    assert got.shape == (2, 9, 5, 6)
    np.testing.assert_array_equal(got, ref)
    check_saturates_some(ref, "int8")


def test_qlinear_conv2d_groups_and_dilation():
    rng = np.random.default_rng(23)
    c = conv_case(rng, ("uint8", "int8", "uint8"), True, True, groups=3, dilation=2)
    got, (ref, _) = c.run(lambda **p: op.qlinear_conv2d_nchw(**p, **c.attrs), (1, 9, 1, 1))
    np.testing.assert_array_equal(got, ref)


def test_the_multiplier_is_rounded_as_onnxruntime_rounds_it():
    # Accumulators (biases, as x = x_zero_point) on which float32((x_scale * w_scale) / y_scale)
    # rounds differently from the exact multiplier, and from x_scale * (w_scale / y_scale).
    rng = np.random.default_rng(44)
    xs, ws, ys = rng.uniform([0.005, 0.005, 1], [0.02, 0.02, 2]).astype(np.float32)
    m32 = (xs * ws) / ys  # about 1e-4: accumulators up to a million stay inside int8
    acc = np.arange(1, int(127 / m32), dtype=np.int32)
    ort = np.rint(acc.astype(np.float32) * m32)
    exact = np.rint(acc * (float(xs) * float(ws) / float(ys)))
    other = np.rint(acc.astype(np.float32) * (xs * (ws / ys)))
    not_exact, not_other = np.flatnonzero(ort != exact)[:6], np.flatnonzero(ort != other)[:6]
    assert len(not_exact) >= 3 and len(not_other) >= 3
    differs = np.union1d(not_exact, not_other)
    c = Case(rng, (1, 1), (len(differs), 1), ("uint8", "int8", "int8"), len(differs), False, True)
    v = c.values
    v.update(x_scale=np.asarray(xs), w_scale=np.asarray(ws), y_scale=np.asarray(ys),
             y_zero_point=np.asarray(0, np.int8), B=acc[differs])
    v["x"][:] = v["x_zero_point"]
    c.acc = acc[differs].reshape(1, -1)
    got, (ref, _) = c.run(op.qlinear_dense, (len(differs),))
    np.testing.assert_array_equal(ref, ort[differs].reshape(1, -1))
    np.testing.assert_array_equal(got, ref)


def test_requantize_per_tensor_and_per_channel():
    rng = np.random.default_rng(5)
    acc = rng.integers(-40000, 40000, (3, 7, 5)).astype(np.int32)
    acc[0, 0, :] = [-5, -3, 3, 5, 7]  # ties at a scale of 0.5
    X = ts.placeholder(acc.shape, dtype="int32", name="x")
    S, s = params("scale", np.float32(0.5), "float32")
    Z, z = params("zero_point", np.uint8(3), "uint8")
    got = run_default([X, S, Z], [acc, s, z], op.requantize(X, S, Z))
    np.testing.assert_array_equal(got, requantize_ref(acc, s, 3, np.uint8))
    assert got[0, 0].tolist() == [1, 1, 5, 5, 7]
    Sc, sc = params("scale", rng.uniform(0.001, 0.01, 5), "float32")
    Zc, zc = params("zero_point", operand(rng, (5,), "int8"), "int8")
    got = run_default([X, Sc, Zc], [acc, sc, zc], op.requantize(X, Sc, Zc, axis=-1))
    ref = np.stack([requantize_ref(acc[..., j], sc[j:j + 1], zc[j], np.int8) for j in range(5)],
                   axis=-1)
    np.testing.assert_array_equal(got, ref)


def test_workloads_are_registered():
    assert [p for p, _ in ts.workload_params("op.qlinear_dense")] == [
        "M", "N", "K", "per_channel", "bias", "x_dtype", "w_dtype", "dtype"]
    task = ts.SearchTask("op.qlinear_conv2d_nchw",
                         [1, 8, 9, 9, 16, [3], [2], [1], [1], 1, 1, 1, "uint8", "int8", "uint8"],
                         target="llvm")
    assert task.dag_hash


def test_errors_name_the_operator_and_the_parameter():
    x = ts.placeholder((4, 8), dtype="uint8", name="x")
    w = ts.placeholder((3, 8), dtype="int8", name="w")
    f = ts.placeholder((4, 8), dtype="float32", name="f")
    s = ts.placeholder((), dtype="float32", name="s")
    zu = ts.placeholder((), dtype="uint8", name="zu")
    zs = ts.placeholder((1,), dtype="int8", name="zs")
    with pytest.raises(TypeError, match="qlinear_dense: parameter 'x' must be int8 or uint8, "
                                        "got float32"):
        op.qlinear_dense(f, s, zu, w, s, zs, s, zu)
    z16 = ts.placeholder((), dtype="int16", name="z16")
    with pytest.raises(TypeError,
                       match="parameter 'y_zero_point' must be int8 or uint8, got int16"):
        op.qlinear_dense(x, s, zu, w, s, zs, s, z16)
    with pytest.raises(TypeError,
                       match="parameter 'w_zero_point' has dtype uint8 but 'w' has int8"):
        op.qlinear_dense(x, s, zu, w, s, zu, s, zu)
    s5 = ts.placeholder((5,), dtype="float32", name="s5")
    with pytest.raises(TypeError, match=r"parameter 'w_scale' must hold one value \(shape \(\) or "
                                        r"\(1,\)\) or one per row of w \(3,\), got shape \(5,\)"):
        op.qlinear_dense(x, s, zu, w, s5, zs, s, zu)
    s3 = ts.placeholder((3,), dtype="float32", name="s3")
    with pytest.raises(TypeError, match=r"parameter 'x_scale' must hold one value \(shape \(\) or "
                                        r"\(1,\)\), got shape \(3,\)"):
        op.qlinear_dense(x, s3, zu, w, s, zs, s, zu)
    with pytest.raises(TypeError, match="qlinear_matmul: parameter 'b_scale' must be float32"):
        op.qlinear_matmul(x, s, zu, ts.placeholder((8, 3), dtype="int8"), zs, zs, s, zu)
    with pytest.raises(TypeError, match="qlinear_dense: parameter 'B' must be int32"):
        op.qlinear_dense(x, s, zu, w, s, zs, s, zu, B=ts.placeholder((3,), dtype="float32"))
    img = ts.placeholder((1, 4, 5, 5), dtype="uint8", name="img")
    k = ts.placeholder((6, 4, 3, 3), dtype="int8", name="k")
    with pytest.raises(TypeError, match=r"qlinear_conv2d_nchw: parameter 'w_scale' .* one per "
                                        r"output channel \(6,\)"):
        op.qlinear_conv2d_nchw(img, s, zu, k, s5, zs, s, zu)
    with pytest.raises(TypeError, match="requantize: parameter 'x' must be int32"):
        op.requantize(x, s, zu)
    # Other mixes of dtypes in a product stay errors: only 8-bit integers mix.
    with pytest.raises(TypeError, match="matmul: parameter 'b' has dtype int16"):
        op.matmul(x, ts.placeholder((8, 3), dtype="int16"))
    with pytest.raises(TypeError, match="matmul: parameter 'b' has dtype int8"):
        op.matmul(f, ts.placeholder((8, 3), dtype="int8"))


def test_matches_onnxruntime_when_installed():
    ort = pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    # Without VNNI onnxruntime multiplies uint8 x int8 with vpmaddubsw, whose pairs of products
    # saturate at int16 (on a 2-core Zen 3, 286 of 540 outputs differed): not a reference there.
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    if "avx512_vnni" not in flags and "avx_vnni" not in flags:
        pytest.skip("onnxruntime's uint8 x int8 saturates at int16 on CPUs without VNNI")
    helper = onnx.helper
    rng = np.random.default_rng(11)
    # onnxruntime's QLinearConv takes per-channel scales with one weight zero point, and x and y
    # of one type (a uint8 x with an int8 y has no CPU kernel: NOT_IMPLEMENTED).
    c = conv_case(rng, ("uint8", "int8", "uint8"), False, True)
    c.values["w_scale"] = rng.uniform(0.004, 0.008, 9).astype(np.float32)
    got, (ref, _) = c.run(lambda **p: op.qlinear_conv2d_nchw(**p, **c.attrs), (1, 9, 1, 1))
    node = helper.make_node("QLinearConv", list(c.values), ["y"], strides=[2, 2],
                            pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node], "qconv", [], [helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, None)],
        initializer=[onnx.numpy_helper.from_array(a, n) for n, a in c.values.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = sess.run(None, {})[0]
    np.testing.assert_array_equal(ref, expected)
    np.testing.assert_array_equal(got, expected)
