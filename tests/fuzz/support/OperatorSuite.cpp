// The fuzzer's operator suite (see OperatorSuite.h). Extents are small, mostly odd or prime.
#include "fuzz/support/OperatorSuite.h"

#include <functional>
#include <map>
#include <stdexcept>

#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

namespace tessel::fuzz {

namespace {

// bias(j) and scale(i) broadcast over a 2-D input; two outputs, one read by the other.
FuzzOperator elementwise_broadcast() {
    Tensor A = placeholder({7, 13}, Float(32), "A");
    Tensor bias = placeholder({13}, Float(32), "bias");
    Tensor scale = placeholder({7, 1}, Float(32), "scale");
    Tensor B = compute(
        {7, 13}, [&](Var i, Var j) { return A(i, j) + bias(j); }, "add_bias");
    Tensor C = compute(
        {7, 13}, [&](Var i, Var j) { return B(i, j) * scale(i, 0); }, "scaled");
    Tensor D = compute(
        {7, 13}, [&](Var i, Var j) { return max(C(i, j), 0.0f); }, "relu");
    Tensor E = compute(
        {7, 13}, [&](Var i, Var j) { return D(i, j) * D(i, j) - A(i, j); }, "sq");
    return {"elementwise_broadcast", {A, bias, scale}, {D, E}, 1, 2.0};
}

FuzzOperator matmul() {
    Tensor A = placeholder({13, 11}, Float(32), "A");
    Tensor B = placeholder({11, 17}, Float(32), "B");
    IterVar k = reduce_axis({0, 11}, "k");
    Tensor C = compute(
        {13, 17}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    return {"matmul", {A, B}, {C}, 11, 1.0};
}

FuzzOperator batch_matmul() {
    Tensor A = placeholder({3, 7, 9}, Float(32), "A");
    Tensor B = placeholder({3, 9, 5}, Float(32), "B");
    IterVar k = reduce_axis({0, 9}, "k");
    Tensor C = compute(
        {3, 7, 5}, [&](Var b, Var i, Var j) { return sum(A(b, i, k) * B(b, k, j), {k}); }, "C");
    return {"batch_matmul", {A, B}, {C}, 9, 1.0};
}

// NCHW, 3x3 kernel, padding 1 as its own stage (if_then_else), stride 2, then a ReLU.
FuzzOperator conv2d() {
    const int c = 3, h = 11, w = 10, k = 4, oh = 6, ow = 5;
    Tensor X = placeholder({1, c, h, w}, Float(32), "X");
    Tensor W = placeholder({k, c, 3, 3}, Float(32), "W");
    Tensor P = compute(
        {1, c, h + 2, w + 2},
        [&](Var b, Var ch, Var y, Var x) {
            Expr inside = y >= 1 && y < h + 1 && x >= 1 && x < w + 1;
            return if_then_else(inside, X(b, ch, y - 1, x - 1), make_zero(Float(32)));
        },
        "pad");
    IterVar rc = reduce_axis({0, c}, "rc"), ry = reduce_axis({0, 3}, "ry"),
            rx = reduce_axis({0, 3}, "rx");
    Tensor C = compute(
        {1, k, oh, ow},
        [&](Var b, Var f, Var y, Var x) {
            return sum(P(b, rc, y * 2 + ry.var(), x * 2 + rx.var()) * W(f, rc, ry, rx),
                       {rc, ry, rx});
        },
        "conv");
    Tensor R = compute(
        {1, k, oh, ow}, [&](Var b, Var f, Var y, Var x) { return max(C(b, f, y, x), 0.0f); },
        "relu");
    return {"conv2d", {X, W}, {R}, c * 9, 1.0};
}

// Per-channel 3x3 kernel, padding 1 guarded inside the reduction, stride 1.
FuzzOperator depthwise_conv() {
    const int c = 5, h = 9, w = 7;
    Tensor X = placeholder({1, c, h, w}, Float(32), "X");
    Tensor W = placeholder({c, 3, 3}, Float(32), "W");
    IterVar ry = reduce_axis({0, 3}, "ry"), rx = reduce_axis({0, 3}, "rx");
    Tensor C = compute(
        {1, c, h, w},
        [&](Var b, Var ch, Var y, Var x) {
            Expr iy = y + ry.var() - 1, ix = x + rx.var() - 1;
            Expr inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            Expr v = if_then_else(inside, X(b, ch, iy, ix), make_zero(Float(32)));
            return sum(v * W(ch, ry, rx), {ry, rx});
        },
        "dwconv");
    return {"depthwise_conv", {X, W}, {C}, 9, 1.0};
}

// A ReLU producer, then 3x3 max pooling with stride 2 and no padding.
FuzzOperator max_pool() {
    Tensor X = placeholder({1, 3, 11, 9}, Float(32), "X");
    Tensor R = compute(
        {1, 3, 11, 9}, [&](Var b, Var c, Var y, Var x) { return max(X(b, c, y, x), 0.0f); },
        "relu");
    IterVar ry = reduce_axis({0, 3}, "ry"), rx = reduce_axis({0, 3}, "rx");
    Tensor P = compute(
        {1, 3, 5, 4},
        [&](Var b, Var c, Var y, Var x) {
            return max(R(b, c, y * 2 + ry.var(), x * 2 + rx.var()), {ry, rx});
        },
        "pool");
    return {"max_pool", {X}, {P}, 9, 1.0};
}

// Four computes: row max, exp, row sum, divide.
FuzzOperator softmax() {
    const int n = 5, m = 13;
    Tensor X = placeholder({n, m}, Float(32), "X");
    IterVar k1 = reduce_axis({0, m}, "k1"), k2 = reduce_axis({0, m}, "k2");
    Tensor mx = compute(
        {n}, [&](Var i) { return max(X(i, k1), {k1}); }, "row_max");
    Tensor e = compute(
        {n, m}, [&](Var i, Var j) { return exp(X(i, j) - mx(i)); }, "exp");
    Tensor s = compute(
        {n}, [&](Var i) { return sum(e(i, k2), {k2}); }, "row_sum");
    Tensor out = compute(
        {n, m}, [&](Var i, Var j) { return e(i, j) / s(i); }, "softmax");
    return {"softmax", {X}, {out}, m, 1.0};
}

// Mean, variance, then normalise with a per-column scale and shift.
FuzzOperator layer_norm() {
    const int n = 6, m = 11;
    Tensor X = placeholder({n, m}, Float(32), "X");
    Tensor gamma = placeholder({m}, Float(32), "gamma");
    Tensor beta = placeholder({m}, Float(32), "beta");
    IterVar k1 = reduce_axis({0, m}, "k1"), k2 = reduce_axis({0, m}, "k2");
    Tensor total = compute(
        {n}, [&](Var i) { return sum(X(i, k1), {k1}); }, "total");
    Tensor mean = compute(
        {n}, [&](Var i) { return total(i) / float(m); }, "mean");
    Tensor var = compute(
        {n},
        [&](Var i) {
            Expr d = X(i, k2) - mean(i);
            return sum(d * d, {k2});
        },
        "sq_dev");
    Tensor out = compute(
        {n, m},
        [&](Var i, Var j) {
            Expr inv = rsqrt(var(i) / float(m) + 1e-5f);
            return (X(i, j) - mean(i)) * inv * gamma(j) + beta(j);
        },
        "layer_norm");
    return {"layer_norm", {X, gamma, beta}, {out}, m, 4.0};
}

// Squares, then sums over the middle axis of a 3-D tensor.
FuzzOperator reduce_middle_axis() {
    Tensor X = placeholder({7, 9, 5}, Float(32), "X");
    Tensor S = compute(
        {7, 9, 5}, [&](Var a, Var b, Var c) { return X(a, b, c) * X(a, b, c); }, "square");
    IterVar k = reduce_axis({0, 9}, "k");
    Tensor R = compute(
        {7, 5}, [&](Var a, Var c) { return sum(S(a, k, c), {k}); }, "reduce");
    return {"reduce_middle_axis", {X}, {R}, 9, 1.0};
}

// A scaled copy, then a 3-D transpose (2, 0, 1).
FuzzOperator transpose() {
    Tensor X = placeholder({7, 11, 3}, Float(32), "X");
    Tensor Y = compute(
        {7, 11, 3}, [&](Var a, Var b, Var c) { return X(a, b, c) * 3.0f; }, "scale");
    Tensor T = compute(
        {3, 7, 11}, [&](Var c, Var a, Var b) { return Y(a, b, c); }, "transpose");
    return {"transpose", {X}, {T}, 1, 3.0};
}

// Two outputs of one reduction: the index (int32) and the value of each row's maximum.
FuzzOperator argmax_rows() {
    Tensor X = placeholder({7, 12}, Float(32), "X");
    IterVar k = reduce_axis({0, 12}, "k");
    std::vector<Tensor> r = compute_multi(
        {7}, [&](Var i) { return argmax(k.var(), X(i, k), {k}); }, "argmax");
    return {"argmax", {X}, {r[0], r[1]}, 12, 1.0};
}

using Maker = std::function<FuzzOperator()>;

const std::vector<std::pair<std::string, Maker>>& makers() {
    static const std::vector<std::pair<std::string, Maker>> m = {
        {"elementwise_broadcast", elementwise_broadcast},
        {"matmul", matmul},
        {"batch_matmul", batch_matmul},
        {"conv2d", conv2d},
        {"depthwise_conv", depthwise_conv},
        {"max_pool", max_pool},
        {"softmax", softmax},
        {"layer_norm", layer_norm},
        {"reduce_middle_axis", reduce_middle_axis},
        {"transpose", transpose},
        {"argmax", argmax_rows},
    };
    return m;
}

std::vector<int64_t> const_shape(const Tensor& t) {
    std::vector<int64_t> shape;
    for (const Expr& e : t.shape()) shape.push_back(*as_const_int(e));
    return shape;
}

}  // namespace

std::vector<Tensor> FuzzOperator::args() const {
    std::vector<Tensor> a = placeholders;
    a.insert(a.end(), outputs.begin(), outputs.end());
    return a;
}

std::vector<HostArray> FuzzOperator::random_inputs(uint64_t seed) const {
    std::vector<HostArray> inputs;
    for (size_t i = 0; i < placeholders.size(); ++i) {
        const Tensor& p = placeholders[i];
        inputs.push_back(HostArray::random(p.dtype(), const_shape(p), seed * 1000 + i));
    }
    return inputs;
}

Tolerance FuzzOperator::tolerance(size_t i) const {
    return tolerance_for(outputs[i].dtype(), reduction_length, magnitude);
}

const std::vector<std::string>& operator_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& [name, make] : makers()) n.push_back(name);
        return n;
    }();
    return names;
}

FuzzOperator make_operator(const std::string& name) {
    for (const auto& [n, make] : makers())
        if (n == name) return make();
    throw std::invalid_argument("fuzz: unknown operator '" + name + "'");
}

}  // namespace tessel::fuzz
