# tessel.op against NumPy: every operator built by the library, scheduled by its default CPU
# schedule, JIT-compiled and run on odd shapes (prime sizes, stride 2 on odd inputs, dilation 2,
# groups 3); default GPU schedules lower; DSLError (TypeError) names the bad parameter.
import math

import numpy as np
import pytest

import tessel as ts
from util import rand, run

op = ts.op


def check(inputs, arrays, outputs, expected, rtol=1e-4, atol=1e-5):
    outs = outputs if isinstance(outputs, list) else [outputs]
    got = run(list(inputs) + outs, arrays, schedule=op.default_schedule(outs, "llvm"))
    got = got if isinstance(got, list) else [got]
    exp = expected if isinstance(expected, list) else [expected]
    for g, e in zip(got, exp):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def ph(shape, name="x", dtype="float32"):
    return ts.placeholder(shape, dtype=dtype, name=name)


def np_conv2d_nchw(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dil=(1, 1), groups=1):
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (xp.shape[2] - (r - 1) * dil[0] - 1) // stride[0] + 1
    ow = (xp.shape[3] - (s - 1) * dil[1] - 1) // stride[1] + 1
    out = np.zeros((n, k, oh, ow))
    kg = k // groups
    for g in range(groups):
        for i in range(r):
            for j in range(s):
                y0, x0 = i * dil[0], j * dil[1]
                patch = xp[:, g * cg:(g + 1) * cg, y0:y0 + stride[0] * (oh - 1) + 1:stride[0],
                           x0:x0 + stride[1] * (ow - 1) + 1:stride[1]]
                out[:, g * kg:(g + 1) * kg] += np.einsum(
                    "nchw,kc->nkhw", patch, w[g * kg:(g + 1) * kg, :, i, j])
    return out


def test_elementwise_broadcast_and_activations():
    a, b = ph((5, 1, 7), "a"), ph((3, 1), "b")
    xa, xb = rand(5, 1, 7), rand(3, 1, seed=1)
    check([a, b], [xa, xb], op.add(a, b), xa + xb)
    check([a, b], [xa, xb], op.maximum(op.multiply(a, b), op.subtract(a, b)),
          np.maximum(xa * xb, xa - xb))
    x = ph((7, 13))
    v = rand(7, 13)
    erf = np.vectorize(math.erf)
    check([x], [v], op.gelu(x), v * 0.5 * (1 + erf(v / math.sqrt(2))), rtol=1e-3, atol=1e-5)
    check([x], [v], op.silu(x), v / (1 + np.exp(-v)), rtol=1e-3)
    check([x], [v], op.relu(x), np.maximum(v, 0))
    check([x], [v], op.tanh(x), np.tanh(v), rtol=1e-3, atol=1e-5)
    check([x], [v], op.cast(op.clip(x, -0.5, 0.25), "int32"),
          np.clip(v, -0.5, 0.25).astype("int32"))
    c = ph((7, 1), "c", "bool")
    cv = rand(7, 1) > 0
    check([c, x], [cv, v], op.where(c, x, op.negative(x)), np.where(cv, v, -v))


def test_matmul_batch_matmul_dense():
    a, b = ph((11, 13), "a"), ph((17, 11), "b")
    va, vb = rand(11, 13), rand(17, 11, seed=1)
    check([a, b], [va, vb], op.matmul(a, b, transpose_a=True, transpose_b=True), va.T @ vb.T)
    p, q = ph((3, 7, 5), "p"), ph((1, 5, 9), "q")
    vp, vq = rand(3, 7, 5), rand(1, 5, 9, seed=1)
    check([p, q], [vp, vq], op.batch_matmul(p, q), vp @ vq)
    x, w, bias = ph((6, 19), "x"), ph((13, 19), "w"), ph((13,), "bias")
    vx, vw, vbias = rand(6, 19), rand(13, 19, seed=1), rand(13, seed=2)
    check([x, w, bias], [vx, vw, vbias], op.dense(x, w, bias, activation="relu"),
          np.maximum(vx @ vw.T + vbias, 0))


