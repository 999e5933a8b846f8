"""conv2d on blocked activations (op.conv2d_nchwc) and its layout transforms: the same numbers
as conv2d_nchw, under the CPU default schedule, at odd shapes; the transforms' errors."""
import numpy as np
import pytest

import tessel as ts
from tessel import op


def _build(outputs, args):
    return ts.build(op.default_schedule(outputs, "llvm"), args, target="llvm")


@pytest.mark.parametrize("c,cb,h,w,k,kb,r,stride", [
    (24, 8, 9, 13, 32, 16, 3, 1),
    (32, 16, 11, 17, 48, 16, 3, 2),
    (16, 16, 5, 31, 64, 32, 1, 1),
    (3, 3, 12, 12, 16, 16, 7, 2),
])
def test_blocked_conv_equals_nchw_conv(c, cb, h, w, k, kb, r, stride):
    x = ts.placeholder((1, c, h, w), name="x")
    wt = ts.placeholder((k, c, r, r), name="w")
    y = op.relu(op.conv2d_nchw(x, wt, stride=stride, padding=r // 2))
    xb = ts.placeholder((1, c // cb, h, w, cb), name="xb")
    wb = ts.placeholder((k // kb, c // cb, r, r, cb, kb), name="wb")
    yb = op.relu(op.conv2d_nchwc(xb, wb, stride=stride, padding=r // 2))
    to_x, to_w = op.nchw_to_nchwc(x, cb), op.conv2d_weight_to_nchwc(wt, cb, kb)
    back = ts.placeholder(tuple(yb.shape), name="yb")
    from_y = op.nchwc_to_nchw(back)

    rng = np.random.default_rng(3)
    xa = rng.standard_normal((1, c, h, w)).astype("float32")
    wa = rng.standard_normal((k, c, r, r)).astype("float32")
    expected = np.zeros(tuple(y.shape), "float32")
    _build(y, [x, wt, y])(xa, wa, expected)

    xba = np.zeros(tuple(to_x.shape), "float32")
    _build(to_x, [x, to_x])(xa, xba)
    np.testing.assert_array_equal(xba, xa.reshape(1, c // cb, cb, h, w).transpose(0, 1, 3, 4, 2))
    wba = np.zeros(tuple(to_w.shape), "float32")
    _build(to_w, [wt, to_w])(wa, wba)
    yba = np.zeros(tuple(yb.shape), "float32")
    _build(yb, [xb, wb, yb])(xba, wba, yba)
    got = np.zeros(tuple(y.shape), "float32")
    _build(from_y, [back, from_y])(yba, got)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_blocked_layout_errors_name_the_parameter():
    with pytest.raises(ts.DSLError, match="block"):
        op.nchw_to_nchwc(ts.placeholder((1, 12, 4, 4)), 8)
    with pytest.raises(ts.DSLError, match="groups"):
        op.conv2d_nchwc(ts.placeholder((1, 2, 8, 8, 8)), ts.placeholder((2, 2, 3, 3, 8, 16)),
                        groups=2)
    with pytest.raises(ts.DSLError, match="'w'"):
        op.conv2d_nchwc(ts.placeholder((1, 2, 8, 8, 8)), ts.placeholder((2, 2, 3, 3, 16, 16)))
    with pytest.raises(ts.DSLError, match="kb"):
        op.conv2d_weight_to_nchwc(ts.placeholder((24, 12, 3, 3)), 4, 16)
