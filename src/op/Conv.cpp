// Convolutions (op/Conv.h).
#include "tessel/op/Conv.h"

#include <functional>

#include "op/OpUtil.h"
#include "tessel/op/Transform.h"

namespace tessel::op {

using internal::bad_param;

namespace {

void check_params(const Conv2DParams& p, const char* op) {
    for (int64_t s : p.stride)
        if (s < 1) bad_param(op, "stride", "must be at least 1, got " + std::to_string(s));
    for (int64_t d : p.dilation)
        if (d < 1) bad_param(op, "dilation", "must be at least 1, got " + std::to_string(d));
    for (int64_t pad : p.padding)
        if (pad < 0) bad_param(op, "padding", "must not be negative, got " + std::to_string(pad));
    if (p.groups < 1)
        bad_param(op, "groups", "must be at least 1, got " + std::to_string(p.groups));
}

// Checks the channels of input (C) and weight (K filters of `wc` channels each) for `groups`.
void check_channels(int64_t c, int64_t k, int64_t wc, int64_t groups, const char* op) {
    if (c % groups != 0 || k % groups != 0)
        bad_param(op, "groups",
                  "(" + std::to_string(groups) + ") must divide the input channels (" +
                      std::to_string(c) + ") and the output channels (" + std::to_string(k) + ")");
    if (wc * groups != c)
        bad_param(op, "w",
                  "has " + std::to_string(wc) + " input channels per group but x has " +
                      std::to_string(c) + " channels in " + std::to_string(groups) + " groups");
}

// The output extent along one axis, checking that the dilated kernel fits the padded input.
int64_t out_extent(int64_t in, int64_t kernel, int64_t s, int64_t before, int64_t after, int64_t d,
                   const char* op) {
    int64_t dilated = (kernel - 1) * d + 1, padded = in + before + after;
    if (dilated > padded)
        bad_param(op, "w",
                  "has a (dilated) kernel extent of " + std::to_string(dilated) +
                      ", larger than the padded input extent " + std::to_string(padded));
    return (padded - dilated) / s + 1;
}

// x zero-padded on its axes `hy` and `wx` (x itself when there is no padding).
Tensor pad_hw(const Tensor& x, size_t hy, size_t wx, const Conv2DParams& p,
              const std::string& name) {
    if (p.padding == std::array<int64_t, 4>{0, 0, 0, 0}) return x;
    std::vector<int64_t> before(x.ndim(), 0), after(x.ndim(), 0);
    before[hy] = p.padding[0], before[wx] = p.padding[1];
    after[hy] = p.padding[2], after[wx] = p.padding[3];
    return pad(x, before, after, 0.0, name + ".pad");
}

}  // namespace

Conv2DParams conv_params(int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
    return {{stride, stride}, {padding, padding, padding, padding}, {dilation, dilation}, groups};
}

int64_t conv_output_extent(int64_t in, int64_t kernel, int64_t stride, int64_t pad_before,
                           int64_t pad_after, int64_t dilation) {
    return (in + pad_before + pad_after - (kernel - 1) * dilation - 1) / stride + 1;
}

namespace {

// Checks a convolution's operands: x of rank `x_rank`, w of rank `w_rank`, their dtypes, the
// parameters.
void check_operands(const Tensor& x, const Tensor& w, size_t x_rank, size_t w_rank,
                    const Conv2DParams& p, const char* op) {
    internal::check_rank(x, x_rank, op, "x");
    internal::check_rank(w, w_rank, op, "w");
    internal::check_product_dtypes(x, w, op, "w");
    check_params(p, op);
}

// The output's height and width for an input of h x w and a window of r x s.
std::array<int64_t, 2> out_extents(int64_t h, int64_t w, int64_t r, int64_t s,
                                   const Conv2DParams& p, const char* op) {
    return {out_extent(h, r, p.stride[0], p.padding[0], p.padding[2], p.dilation[0], op),
            out_extent(w, s, p.stride[1], p.padding[1], p.padding[3], p.dilation[1], op)};
}

}  // namespace

namespace internal {

Conv2DGeometry check_conv2d_nchw(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                                 const char* op) {
    check_operands(x, w, 4, 4, p, op);
    Conv2DGeometry g{constant_shape(x, op, "x"), constant_shape(w, op, "w"), 0, 0};
    check_channels(g.x[1], g.w[0], g.w[1], p.groups, op);
    const std::array<int64_t, 2> out = out_extents(g.x[2], g.x[3], g.w[2], g.w[3], p, op);
    g.oh = out[0];
    g.ow = out[1];
    return g;
}

Tensor conv2d_nchw_of_padded(const Tensor& padded, const Tensor& w, const Conv2DParams& p,
                             const Conv2DGeometry& g, const Accumulation& acc,
                             const std::string& name) {
    const int64_t kg = g.w[0] / p.groups, cg = g.w[1];
    IterVar rc = reduce_axis({0, make_const(Int(32), cg)}, "rc");
    IterVar ry = reduce_axis({0, make_const(Int(32), g.w[2])}, "ry");
    IterVar rx = reduce_axis({0, make_const(Int(32), g.w[3])}, "rx");
    return reduction_stage(
        {g.x[0], g.w[0], g.oh, g.ow}, acc,
        [&](const std::vector<Var>& v) {
            Var n = v[0], k = v[1], y = v[2], xx = v[3];
            Expr c = p.groups == 1 ? Expr(rc.var()) : floordiv(k, int(kg)) * int(cg) + rc.var();
            Expr iy = y * int(p.stride[0]) + ry.var() * int(p.dilation[0]);
            Expr ix = xx * int(p.stride[1]) + rx.var() * int(p.dilation[1]);
            return tessel::sum(acc.widen(padded(n, c, iy, ix)) * acc.widen(w(k, rc, ry, rx)),
                               {rc, ry, rx});
        },
        name);
}

}  // namespace internal

Tensor conv2d_nchw(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                   const std::string& name) {
    const char* op = name.c_str();
    internal::Conv2DGeometry g = internal::check_conv2d_nchw(x, w, p, op);
    internal::Accumulation acc = internal::accumulation(x.dtype(), p.out_dtype, op);
    return internal::conv2d_nchw_of_padded(pad_hw(x, 2, 3, p, name), w, p, g, acc, name);
}

Tensor conv2d_nhwc(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                   const std::string& name) {
    const char* op = name.c_str();
    check_operands(x, w, 4, 4, p, op);
    internal::Accumulation acc = internal::accumulation(x.dtype(), p.out_dtype, op);
    std::vector<int64_t> sx = constant_shape(x, op, "x"), sw = constant_shape(w, op, "w");
    check_channels(sx[3], sw[3], sw[2], p.groups, op);
    const auto [oh, ow] = out_extents(sx[1], sx[2], sw[0], sw[1], p, op);
    Tensor padded = pad_hw(x, 1, 2, p, name);
    const int64_t kg = sw[3] / p.groups, cg = sw[2];
    IterVar ry = reduce_axis({0, make_const(Int(32), sw[0])}, "ry");
    IterVar rx = reduce_axis({0, make_const(Int(32), sw[1])}, "rx");
    IterVar rc = reduce_axis({0, make_const(Int(32), cg)}, "rc");
    return internal::reduction_stage(
        {sx[0], oh, ow, sw[3]}, acc,
        [&](const std::vector<Var>& v) {
            Var n = v[0], y = v[1], xx = v[2], k = v[3];
            Expr c = p.groups == 1 ? Expr(rc.var()) : floordiv(k, int(kg)) * int(cg) + rc.var();
            Expr iy = y * int(p.stride[0]) + ry.var() * int(p.dilation[0]);
            Expr ix = xx * int(p.stride[1]) + rx.var() * int(p.dilation[1]);
            return tessel::sum(acc.widen(padded(n, iy, ix, c)) * acc.widen(w(ry, rx, rc, k)),
                               {ry, rx, rc});
        },
        name);
}

namespace {

// Checks that `block` is positive and divides `extent` (parameter `param` of `op`).
void check_block(int64_t block, int64_t extent, const char* op, const char* param,
                 const char* what) {
    if (block < 1 || extent % block != 0)
        bad_param(op, param,
                  "(" + std::to_string(block) + ") must be positive and divide the " + what + " (" +
                      std::to_string(extent) + ")");
}

// The constant shapes of blocked operands x (N, C / cb, H, W, cb) and w (K / kb, C / cb, R, S, cb,
// kb), whose input channel blocks must agree.
std::pair<std::vector<int64_t>, std::vector<int64_t>> blocked_shapes(const Tensor& x,
                                                                     const Tensor& w,
                                                                     const char* op) {
    std::vector<int64_t> sx = constant_shape(x, op, "x"), sw = constant_shape(w, op, "w");
    if (sw[1] != sx[1] || sw[4] != sx[4])
        bad_param(op, "w",
                  "has " + std::to_string(sw[1]) + " blocks of " + std::to_string(sw[4]) +
                      " input channels but x has " + std::to_string(sx[1]) + " of " +
                      std::to_string(sx[4]));
    return {sx, sw};
}

}  // namespace

Tensor conv2d_nchwc(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                    const std::string& name) {
    const char* op = name.c_str();
    check_operands(x, w, 5, 6, p, op);
    if (p.groups != 1)
        bad_param(op, "groups",
                  "must be 1 for blocked activations, got " + std::to_string(p.groups) +
                      " (use conv2d_nchw)");
    internal::Accumulation acc = internal::accumulation(x.dtype(), p.out_dtype, op);
    const auto [sx, sw] = blocked_shapes(x, w, op);
    const auto [oh, ow] = out_extents(sx[2], sx[3], sw[2], sw[3], p, op);
    Tensor padded = pad_hw(x, 2, 3, p, name);
    IterVar rco = reduce_axis({0, make_const(Int(32), sx[1])}, "rco");
    IterVar ry = reduce_axis({0, make_const(Int(32), sw[2])}, "ry");
    IterVar rx = reduce_axis({0, make_const(Int(32), sw[3])}, "rx");
    IterVar rci = reduce_axis({0, make_const(Int(32), sx[4])}, "rci");
    return internal::reduction_stage(
        {sx[0], sw[0], oh, ow, sw[5]}, acc,
        [&](const std::vector<Var>& v) {
            Var n = v[0], ko = v[1], y = v[2], xx = v[3], ki = v[4];
            Expr iy = y * int(p.stride[0]) + ry.var() * int(p.dilation[0]);
            Expr ix = xx * int(p.stride[1]) + rx.var() * int(p.dilation[1]);
            return tessel::sum(acc.widen(padded(n, rco.var(), iy, ix, rci.var())) *
                                   acc.widen(w(ko, rco.var(), ry.var(), rx.var(), rci.var(), ki)),
                               {rco, ry, rx, rci});
        },
        name);
}

namespace {

// Winograd's F(2 x 2, 3 x 3) (Lavin and Gray, 2015): Bᵀ d B of a 4 x 4 input tile, G g Gᵀ of a
// 3 x 3 filter, Aᵀ m A of their product's 4 x 4 tile. A row of each matrix as its non-zero
// entries (column, coefficient).
using WinogradRow = std::vector<std::pair<int, double>>;
// conv2d_nchw_winograd's channel block: the widest of 16, 8, 4, 2, 1 dividing C and K.
constexpr int64_t kWinogradBlock = 16;

const WinogradRow kWinogradBt[4] = {
    {{0, 1}, {2, -1}}, {{1, 1}, {2, 1}}, {{2, 1}, {1, -1}}, {{1, 1}, {3, -1}}};
const WinogradRow kWinogradG[4] = {
    {{0, 1}}, {{0, 0.5}, {1, 0.5}, {2, 0.5}}, {{0, 0.5}, {1, -0.5}, {2, 0.5}}, {{2, 1}}};
const WinogradRow kWinogradAt[2] = {{{0, 1}, {1, 1}, {2, 1}}, {{1, 1}, {2, -1}, {3, -1}}};

// Σ coefficient · at(column) over a row (sums and differences where the coefficient is ±1).
Expr winograd_sum(const WinogradRow& row, const std::function<Expr(int)>& at) {
    Expr e;
    for (const auto& [col, coef] : row) {
        Expr v = at(col);
        if (coef != 1 && coef != -1) v = v * make_const(v.type(), coef);
        if (!e.defined())
            e = coef == -1 ? make_const(v.type(), 0.0) - v : v;
        else
            e = coef == -1 ? e - v : e + v;
    }
    return e;
}

// values[i] for an index i in [0, values.size()): a chain of selects, which folds to one value
// once the loop over i is unrolled.
Expr select_by(const Expr& i, const std::vector<Expr>& values) {
    Expr e = values.back();
    for (size_t k = values.size() - 1; k-- > 0;)
        e = if_then_else(i == static_cast<int>(k), values[k], e);
    return e;
}

// The transform M of a 2-D tile at (a, b): Σ_r Σ_s rows[a][r] · v(r, s) · cols[b][s], the row
// and column picked by the (unrolled) indices a and b.
template <size_t Rows>
Expr winograd_transform(const WinogradRow (&rows)[Rows], const Expr& a, const Expr& b,
                        const std::function<Expr(int, int)>& v) {
    std::vector<Expr> by_a;
    for (size_t ra = 0; ra < Rows; ++ra) {
        std::vector<Expr> by_b;
        for (size_t rb = 0; rb < Rows; ++rb)
            by_b.push_back(winograd_sum(rows[ra], [&](int r) {
                return winograd_sum(rows[rb], [&](int s) { return v(r, s); });
            }));
        by_a.push_back(select_by(b, by_b));
    }
    return select_by(a, by_a);
}

}  // namespace

namespace {

// The refusals both Winograd operators share: a 3 x 3 window (`window`), stride, dilation and
// groups of 1, float32.
void check_winograd(const Tensor& x, const std::array<int64_t, 2>& window, const Conv2DParams& p,
                    const char* op, const std::string& instead) {
    if (window[0] != 3 || window[1] != 3)
        bad_param(op, "w",
                  "has a " + std::to_string(window[0]) + " x " + std::to_string(window[1]) +
                      " window; it must be 3 x 3" + instead);
    const std::array<int64_t, 2> one{1, 1};
    if (p.stride != one) bad_param(op, "stride", "must be 1" + instead);
    if (p.dilation != one) bad_param(op, "dilation", "must be 1" + instead);
    if (p.groups != 1) bad_param(op, "groups", "must be 1" + instead);
    if (x.dtype() != Float(32))
        bad_param(op, "x", "is " + x.dtype().str() + "; it must be float32" + instead);
    if (p.out_dtype && *p.out_dtype != Float(32))
        bad_param(op, "out_dtype", "is " + p.out_dtype->str() + "; it must be float32" + instead);
}

// Winograd's stages of a 3 x 3 convolution of the blocked input `xb` (N, C / cb, H, W, cb)
// (op/Conv.h, conv2d_nchwc_winograd): the filter's value at (output channel, input channel, r,
// s) is `filter`'s; the blocked output (N, K / kb, OH, OW, kb) is named `out`.
Tensor winograd_stages(const Tensor& xb, int64_t k, int64_t kb,
                       const std::function<Expr(Expr, Expr, int, int)>& filter,
                       const Conv2DParams& p, const char* op, const std::string& name,
                       const std::string& out) {
    const std::vector<int64_t> sx = constant_shape(xb, op, "x");
    const auto [oh, ow] = out_extents(sx[2], sx[3], 3, 3, p, op);
    const int64_t th = (oh + 1) / 2, tw = (ow + 1) / 2, tiles = sx[0] * th * tw;
    const int64_t cb = sx[4], c = sx[1] * cb;
    const int64_t top = p.padding[0], left = p.padding[1];
    // The input's 4 x 4 tiles, each 2 rows and columns after the last, transformed:
    // V[a, b, tile, c] (zero past the input's edges).
    Tensor v = compute(
        internal::to_exprs({4, 4, tiles, c}),
        [&](const std::vector<Var>& i) {
            Expr n = floordiv(i[2], int(th * tw)), ty = floormod(floordiv(i[2], int(tw)), int(th)),
                 tx = floormod(i[2], int(tw));
            Expr co = floordiv(i[3], int(cb)), ci = floormod(i[3], int(cb));
            return winograd_transform(kWinogradBt, i[0], i[1], [&](int r, int s) {
                Expr y = ty * 2 + (r - int(top)), xx = tx * 2 + (s - int(left));
                Expr inside = y >= 0 && y < int(sx[2]) && xx >= 0 && xx < int(sx[3]);
                return if_then_else(inside, xb(n, co, y, xx, ci), make_const(Float(32), 0.0));
            });
        },
        name + ".winograd_input");
    // The filters transformed: U[a, b, c, k].
    Tensor u = compute(
        internal::to_exprs({4, 4, c, k}),
        [&](const std::vector<Var>& i) {
            return winograd_transform(kWinogradG, i[0], i[1],
                                      [&](int r, int s) { return filter(i[3], i[2], r, s); });
        },
        name + ".winograd_weight");
    // Their products, a batch of 16 matrix products over the input channels: M[a, b, tile, k].
    IterVar rc = reduce_axis({0, make_const(Int(32), c)}, "rc");
    Tensor m = compute(
        internal::to_exprs({4, 4, tiles, k}),
        [&](const std::vector<Var>& i) {
            return tessel::sum(v(i[0], i[1], i[2], rc.var()) * u(i[0], i[1], rc.var(), i[3]), {rc});
        },
        name + ".winograd_product");
    // The output's 2 x 2 tiles: Aᵀ M A, each output point picking its tile's row and column.
    return compute(
        internal::to_exprs({sx[0], k / kb, oh, ow, kb}),
        [&](const std::vector<Var>& i) {
            Expr tile = (i[0] * int(th) + floordiv(i[2], 2)) * int(tw) + floordiv(i[3], 2);
            Expr kk = i[1] * int(kb) + i[4];
            return winograd_transform(
                kWinogradAt, floormod(i[2], 2), floormod(i[3], 2), [&](int a, int b) {
                    return m(make_const(Int(32), a), make_const(Int(32), b), tile, kk);
                });
        },
        out);
}

}  // namespace

Tensor conv2d_nchwc_winograd(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                             const std::string& name) {
    const char* op = name.c_str();
    check_operands(x, w, 5, 6, p, op);
    const auto [sx, sw] = blocked_shapes(x, w, op);
    check_winograd(x, {sw[2], sw[3]}, p, op, " for Winograd's F(2 x 2, 3 x 3) (use conv2d_nchwc)");
    const int64_t cb = sx[4], kb = sw[5];
    auto filter = [&](Expr k, Expr c, int r, int s) {
        return w(floordiv(k, int(kb)), floordiv(c, int(cb)), make_const(Int(32), r),
                 make_const(Int(32), s), floormod(c, int(cb)), floormod(k, int(kb)));
    };
    return winograd_stages(x, sw[0] * kb, kb, filter, p, op, name, name);
}

Tensor conv2d_nchw_winograd(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                            const std::string& name) {
    const char* op = name.c_str();
    internal::Conv2DGeometry g = internal::check_conv2d_nchw(x, w, p, op);
    check_winograd(x, {g.w[2], g.w[3]}, p, op, " for Winograd's F(2 x 2, 3 x 3) (use conv2d_nchw)");
    const int64_t c = g.x[1], k = g.w[0];
    int64_t block = kWinogradBlock;
    while (c % block != 0 || k % block != 0) block /= 2;
    // The input in blocks of channels, the blocked convolution, the output back to NCHW.
    Tensor xb = compute(
        internal::to_exprs({g.x[0], c / block, g.x[2], g.x[3], block}),
        [&](const std::vector<Var>& i) { return x(i[0], i[1] * int(block) + i[4], i[2], i[3]); },
        name + ".winograd_layout");
    auto filter = [&](Expr kk, Expr cc, int r, int s) {
        return w(kk, cc, make_const(Int(32), r), make_const(Int(32), s));
    };
    Tensor yb = winograd_stages(xb, k, block, filter, p, op, name, name + ".winograd_output");
    const std::vector<int64_t> sy = constant_shape(yb, op, "y");
    return compute(
        internal::to_exprs({sy[0], k, sy[2], sy[3]}),
        [&](const std::vector<Var>& i) {
            return yb(i[0], floordiv(i[1], int(block)), i[2], i[3], floormod(i[1], int(block)));
        },
        name);
}

Tensor nchw_to_nchwc(const Tensor& x, int64_t block, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(x, 4, op, "x");
    std::vector<int64_t> sx = constant_shape(x, op, "x");
    check_block(block, sx[1], op, "block", "channels");
    return compute(
        internal::to_exprs({sx[0], sx[1] / block, sx[2], sx[3], block}),
        [&](const std::vector<Var>& v) { return x(v[0], v[1] * int(block) + v[4], v[2], v[3]); },
        name);
}

Tensor nchwc_to_nchw(const Tensor& x, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(x, 5, op, "x");
    std::vector<int64_t> sx = constant_shape(x, op, "x");
    const int block = static_cast<int>(sx[4]);
    return compute(
        internal::to_exprs({sx[0], sx[1] * sx[4], sx[2], sx[3]}),
        [&](const std::vector<Var>& v) {
            return x(v[0], floordiv(v[1], block), v[2], v[3], floormod(v[1], block));
        },
        name);
}

Tensor conv2d_weight_to_nchwc(const Tensor& w, int64_t cb, int64_t kb, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(w, 4, op, "w");
    std::vector<int64_t> sw = constant_shape(w, op, "w");
    check_block(cb, sw[1], op, "cb", "input channels");
    check_block(kb, sw[0], op, "kb", "output channels");
    return compute(
        internal::to_exprs({sw[0] / kb, sw[1] / cb, sw[2], sw[3], cb, kb}),
        [&](const std::vector<Var>& v) {
            return w(v[0] * int(kb) + v[5], v[1] * int(cb) + v[4], v[2], v[3]);
        },
        name);
}

Tensor depthwise_conv2d_nchw(const Tensor& x, const Tensor& w, Conv2DParams p,
                             const std::string& name) {
    internal::check_rank(x, 4, name.c_str(), "x");
    internal::check_rank(w, 4, name.c_str(), "w");
    std::vector<int64_t> sw = constant_shape(w, name.c_str(), "w");
    if (sw[1] != 1)
        bad_param(name.c_str(), "w",
                  "must have 1 input channel per filter (shape (C * M, 1, R, S)), got " +
                      std::to_string(sw[1]));
    p.groups = constant_shape(x, name.c_str(), "x")[1];
    return conv2d_nchw(x, w, p, name);
}

namespace {

// One axis of a transposed convolution: the input position feeding output `o` through kernel
// tap `r`, and whether there is one.
std::pair<Expr, Expr> transpose_source(Expr o, Expr r, int64_t in, int64_t s, int64_t pad,
                                       int64_t d) {
    Expr t = o + int(pad) - r * int(d);
    Expr valid = t >= 0 && floormod(t, int(s)) == 0 && floordiv(t, int(s)) < int(in);
    return {floordiv(t, int(s)), valid};
}

}  // namespace

Tensor conv2d_transpose_nchw(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                             std::array<int64_t, 2> output_padding, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(x, 4, op, "x");
    internal::check_rank(w, 4, op, "w");
    internal::check_product_dtypes(x, w, op, "w");
    check_params(p, op);
    if (p.groups != 1)
        bad_param(op, "groups", "must be 1 (grouped transposed conv is not supported)");
    internal::Accumulation acc = internal::accumulation(x.dtype(), p.out_dtype, op);
    std::vector<int64_t> sx = constant_shape(x, op, "x"), sw = constant_shape(w, op, "w");
    if (sw[0] != sx[1])
        bad_param(op, "w",
                  "has " + std::to_string(sw[0]) + " input channels but x has " +
                      std::to_string(sx[1]) + " (w is (C, K, R, S))");
    int64_t out[2];
    for (int a = 0; a < 2; ++a) {
        int64_t op_a = output_padding[a];
        if (op_a < 0 || (op_a >= p.stride[a] && op_a >= p.dilation[a]))
            bad_param(op, "output_padding",
                      "(" + std::to_string(op_a) + ") must be below the stride or the dilation");
        out[a] = (sx[2 + a] - 1) * p.stride[a] - p.padding[a] - p.padding[a + 2] +
                 p.dilation[a] * (sw[2 + a] - 1) + op_a + 1;
        if (out[a] < 1) bad_param(op, "padding", "leaves an empty output");
    }
    IterVar rc = reduce_axis({0, make_const(Int(32), sx[1])}, "rc");
    IterVar ry = reduce_axis({0, make_const(Int(32), sw[2])}, "ry");
    IterVar rx = reduce_axis({0, make_const(Int(32), sw[3])}, "rx");
    return internal::reduction_stage(
        {sx[0], sw[1], out[0], out[1]}, acc,
        [&](const std::vector<Var>& v) {
            Var n = v[0], k = v[1], y = v[2], xx = v[3];
            auto [iy, vy] =
                transpose_source(y, ry.var(), sx[2], p.stride[0], p.padding[0], p.dilation[0]);
            auto [ix, vx] =
                transpose_source(xx, rx.var(), sx[3], p.stride[1], p.padding[1], p.dilation[1]);
            Expr xv = if_then_else(vy && vx, x(n, rc, iy, ix), make_zero(x.dtype()));
            return tessel::sum(acc.widen(xv) * acc.widen(w(rc, k, ry, rx)), {rc, ry, rx});
        },
        name);
}

}  // namespace tessel::op
