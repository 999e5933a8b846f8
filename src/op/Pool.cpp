// Pooling (op/Pool.h).
#include "tessel/op/Pool.h"

#include <algorithm>

#include "op/OpUtil.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Reduce.h"

namespace tessel::op {

using internal::bad_param;

const char* pool_kind_name(PoolKind kind) {
    return kind == PoolKind::Max ? "max" : "avg";
}

PoolKind parse_pool_kind(const std::string& name, const char* param) {
    if (name == "max") return PoolKind::Max;
    if (name == "avg") return PoolKind::Avg;
    bad_param("pool", param, "is '" + name + "'; expected max or avg");
}

namespace {

struct PoolGeometry {
    std::array<int64_t, 2> in, window, stride, before, out;
};

PoolGeometry check_pool(const std::vector<int64_t>& shape, std::array<int64_t, 2> window,
                        std::array<int64_t, 2> stride, std::array<int64_t, 4> padding,
                        const char* op) {
    PoolGeometry g{{shape[2], shape[3]}, window, stride, {padding[0], padding[1]}, {0, 0}};
    for (int a = 0; a < 2; ++a) {
        if (window[a] < 1)
            bad_param(op, "window", "must be at least 1, got " + std::to_string(window[a]));
        if (stride[a] < 1)
            bad_param(op, "stride", "must be at least 1, got " + std::to_string(stride[a]));
        for (int64_t p : {padding[a], padding[a + 2]}) {
            if (p < 0) bad_param(op, "padding", "must not be negative, got " + std::to_string(p));
            if (2 * p > window[a])
                bad_param(op, "padding",
                          "(" + std::to_string(p) + ") must be at most half the window (" +
                              std::to_string(window[a]) + ")");
        }
        int64_t padded = g.in[a] + padding[a] + padding[a + 2];
        if (window[a] > padded)
            bad_param(op, "window",
                      "(" + std::to_string(window[a]) + ") is larger than the padded input (" +
                          std::to_string(padded) + ")");
        g.out[a] = (padded - window[a]) / stride[a] + 1;
    }
    return g;
}

// The number of input points of the window at output (y, x) that are not padding.
Expr valid_count(const PoolGeometry& g, Expr y, Expr x) {
    Expr ys = y * int(g.stride[0]) - int(g.before[0]), xs = x * int(g.stride[1]) - int(g.before[1]);
    Expr h = tessel::min(ys + int(g.window[0]), int(g.in[0])) - tessel::max(ys, 0);
    Expr w = tessel::min(xs + int(g.window[1]), int(g.in[1])) - tessel::max(xs, 0);
    return h * w;
}

}  // namespace

namespace {

// x's rank checked: NCHW (4) or blocked NCHW[x]c (5: the channels of a block last).
void check_pool_rank(const Tensor& x, const char* op) {
    if (x.ndim() != 4 && x.ndim() != 5)
        bad_param(op, "x",
                  "must have rank 4 (N, C, H, W) or 5 (N, C / b, H, W, b: blocked), got rank " +
                      std::to_string(x.ndim()));
}

}  // namespace

Tensor pool2d(const Tensor& x, PoolKind kind, std::array<int64_t, 2> window,
              std::array<int64_t, 2> stride, std::array<int64_t, 4> padding, bool count_include_pad,
              const std::string& name) {
    const std::string n = internal::name_or(name, std::string(pool_kind_name(kind)) + "_pool2d");
    const char* op = n.c_str();
    check_pool_rank(x, op);
    PoolGeometry g = check_pool(constant_shape(x, op, "x"), window, stride, padding, op);
    if (kind == PoolKind::Avg) internal::check_float(x, op, "x");
    const Type t = x.dtype();
    IterVar ry = reduce_axis({0, make_const(Int(32), window[0])}, "ry");
    IterVar rx = reduce_axis({0, make_const(Int(32), window[1])}, "rx");
    // x at output point v's window position (ry, rx); `outside` in the padding.
    auto read = [&](const std::vector<Var>& v, Expr outside) {
        Expr iy = v[2] * int(stride[0]) + ry.var() - int(g.before[0]);
        Expr ix = v[3] * int(stride[1]) + rx.var() - int(g.before[1]);
        std::vector<Expr> idx = {v[0], v[1], iy, ix};
        if (v.size() == 5) idx.push_back(v[4]);
        if (g.before == std::array<int64_t, 2>{0, 0} && padding[2] == 0 && padding[3] == 0)
            return x(idx);
        Expr inside = iy >= 0 && iy < int(g.in[0]) && ix >= 0 && ix < int(g.in[1]);
        return if_then_else(inside, x(idx), outside);
    };
    std::vector<Expr> shape = x.shape();
    shape[2] = make_const(Int(32), g.out[0]);
    shape[3] = make_const(Int(32), g.out[1]);
    if (kind == PoolKind::Max)
        return compute(
            shape,
            [&](const std::vector<Var>& v) { return tessel::max(read(v, min_value(t)), {ry, rx}); },
            n);
    // 16-bit floats sum and divide in float32 (op/Matmul.h's accumulation).
    const internal::Accumulation acc = internal::accumulation(t, std::nullopt, op);
    Tensor total = compute(
        shape,
        [&](const std::vector<Var>& v) {
            return tessel::sum(acc.widen(read(v, make_zero(t))), {ry, rx});
        },
        n + ".sum");
    return compute(
        shape,
        [&](const std::vector<Var>& v) {
            Expr count =
                count_include_pad ? Expr(int(window[0] * window[1])) : valid_count(g, v[2], v[3]);
            std::vector<Expr> idx(v.begin(), v.end());
            return acc.narrow(total(idx) / tessel::cast(acc.accumulate, count));
        },
        n);
}

Tensor global_pool2d(const Tensor& x, PoolKind kind, const std::string& name) {
    const std::string n =
        internal::name_or(name, std::string("global_") + pool_kind_name(kind) + "_pool2d");
    check_pool_rank(x, n.c_str());
    return kind == PoolKind::Max ? max(x, {2, 3}, true, n) : mean(x, {2, 3}, true, std::nullopt, n);
}

Tensor adaptive_avg_pool2d(const Tensor& x, int64_t out_h, int64_t out_w, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(x, 4, op, "x");
    internal::check_float(x, op, "x");
    std::vector<int64_t> shape = constant_shape(x, op, "x");
    if (out_h < 1) bad_param(op, "out_h", "must be at least 1, got " + std::to_string(out_h));
    if (out_w < 1) bad_param(op, "out_w", "must be at least 1, got " + std::to_string(out_w));
    const int64_t in[2] = {shape[2], shape[3]}, out[2] = {out_h, out_w};
    int64_t longest[2] = {1, 1};
    for (int a = 0; a < 2; ++a)
        for (int64_t i = 0; i < out[a]; ++i)
            longest[a] =
                std::max(longest[a], ((i + 1) * in[a] + out[a] - 1) / out[a] - i * in[a] / out[a]);
    IterVar ry = reduce_axis({0, make_const(Int(32), longest[0])}, "ry");
    IterVar rx = reduce_axis({0, make_const(Int(32), longest[1])}, "rx");
    auto start = [&](Expr i, int a) { return floordiv(i * int(in[a]), int(out[a])); };
    auto end = [&](Expr i, int a) {
        return floordiv((i + 1) * int(in[a]) + int(out[a] - 1), int(out[a]));
    };
    std::vector<Expr> oshape = {x.shape()[0], x.shape()[1], make_const(Int(32), out_h),
                                make_const(Int(32), out_w)};
    const internal::Accumulation acc = internal::accumulation(x.dtype(), std::nullopt, op);
    Tensor total = compute(
        oshape,
        [&](Var b, Var c, Var y, Var xx) {
            Expr iy = start(y, 0) + ry.var(), ix = start(xx, 1) + rx.var();
            Expr inside = iy < end(y, 0) && ix < end(xx, 1);
            return tessel::sum(
                acc.widen(if_then_else(inside, x(b, c, iy, ix), make_zero(x.dtype()))), {ry, rx});
        },
        name + ".sum");
    return compute(
        oshape,
        [&](Var b, Var c, Var y, Var xx) {
            Expr count = (end(y, 0) - start(y, 0)) * (end(xx, 1) - start(xx, 1));
            return acc.narrow(total(b, c, y, xx) / tessel::cast(acc.accumulate, count));
        },
        name);
}

}  // namespace tessel::op