@pytest.mark.parametrize("stride,pad,dil,groups,cin,cout", [
    (2, (1, 1, 1, 1), 1, 1, 3, 4),      # stride 2 on an odd input
    (1, (1, 0, 2, 1), 2, 1, 2, 3),      # dilation 2, asymmetric padding
    (1, (1, 1, 1, 1), 1, 3, 6, 9),      # groups 3
])
def test_conv2d_nchw_and_nhwc(stride, pad, dil, groups, cin, cout):
    vx, vw = rand(1, cin, 11, 9), rand(cout, cin // groups, 3, 3, seed=1)
    expected = np_conv2d_nchw(vx, vw, (stride, stride), pad, (dil, dil), groups)
    x, w = ph(vx.shape, "x"), ph(vw.shape, "w")
    y = op.conv2d_nchw(x, w, stride=stride, padding=pad, dilation=dil, groups=groups)
    check([x, w], [vx, vw], y, expected, rtol=1e-4, atol=1e-4)
    xh, wh = ph((1, 11, 9, cin), "xh"), ph((3, 3, cin // groups, cout), "wh")
    yh = op.conv2d_nhwc(xh, wh, stride=stride, padding=pad, dilation=dil, groups=groups)
    check([xh, wh], [vx.transpose(0, 2, 3, 1).copy(), vw.transpose(2, 3, 1, 0).copy()], yh,
          expected.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)


def test_depthwise_and_transposed_conv():
    vx, vw = rand(1, 3, 9, 8), rand(6, 1, 3, 3, seed=1)
    x, w = ph(vx.shape, "x"), ph(vw.shape, "w")
    check([x, w], [vx, vw], op.depthwise_conv2d_nchw(x, w, stride=2, padding=1),
          np_conv2d_nchw(vx, vw, (2, 2), (1, 1, 1, 1), (1, 1), 3), atol=1e-4)
    vx, vw = rand(1, 3, 5, 4), rand(3, 2, 3, 3, seed=1)
    s, p, opad = 2, 1, (1, 0)
    full = np.zeros((1, 2, (5 - 1) * s + 3 + opad[0], (4 - 1) * s + 3 + opad[1]))
    for i in range(3):
        for j in range(3):
            full[:, :, i:i + s * 4 + 1:s, j:j + s * 3 + 1:s] += np.einsum(
                "nchw,ck->nkhw", vx, vw[:, :, i, j])
    oh, ow = (5 - 1) * s - 2 * p + 3 + opad[0], (4 - 1) * s - 2 * p + 3 + opad[1]
    x, w = ph(vx.shape, "x"), ph(vw.shape, "w")
    y = op.conv2d_transpose_nchw(x, w, stride=s, padding=p, output_padding=opad)
    check([x, w], [vx, vw], y, full[:, :, p:p + oh, p:p + ow], atol=1e-4)


def test_pooling():
    vx = rand(1, 3, 11, 9)
    x = ph(vx.shape)
    xp = np.pad(vx, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    mx = np.stack([np.stack([xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
                             for j in range(5)], -1) for i in range(6)], -2)
    check([x], [vx], op.pool2d(x, "max", 3, stride=2, padding=1), mx)
    xz = np.pad(vx, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones_like(vx), ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = [(slice(2 * i, 2 * i + 3), slice(2 * j, 2 * j + 3)) for i in range(6) for j in range(5)]
    sums = np.stack([xz[:, :, a, b].sum(axis=(2, 3)) for a, b in win], -1).reshape(1, 3, 6, 5)
    cnt = np.stack([ones[:, :, a, b].sum(axis=(2, 3)) for a, b in win], -1).reshape(1, 3, 6, 5)
    check([x], [vx], op.pool2d(x, "avg", 3, stride=2, padding=1), sums / 9)
    check([x], [vx], op.pool2d(x, "avg", 3, stride=2, padding=1, count_include_pad=False),
          sums / cnt)
    check([x], [vx], op.global_pool2d(x, "avg"), vx.mean(axis=(2, 3), keepdims=True))
    ad = np.zeros((1, 3, 3, 2))
    for i in range(3):
        for j in range(2):
            h0, h1 = i * 11 // 3, -(-(i + 1) * 11 // 3)
            w0, w1 = j * 9 // 2, -(-(j + 1) * 9 // 2)
            ad[:, :, i, j] = vx[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    check([x], [vx], op.adaptive_avg_pool2d(x, (3, 2)), ad)


def test_norms():
    vx = rand(3, 13, 5)
    x = ph(vx.shape)
    e = np.exp(vx - vx.max(axis=1, keepdims=True))
    check([x], [vx], op.softmax(x, axis=1), e / e.sum(axis=1, keepdims=True))
    check([x], [vx], op.log_softmax(x, axis=1),
          np.log(e / e.sum(axis=1, keepdims=True)), atol=1e-4)
    vy, vg, vb = rand(6, 11), rand(11, seed=1), rand(11, seed=2)
    y, g, b = ph(vy.shape, "y"), ph((11,), "g"), ph((11,), "b")
    mu, var = vy.mean(-1, keepdims=True), vy.var(-1, keepdims=True)
    check([y, g, b], [vy, vg, vb], op.layer_norm(y, g, b), (vy - mu) / np.sqrt(var + 1e-5) * vg + vb,
          atol=1e-4)
    check([y, g], [vy, vg], op.rms_norm(y, g),
          vy / np.sqrt((vy ** 2).mean(-1, keepdims=True) + 1e-6) * vg, atol=1e-4)
    vz = rand(2, 3, 5, 7)
    z = ph(vz.shape, "z")
    vs = [ph((3,), n) for n in ("gamma", "beta", "mean", "var")]
    vv = [rand(3, seed=i) for i in range(3)] + [np.abs(rand(3, seed=3)) + 0.5]
    c = lambda a: a.reshape(1, 3, 1, 1)  # noqa: E731
    check([z] + vs, [vz] + vv, op.batch_norm(z, *vs),
          (vz - c(vv[2])) / np.sqrt(c(vv[3]) + 1e-5) * c(vv[0]) + c(vv[1]), atol=1e-4)


def test_reductions():
    vx = rand(5, 7, 3)
    x = ph(vx.shape)
    check([x], [vx], op.sum(x, axis=(0, 2)), vx.sum(axis=(0, 2)))
    check([x], [vx], op.mean(x, axis=1, keepdims=True), vx.mean(axis=1, keepdims=True))
    check([x], [vx], op.max(x, keepdims=True), vx.max(keepdims=True))
    check([x], [vx], op.min(x, axis=-1), vx.min(axis=-1))
    check([x], [vx], op.argmax(x, 1), vx.argmax(axis=1).astype("int32"))
    check([x], [vx], op.argmin(x, 2, keepdims=True),
          vx.argmin(axis=2)[..., None].astype("int32"))


def test_argmax_and_argmin_are_vectorised_and_keep_numpys_ties_and_nans():
    # A row of a vector-width multiple: the (index, value) pairs factored into vector lanes
    # (rfactor), then reduced across the lanes; the first of equal maxima and the first NaN win,
    # as in NumPy.
    vx = rand(6, 256)
    vx[1, :] = 0.25                          # all equal: index 0
    vx[2, 17] = vx[2, 200] = 9.0             # a tie in different lanes: the first
    vx[3, 40] = np.nan                       # a NaN wins
    vx[3, 90] = np.nan
    vx[4, 255] = 9.0                         # the last element
    x = ph(vx.shape)
    y = op.argmax(x, 1)
    assert "rfactor" in op.default_schedule([y], "llvm").to_python()
    check([x], [vx], y, vx.argmax(axis=1).astype("int32"))
    vx[4, 255] = -9.0
    check([x], [vx], op.argmin(x, 1), vx.argmin(axis=1).astype("int32"))
    # Over columns: vectorised along the output (lanes of columns), the same semantics.
    vx[5, 3] = vx[0, 3]
    vx[4, 7] = np.nan
    y0 = op.argmin(x, 0)
    assert "vectorize" in op.default_schedule([y0], "llvm").to_python()
    check([x], [vx], y0, vx.argmin(axis=0).astype("int32"))
    check([x], [vx], op.argmax(x, 0), vx.argmax(axis=0).astype("int32"))


def test_layout_ops():
    vx = rand(3, 5, 7)
    x = ph(vx.shape)
    check([x], [vx], op.transpose(x, (2, 0, 1)), vx.transpose(2, 0, 1))
    check([x], [vx], op.reshape(x, (15, -1)), vx.reshape(15, -1))
    va, vb = rand(3, 2, 7), rand(3, 4, 7, seed=1)
    a, b = ph(va.shape, "a"), ph(vb.shape, "b")
    check([a, b], [va, vb], op.concatenate([a, b], axis=1), np.concatenate([va, vb], 1))
    check([b], [vb], op.split(b, [1, 3], axis=1), np.split(vb, [1, 3], axis=1))
    check([x], [vx], op.pad(x, (1, 0, 2), (0, 2, 1), value=1.5),
          np.pad(vx, ((1, 0), (0, 2), (2, 1)), constant_values=1.5))
    idx = ph((2, 3), "idx", "int32")
    vi = np.array([[0, 4, 2], [1, 1, 3]], dtype="int32")
    check([x, idx], [vx, vi], op.take(x, idx, axis=1), np.take(vx, vi, axis=1))


def test_default_gpu_schedules_lower():
    x, w = ph((1, 3, 9, 9), "x"), ph((4, 3, 3, 3), "w")
    y = op.relu(op.conv2d_nchw(x, w, padding=1))
    s = op.default_schedule(y, ts.Target("cuda -arch=sm_90"))
    assert "threadIdx" in str(ts.lower(s, [x, w, y]))


def gpu_interpret(inputs, arrays, output, expected, rtol=1e-4, atol=1e-5):
    """The default cuda schedule, run as an SPMD program in the loop interpreter and compiled by
    NVRTC for sm_90."""
    s = op.default_schedule(output, ts.Target("cuda -arch=sm_90"))
    out = np.full(expected.shape, np.nan, dtype="float32")
    ts.lower(s, list(inputs) + [output]).run(*arrays, out)
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol)
    assert "__global__" in ts.build(s, list(inputs) + [output],
                                    target="cuda -arch=sm_90").get_source("cu")


def test_default_gpu_schedules_of_norms_matmul_and_conv_run_in_the_interpreter():
    vx = rand(37, 130)
    x = ph(vx.shape)
    e = np.exp(vx - vx.max(axis=1, keepdims=True))
    gpu_interpret([x], [vx], op.softmax(x), e / e.sum(axis=1, keepdims=True))
    vg, vb = rand(130, seed=1), rand(130, seed=2)
    g, b = ph((130,), "g"), ph((130,), "b")
    mu, var = vx.mean(1, keepdims=True), vx.var(1, keepdims=True)
    gpu_interpret([x, g, b], [vx, vg, vb], op.layer_norm(x, g, b),
                  (vx - mu) / np.sqrt(var + 1e-5) * vg + vb)
    va, vw = rand(67, 37), rand(37, 71, seed=1)
    a, w = ph(va.shape, "a"), ph(vw.shape, "w")
    gpu_interpret([a, w], [va, vw], op.relu(op.matmul(a, w)), np.maximum(va @ vw, 0))
    vi, vk = rand(1, 19, 13, 11), rand(20, 19, 3, 3, seed=1)
    i, k = ph(vi.shape, "i"), ph(vk.shape, "k")
    gpu_interpret([i, k], [vi, vk], op.conv2d_nchw(i, k, stride=2, padding=1),
                  np_conv2d_nchw(vi, vk, stride=(2, 2), pad=(1, 1, 1, 1)))


@pytest.mark.parametrize("build,param", [
    (lambda: op.conv2d_nchw(ph((1, 3, 8, 8)), ph((4, 3, 3, 3), "w"), padding=-1), "padding"),
    (lambda: op.conv2d_nchw(ph((1, 3, 8, 8)), ph((4, 2, 3, 3), "w")), "w"),
    (lambda: op.conv2d_nchw(ph((1, 3, 8, 8)), ph((4, 3, 3, 3), "w"), stride=0), "stride"),
    (lambda: op.conv2d_nchw(ph((1, 3, 4, 4)), ph((4, 3, 7, 7), "w"), padding=1), "w"),
    (lambda: op.conv2d_nchw(ph((1, 4, 8, 8)), ph((4, 2, 3, 3), "w"), groups=3), "groups"),
    (lambda: op.matmul(ph((3, 4)), ph((5, 6), "b")), "b"),
    (lambda: op.add(ph((3, 4)), ph((3,), "b")), "broadcast"),
    (lambda: op.sum(ph((3, 4)), axis=2), "axis"),
    (lambda: op.transpose(ph((3, 4)), (0, 0)), "axes"),
    (lambda: op.pool2d(ph((1, 1, 4, 4)), "max", 3, padding=2), "padding"),
])
def test_bad_parameters_raise_dsl_error_naming_them(build, param):
    with pytest.raises(ts.DSLError, match=param):
        build()


def test_workloads_and_presets():
    dag = ts.make_workload("op.conv2d_nchw", [1, 6, 9, 9, 9, [3], [2], [1], [1], 3, "float32"])
    assert len(dag.outputs) == 1
    layers = op.network_preset("resnet50")
    assert sum(c for w, _, c in layers if w == "op.conv2d_nchw") == 53
    for name, params, _ in op.network_preset("bert_base_layer"):
        ts.make_workload(name, params)
