// Quantized operators (op/Quantize.h): the plain int8 product, the sums of each operand, and one
// element-wise stage applying the zero points, the bias and the requantization.
#include "tessel/op/Quantize.h"

#include "op/OpUtil.h"
#include "tessel/op/Matmul.h"
#include "tessel/op/Reduce.h"

namespace tessel::op {

using internal::bad_param;

namespace {

bool is_byte_int(Type t) {
    return t == Int(8) || t == UInt(8);
}

std::string shape_string(const std::vector<int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

// DSLError unless `t` holds one value (shape () or (1,)) or, when `channels` > 0, one per
// channel: shape (channels,), the channels being `channel_what` ("w's output channels").
void check_values(const Tensor& t, int64_t channels, const std::string& channel_what,
                  const char* op, const std::string& param) {
    if (!t.defined()) bad_param(op, param.c_str(), "is undefined");
    std::vector<int64_t> shape = constant_shape(t, op, param.c_str());
    bool one = shape.empty() || shape == std::vector<int64_t>{1};
    if (one || (channels > 0 && shape == std::vector<int64_t>{channels})) return;
    std::string per_channel =
        channels > 0 ? " or one per " + channel_what + " " + shape_string({channels}) : "";
    bad_param(op, param.c_str(),
              "must hold one value (shape () or (1,))" + per_channel + ", got shape " +
                  shape_string(shape));
}

// DSLError unless `t` is an operand of a quantized product: int8 or uint8.
void check_operand(const Tensor& t, const char* op, const char* param) {
    if (!t.defined()) bad_param(op, param, "is undefined");
    if (!is_byte_int(t.dtype()))
        bad_param(op, param, "must be int8 or uint8, got " + t.dtype().str());
}

// Checks the scale and zero point of `prefix` (ONNX's names "<prefix>_scale" and
// "<prefix>_zero_point"): a float32 scale, a zero point of int8 or uint8 and of `values`' dtype
// when it is defined, each of one value or (channels > 0) one per channel.
void check_quant(const QuantParams& q, const std::string& prefix, const Tensor& values,
                 int64_t channels, const std::string& channel_what, const char* op) {
    const std::string scale = prefix + "_scale", zero_point = prefix + "_zero_point";
    check_values(q.scale, channels, channel_what, op, scale);
    if (q.scale.dtype() != Float(32))
        bad_param(op, scale.c_str(), "must be float32, got " + q.scale.dtype().str());
    check_values(q.zero_point, channels, channel_what, op, zero_point);
    check_operand(q.zero_point, op, zero_point.c_str());
    if (values.defined() && q.zero_point.dtype() != values.dtype())
        bad_param(op, zero_point.c_str(),
                  "has dtype " + q.zero_point.dtype().str() + " but '" + prefix + "' has " +
                      values.dtype().str() + " (a zero point has its tensor's dtype)");
}

// DSLError unless `bias` is undefined or int32 of one value per channel.
void check_bias(const Tensor& bias, int64_t channels, const char* op) {
    if (!bias.defined()) return;
    internal::check_rank(bias, 1, op, "B");
    if (bias.dtype() != Int(32))
        bad_param(op, "B", "must be int32 (added to the accumulator), got " + bias.dtype().str());
    int64_t n = constant_shape(bias, op, "B")[0];
    if (n != channels)
        bad_param(op, "B",
                  "has " + std::to_string(n) + " values but the result has " +
                      std::to_string(channels) + " output channels");
}

// A quantization parameter's value for `channel` (its only value when it holds one).
Expr value_at(const Tensor& t, const Expr& channel) {
    if (t.ndim() == 0) return t();
    if (as_const_int(t.shape()[0]) == 1) return t(0);
    return t(channel);
}

// saturate(round_half_to_even(float32(acc) * multiplier) + zero_point), in zero_point's type.
// Adding the zero point after rounding and clamping after it is onnxruntime's clamp, round, add:
// the bounds are integers, and every value inside them is exact in float32.
Expr requantize_value(const Expr& acc, const Expr& multiplier, const Expr& zero_point) {
    const Type f32 = Float(32), out = zero_point.type();
    Expr v = round(cast(f32, acc) * multiplier) + cast(f32, zero_point);
    Expr lo = make_const(f32, double(out.min_int())), hi = make_const(f32, double(out.max_int()));
    return cast(out, min(max(v, lo), hi));
}

// The terms of a quantized product whose result has its output channel on axis 1 (dense's
// columns, NCHW's channels): the plain int32 product, the sum of x's terms of each output point,
// the sum of each output channel's weights, and the number of terms.
struct QLinearTerms {
    Tensor acc;    ///< sum_k x * w, int32, over the result's shape
    Tensor w_sum;  ///< (channels,)
    std::function<Expr(const std::vector<Expr>&)> x_sum_at;  ///< at an output point
    int64_t k = 0;
};

// (x_scale * w_scale) / y_scale in float32, one value or one per channel, as onnxruntime's
// ComputeOutputScale.
Tensor multiplier(const QuantParams& xq, const QuantParams& wq, const QuantParams& yq,
                  const std::string& name) {
    int64_t n = wq.scale.ndim() == 0 ? 1 : *as_const_int(wq.scale.shape()[0]);
    return compute(
        {make_const(Int(32), n)},
        [&](Var j) {
            return value_at(xq.scale, 0) * value_at(wq.scale, j) / value_at(yq.scale, 0);
        },
        name);
}

// The result: the zero points' corrections and the bias added to the product, requantized.
Tensor qlinear_epilogue(const QLinearTerms& t, const QuantParams& xq, const QuantParams& wq,
                        const QuantParams& yq, const Tensor& bias, const std::string& name) {
    Tensor m = multiplier(xq, wq, yq, name + ".multiplier");
    return compute(
        t.acc.shape(),
        [&](const std::vector<Var>& vars) {
            std::vector<Expr> v(vars.begin(), vars.end());
            Expr c = v[1];
            Expr x_zp = cast(Int(32), value_at(xq.zero_point, 0));
            Expr w_zp = cast(Int(32), value_at(wq.zero_point, c));
            Expr acc = t.acc(v) - x_zp * t.w_sum(c) - w_zp * t.x_sum_at(v) +
                       make_const(Int(32), t.k) * x_zp * w_zp;
            if (bias.defined()) acc = acc + bias(c);
            return requantize_value(acc, value_at(m, c), value_at(yq.zero_point, 0));
        },
        name);
}

// qlinear_matmul and qlinear_dense: a (M, K) times b (K, N), or b (N, K) transposed.
Tensor qlinear_product(const Tensor& a, const QuantParams& aq, const Tensor& b,
                       const QuantParams& bq, const QuantParams& yq, const Tensor& bias,
                       bool transpose_b, const char* names[2], const std::string& name) {
    const char* op = name.c_str();
    check_operand(a, op, names[0]);
    check_operand(b, op, names[1]);
    internal::check_rank(a, 2, op, names[0]);
    internal::check_rank(b, 2, op, names[1]);
    std::vector<int64_t> sa = constant_shape(a, op, names[0]);
    std::vector<int64_t> sb = constant_shape(b, op, names[1]);
    const int64_t k = transpose_b ? sb[1] : sb[0], n = transpose_b ? sb[0] : sb[1];
    if (k != sa[1])
        bad_param(op, names[1],
                  "has inner extent " + std::to_string(k) + " but " + names[0] + " has " +
                      std::to_string(sa[1]));
    const std::string unit = std::string(transpose_b ? "row of " : "column of ") + names[1];
    check_quant(aq, names[0], a, 0, "", op);
    check_quant(bq, names[1], b, n, unit, op);
    check_quant(yq, "y", Tensor(), 0, "", op);
    check_bias(bias, n, op);
    QLinearTerms t;
    t.acc = matmul(a, b, false, transpose_b, std::nullopt, name + ".acc");
    Tensor x_sum = sum(a, {1}, false, std::nullopt, name + ".x_sum");
    t.w_sum = sum(b, {transpose_b ? 1 : 0}, false, std::nullopt, name + ".w_sum");
    t.x_sum_at = [x_sum](const std::vector<Expr>& v) { return x_sum(v[0]); };
    t.k = k;
    return qlinear_epilogue(t, aq, bq, yq, bias, name);
}

// The sum of the padded x's terms of each output point of a grouped convolution: (N, groups,
// OH, OW).
Tensor conv_x_sum(const Tensor& padded, const internal::Conv2DGeometry& g, const Conv2DParams& p,
                  const std::string& name) {
    const int64_t cg = g.w[1];
    IterVar rc = reduce_axis({0, make_const(Int(32), cg)}, "rc");
    IterVar ry = reduce_axis({0, make_const(Int(32), g.w[2])}, "ry");
    IterVar rx = reduce_axis({0, make_const(Int(32), g.w[3])}, "rx");
    return compute(
        internal::to_exprs({g.x[0], p.groups, g.oh, g.ow}),
        [&](Var n, Var grp, Var y, Var x) {
            Expr c = p.groups == 1 ? Expr(rc.var()) : grp * int(cg) + rc.var();
            Expr iy = y * int(p.stride[0]) + ry.var() * int(p.dilation[0]);
            Expr ix = x * int(p.stride[1]) + rx.var() * int(p.dilation[1]);
            return tessel::sum(cast(Int(32), padded(n, c, iy, ix)), {rc, ry, rx});
        },
        name);
}

}  // namespace

Tensor requantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t axis,
                  const std::string& name) {
    const char* op = name.c_str();
    if (!x.defined()) bad_param(op, "x", "is undefined");
    if (x.dtype() != Int(32)) bad_param(op, "x", "must be int32, got " + x.dtype().str());
    std::vector<int64_t> shape = constant_shape(x, op, "x");
    // The axis matters only to a parameter of more than one value (ONNX ignores it otherwise).
    auto many = [](const Tensor& t) {
        return t.defined() && t.ndim() == 1 && as_const_int(t.shape()[0]) != 1;
    };
    const bool per_channel = !shape.empty() && (many(scale) || many(zero_point));
    size_t a = per_channel ? size_t(normalize_axis(axis, shape.size(), op)) : 0;
    int64_t channels = per_channel ? shape[a] : 0;
    const std::string what = "index of x's axis " + std::to_string(a);
    check_values(scale, channels, what, op, "scale");
    if (scale.dtype() != Float(32))
        bad_param(op, "scale", "must be float32, got " + scale.dtype().str());
    check_values(zero_point, channels, what, op, "zero_point");
    check_operand(zero_point, op, "zero_point");
    return compute(
        internal::to_exprs(shape),
        [&](const std::vector<Var>& vars) {
            std::vector<Expr> v(vars.begin(), vars.end());
            Expr c = v.empty() ? make_const(Int(32), 0) : v[a];
            return requantize_value(x(v), value_at(scale, c), value_at(zero_point, c));
        },
        name);
}

Tensor qlinear_matmul(const Tensor& a, const QuantParams& aq, const Tensor& b,
                      const QuantParams& bq, const QuantParams& yq, const std::string& name) {
    const char* names[2] = {"a", "b"};
    return qlinear_product(a, aq, b, bq, yq, Tensor(), false, names, name);
}

Tensor qlinear_dense(const Tensor& x, const QuantParams& xq, const Tensor& w, const QuantParams& wq,
                     const QuantParams& yq, const Tensor& bias, const std::string& name) {
    const char* names[2] = {"x", "w"};
    return qlinear_product(x, xq, w, wq, yq, bias, true, names, name);
}

Tensor qlinear_conv2d_nchw(const Tensor& x, const QuantParams& xq, const Tensor& w,
                           const QuantParams& wq, const QuantParams& yq, const Tensor& bias,
                           const Conv2DParams& p, const std::string& name) {
    const char* op = name.c_str();
    check_operand(x, op, "x");
    check_operand(w, op, "w");
    internal::Conv2DGeometry g = internal::check_conv2d_nchw(x, w, p, op);
    if (p.out_dtype)
        bad_param(op, "out_dtype",
                  "must be unset: the result's dtype is y_zero_point's (int8 or uint8)");
    const int64_t channels = g.w[0];
    check_quant(xq, "x", x, 0, "", op);
    check_quant(wq, "w", w, channels, "output channel", op);
    check_quant(yq, "y", Tensor(), 0, "", op);
    check_bias(bias, channels, op);
    // Padding with x's zero point (a real zero) keeps every correction term uniform.
    Tensor padded = x;
    if (p.padding != std::array<int64_t, 4>{0, 0, 0, 0})
        padded = internal::pad_with(x, {0, 0, p.padding[0], p.padding[1]},
                                    {0, 0, p.padding[2], p.padding[3]}, value_at(xq.zero_point, 0),
                                    name + ".pad");
    QLinearTerms t;
    internal::Accumulation acc = internal::accumulation(x.dtype(), std::nullopt, op);
    t.acc = internal::conv2d_nchw_of_padded(padded, w, p, g, acc, name + ".acc");
    Tensor x_sum = conv_x_sum(padded, g, p, name + ".x_sum");
    t.w_sum = sum(w, {1, 2, 3}, false, std::nullopt, name + ".w_sum");
    const int64_t kg = channels / p.groups;
    t.x_sum_at = [x_sum, groups = p.groups, kg](const std::vector<Expr>& v) {
        Expr grp = groups == 1 ? make_const(Int(32), 0) : floordiv(v[1], int(kg));
        return x_sum(v[0], grp, v[2], v[3]);
    };
    t.k = g.w[1] * g.w[2] * g.w[3];
    return qlinear_epilogue(t, xq, wq, yq, bias, name);
}

}  // namespace tessel::op
