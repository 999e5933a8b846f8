// The built-in workloads (docs/workloads.md lists them with their parameters). They began as the
// schedule fuzzer's operator suite, which now builds its operators here with fixed small, mostly
// odd or prime, sizes (tests/fuzz/support/OperatorSuite.cpp): a change to a builder changes what
// the fuzzer's seeds replay, so keep the expressions as they are and add new workloads instead.
#include <limits>

#include "BuiltinWorkloads.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

namespace tessel::internal {

namespace {

// Parameter `i` as an int (the builders index with C++ int literals, as hand-written DSL code
// does); DSLError if it does not fit int32.
int dim(const WorkloadParams& p, size_t i) {
    int64_t v = std::get<int64_t>(p[i]);
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
        TESSEL_THROW(DSLError) << "parameter " << i << " (" << v << ") does not fit int32";
    return static_cast<int>(v);
}

Type dtype(const WorkloadParams& p, size_t i) {
    return std::get<Type>(p[i]);
}

std::vector<WorkloadParamSpec> ints(std::initializer_list<const char*> names) {
    std::vector<WorkloadParamSpec> specs;
    for (const char* n : names) specs.push_back({n, ParamKind::Int});
    specs.push_back({"dtype", ParamKind::DType});
    return specs;
}

// bias(j) and scale(i) broadcast over a 2-D input; two outputs, one read by the other.
TensorDAG elementwise_broadcast(const WorkloadParams& p) {
    int m = dim(p, 0), n = dim(p, 1);
    Type t = dtype(p, 2);
    Tensor A = placeholder({m, n}, t, "A");
    Tensor bias = placeholder({n}, t, "bias");
    Tensor scale = placeholder({m, 1}, t, "scale");
    Tensor B = compute(
        {m, n}, [&](Var i, Var j) { return A(i, j) + bias(j); }, "add_bias");
    Tensor C = compute(
        {m, n}, [&](Var i, Var j) { return B(i, j) * scale(i, 0); }, "scaled");
    Tensor D = compute(
        {m, n}, [&](Var i, Var j) { return max(C(i, j), 0.0f); }, "relu");
    Tensor E = compute(
        {m, n}, [&](Var i, Var j) { return D(i, j) * D(i, j) - A(i, j); }, "sq");
    return {{A, bias, scale}, {D, E}};
}

// A (M x K) times B (K x N); `mixed`: each read converted to float32 (float16 or bfloat16
// inputs, products and sums in float32: the tensor-core GEMM and cuBLAS's mixed precision).
TensorDAG matmul_of(const WorkloadParams& p, bool mixed) {
    int m = dim(p, 0), n = dim(p, 1), k_extent = dim(p, 2);
    Type t = dtype(p, 3);
    Tensor A = placeholder({m, k_extent}, t, "A");
    Tensor B = placeholder({k_extent, n}, t, "B");
    IterVar k = reduce_axis({0, k_extent}, "k");
    Tensor C = compute(
        {m, n},
        [&](Var i, Var j) {
            if (mixed) return sum(cast(Float(32), A(i, k)) * cast(Float(32), B(k, j)), {k});
            return sum(A(i, k) * B(k, j), {k});
        },
        "C");
    return {{A, B}, {C}};
}

TensorDAG matmul(const WorkloadParams& p) {
    return matmul_of(p, false);
}

TensorDAG matmul_mixed(const WorkloadParams& p) {
    return matmul_of(p, true);
}

TensorDAG batch_matmul(const WorkloadParams& p) {
    int batch = dim(p, 0), m = dim(p, 1), n = dim(p, 2), k_extent = dim(p, 3);
    Type t = dtype(p, 4);
    Tensor A = placeholder({batch, m, k_extent}, t, "A");
    Tensor B = placeholder({batch, k_extent, n}, t, "B");
    IterVar k = reduce_axis({0, k_extent}, "k");
    Tensor C = compute(
        {batch, m, n}, [&](Var b, Var i, Var j) { return sum(A(b, i, k) * B(b, k, j), {k}); }, "C");
    return {{A, B}, {C}};
}

// NCHW, a square kernel, zero padding as its own stage (if_then_else), a stride, then a ReLU.
TensorDAG conv2d(const WorkloadParams& p) {
    const int batch = dim(p, 0), c = dim(p, 1), h = dim(p, 2), w = dim(p, 3), k = dim(p, 4);
    const int kernel = dim(p, 5), stride = dim(p, 6), pad = dim(p, 7);
    const Type t = dtype(p, 8);
    const int oh = (h + 2 * pad - kernel) / stride + 1, ow = (w + 2 * pad - kernel) / stride + 1;
    Tensor X = placeholder({batch, c, h, w}, t, "X");
    Tensor W = placeholder({k, c, kernel, kernel}, t, "W");
    Tensor P = compute(
        {batch, c, h + 2 * pad, w + 2 * pad},
        [&](Var b, Var ch, Var y, Var x) {
            Expr inside = y >= pad && y < h + pad && x >= pad && x < w + pad;
            return if_then_else(inside, X(b, ch, y - pad, x - pad), make_zero(t));
        },
        "pad");
    IterVar rc = reduce_axis({0, c}, "rc"), ry = reduce_axis({0, kernel}, "ry"),
            rx = reduce_axis({0, kernel}, "rx");
    Tensor C = compute(
        {batch, k, oh, ow},
        [&](Var b, Var f, Var y, Var x) {
            return sum(P(b, rc, y * stride + ry.var(), x * stride + rx.var()) * W(f, rc, ry, rx),
                       {rc, ry, rx});
        },
        "conv");
    Tensor R = compute(
        {batch, k, oh, ow}, [&](Var b, Var f, Var y, Var x) { return max(C(b, f, y, x), 0.0f); },
        "relu");
    return {{X, W}, {R}};
}

// Per-channel square kernel, "same" zero padding guarded inside the reduction, stride 1.
TensorDAG depthwise_conv(const WorkloadParams& p) {
    const int batch = dim(p, 0), c = dim(p, 1), h = dim(p, 2), w = dim(p, 3);
    const int kernel = dim(p, 4), pad = kernel / 2;
    const Type t = dtype(p, 5);
    Tensor X = placeholder({batch, c, h, w}, t, "X");
    Tensor W = placeholder({c, kernel, kernel}, t, "W");
    IterVar ry = reduce_axis({0, kernel}, "ry"), rx = reduce_axis({0, kernel}, "rx");
    Tensor C = compute(
        {batch, c, h, w},
        [&](Var b, Var ch, Var y, Var x) {
            Expr iy = y + ry.var() - pad, ix = x + rx.var() - pad;
            Expr inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            Expr v = if_then_else(inside, X(b, ch, iy, ix), make_zero(t));
            return sum(v * W(ch, ry, rx), {ry, rx});
        },
        "dwconv");
    return {{X, W}, {C}};
}

// A ReLU producer, then max pooling with a square window, a stride and no padding.
TensorDAG max_pool(const WorkloadParams& p) {
    const int batch = dim(p, 0), c = dim(p, 1), h = dim(p, 2), w = dim(p, 3);
    const int kernel = dim(p, 4), stride = dim(p, 5);
    const Type t = dtype(p, 6);
    Tensor X = placeholder({batch, c, h, w}, t, "X");
    Tensor R = compute(
        {batch, c, h, w}, [&](Var b, Var ch, Var y, Var x) { return max(X(b, ch, y, x), 0.0f); },
        "relu");
    IterVar ry = reduce_axis({0, kernel}, "ry"), rx = reduce_axis({0, kernel}, "rx");
    Tensor P = compute(
        {batch, c, (h - kernel) / stride + 1, (w - kernel) / stride + 1},
        [&](Var b, Var ch, Var y, Var x) {
            return max(R(b, ch, y * stride + ry.var(), x * stride + rx.var()), {ry, rx});
        },
        "pool");
    return {{X}, {P}};
}

// Four computes: row max, exp, row sum, divide.
TensorDAG softmax(const WorkloadParams& p) {
    const int n = dim(p, 0), m = dim(p, 1);
    Tensor X = placeholder({n, m}, dtype(p, 2), "X");
    IterVar k1 = reduce_axis({0, m}, "k1"), k2 = reduce_axis({0, m}, "k2");
    Tensor mx = compute(
        {n}, [&](Var i) { return max(X(i, k1), {k1}); }, "row_max");
    Tensor e = compute(
        {n, m}, [&](Var i, Var j) { return exp(X(i, j) - mx(i)); }, "exp");
    Tensor s = compute(
        {n}, [&](Var i) { return sum(e(i, k2), {k2}); }, "row_sum");
    Tensor out = compute(
        {n, m}, [&](Var i, Var j) { return e(i, j) / s(i); }, "softmax");
    return {{X}, {out}};
}

// Mean, variance, then normalise with a per-column scale and shift.
TensorDAG layer_norm(const WorkloadParams& p) {
    const int n = dim(p, 0), m = dim(p, 1);
    const Type t = dtype(p, 2);
    Tensor X = placeholder({n, m}, t, "X");
    Tensor gamma = placeholder({m}, t, "gamma");
    Tensor beta = placeholder({m}, t, "beta");
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
    return {{X, gamma, beta}, {out}};
}

// Squares, then sums over the middle axis of a 3-D tensor.
TensorDAG reduce_middle_axis(const WorkloadParams& p) {
    const int a_extent = dim(p, 0), b_extent = dim(p, 1), c_extent = dim(p, 2);
    Tensor X = placeholder({a_extent, b_extent, c_extent}, dtype(p, 3), "X");
    Tensor S = compute(
        {a_extent, b_extent, c_extent},
        [&](Var a, Var b, Var c) { return X(a, b, c) * X(a, b, c); }, "square");
    IterVar k = reduce_axis({0, b_extent}, "k");
    Tensor R = compute(
        {a_extent, c_extent}, [&](Var a, Var c) { return sum(S(a, k, c), {k}); }, "reduce");
    return {{X}, {R}};
}

// A scaled copy, then a 3-D transpose (2, 0, 1).
TensorDAG transpose(const WorkloadParams& p) {
    const int a_extent = dim(p, 0), b_extent = dim(p, 1), c_extent = dim(p, 2);
    Tensor X = placeholder({a_extent, b_extent, c_extent}, dtype(p, 3), "X");
    Tensor Y = compute(
        {a_extent, b_extent, c_extent}, [&](Var a, Var b, Var c) { return X(a, b, c) * 3.0f; },
        "scale");
    Tensor T = compute(
        {c_extent, a_extent, b_extent}, [&](Var c, Var a, Var b) { return Y(a, b, c); },
        "transpose");
    return {{X}, {T}};
}

// Two outputs of one reduction: the index (int32) and the value of each row's maximum.
TensorDAG argmax_rows(const WorkloadParams& p) {
    const int n = dim(p, 0), m = dim(p, 1);
    Tensor X = placeholder({n, m}, dtype(p, 2), "X");
    IterVar k = reduce_axis({0, m}, "k");
    std::vector<Tensor> r = compute_multi(
        {n}, [&](Var i) { return argmax(k.var(), X(i, k), {k}); }, "argmax");
    return {{X}, {r[0], r[1]}};
}

}  // namespace

std::vector<WorkloadDefinition> builtin_workloads() {
    return {
        {"elementwise_broadcast", ints({"M", "N"}), elementwise_broadcast},
        {"matmul", ints({"M", "N", "K"}), matmul},
        {"matmul_mixed", ints({"M", "N", "K"}), matmul_mixed},
        {"batch_matmul", ints({"B", "M", "N", "K"}), batch_matmul},
        {"conv2d", ints({"N", "C", "H", "W", "K", "kernel", "stride", "pad"}), conv2d},
        {"depthwise_conv", ints({"N", "C", "H", "W", "kernel"}), depthwise_conv},
        {"max_pool", ints({"N", "C", "H", "W", "kernel", "stride"}), max_pool},
        {"softmax", ints({"N", "M"}), softmax},
        {"layer_norm", ints({"N", "M"}), layer_norm},
        {"reduce_middle_axis", ints({"A", "B", "C"}), reduce_middle_axis},
        {"transpose", ints({"A", "B", "C"}), transpose},
        {"argmax", ints({"N", "M"}), argmax_rows},
    };
}

}  // namespace tessel::internal
