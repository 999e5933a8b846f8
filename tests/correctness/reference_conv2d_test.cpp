// Reference interpreter: NCHW 3x3 convolution with padding (lazily guarded reads) and strides.
#include <gtest/gtest.h>

#include <chrono>

#include "tessel/Tolerance.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

struct ConvCase {
    int n, c, h, w, k, stride, pad;
    int oh() const { return (h + 2 * pad - 3) / stride + 1; }
    int ow() const { return (w + 2 * pad - 3) / stride + 1; }
};

Tensor conv2d(const ConvCase& p, const Tensor& X, const Tensor& W) {
    IterVar rc = reduce_axis({0, p.c}, "rc");
    IterVar ry = reduce_axis({0, 3}, "ry");
    IterVar rx = reduce_axis({0, 3}, "rx");
    return compute(
        {p.n, p.k, p.oh(), p.ow()},
        [&](Var b, Var k, Var y, Var x) {
            Expr iy = y * p.stride + ry.var() - p.pad;
            Expr ix = x * p.stride + rx.var() - p.pad;
            Expr inside = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
            Expr v = if_then_else(inside, X(b, rc, iy, ix), make_zero(Float(32)));
            return sum(v * W(k, rc, ry, rx), {rc, ry, rx});
        },
        "conv");
}

HostArray conv2d_loops(const ConvCase& p, const HostArray& x, const HostArray& w) {
    HostArray out(Float(32), {p.n, p.k, p.oh(), p.ow()}, ArrayStorage::Ideal);
    for (int b = 0; b < p.n; ++b)
        for (int k = 0; k < p.k; ++k)
            for (int y = 0; y < p.oh(); ++y)
                for (int xo = 0; xo < p.ow(); ++xo) {
                    double acc = 0;
                    for (int c = 0; c < p.c; ++c)
                        for (int ry = 0; ry < 3; ++ry)
                            for (int rx = 0; rx < 3; ++rx) {
                                int iy = y * p.stride + ry - p.pad, ix = xo * p.stride + rx - p.pad;
                                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                                acc += x.at({b, c, iy, ix}) * w.at({k, c, ry, rx});
                            }
                    out.set(out.offset_of({b, k, y, xo}), acc);
                }
    return out;
}

void check_conv(const ConvCase& p) {
    Tensor X = placeholder({p.n, p.c, p.h, p.w}, Float(32), "X");
    Tensor W = placeholder({p.k, p.c, 3, 3}, Float(32), "W");
    Tensor C = conv2d(p, X, W);
    HostArray x = HostArray::random(Float(32), {p.n, p.c, p.h, p.w}, 31);
    HostArray w = HostArray::random(Float(32), {p.k, p.c, 3, 3}, 32);
    HostArray got = evaluate_reference({C}, {{X, x}, {W, w}})[0];
    EXPECT_CLOSE_TO_REFERENCE(got, conv2d_loops(p, x, w), tolerance_for(Float(64), p.c * 9));
}

}  // namespace

TEST(ReferenceConv2d, Stride1Pad1) {
    check_conv({2, 3, 8, 7, 4, 1, 1});
}

TEST(ReferenceConv2d, Stride2Pad1) {
    check_conv({1, 4, 9, 10, 3, 2, 1});
}

TEST(ReferenceConv2d, Stride2NoPad) {
    check_conv({1, 2, 7, 7, 2, 2, 0});
}

TEST(ReferenceConv2d, Size16x32x32) {
    check_conv({1, 16, 32, 32, 16, 1, 1});
}
