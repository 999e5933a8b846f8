// Matrix products (op/Matmul.h).
#include "tessel/op/Matmul.h"

#include "op/OpUtil.h"

namespace tessel::op {

using internal::bad_param;

namespace {

// The (rows, cols) of a possibly transposed 2-D operand given its last two extents.
std::pair<int64_t, int64_t> rows_cols(int64_t d0, int64_t d1, bool transpose) {
    return transpose ? std::make_pair(d1, d0) : std::make_pair(d0, d1);
}

void check_inner(int64_t ka, int64_t kb, const char* op) {
    if (ka != kb)
        bad_param(op, "b",
                  "has inner extent " + std::to_string(kb) + " but a has " + std::to_string(ka));
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              std::optional<Type> out_dtype, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(a, 2, op, "a");
    internal::check_rank(b, 2, op, "b");
    internal::check_product_dtypes(a, b, op, "b");
    std::vector<int64_t> sa = constant_shape(a, op, "a"), sb = constant_shape(b, op, "b");
    auto [m, ka] = rows_cols(sa[0], sa[1], transpose_a);
    auto [kb, n] = rows_cols(sb[0], sb[1], transpose_b);
    check_inner(ka, kb, op);
    internal::Accumulation acc = internal::accumulation(a.dtype(), out_dtype, op);
    IterVar k = reduce_axis({0, make_const(Int(32), ka)}, "k");
    return internal::reduction_stage(
        {m, n}, acc,
        [&](const std::vector<Var>& v) {
            Var i = v[0], j = v[1];
            Expr x = transpose_a ? a(k.var(), i) : a(i, k.var());
            Expr y = transpose_b ? b(j, k.var()) : b(k.var(), j);
            return tessel::sum(acc.widen(x) * acc.widen(y), {k});
        },
        name);
}

Tensor batch_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                    std::optional<Type> out_dtype, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(a, 3, op, "a");
    internal::check_rank(b, 3, op, "b");
    internal::check_product_dtypes(a, b, op, "b");
    std::vector<int64_t> sa = constant_shape(a, op, "a"), sb = constant_shape(b, op, "b");
    if (sa[0] != sb[0] && sa[0] != 1 && sb[0] != 1)
        bad_param(op, "b",
                  "has batch extent " + std::to_string(sb[0]) + " but a has " +
                      std::to_string(sa[0]) + " (one of them may be 1)");
    auto [m, ka] = rows_cols(sa[1], sa[2], transpose_a);
    auto [kb, n] = rows_cols(sb[1], sb[2], transpose_b);
    check_inner(ka, kb, op);
    internal::Accumulation acc = internal::accumulation(a.dtype(), out_dtype, op);
    IterVar k = reduce_axis({0, make_const(Int(32), ka)}, "k");
    return internal::reduction_stage(
        {std::max(sa[0], sb[0]), m, n}, acc,
        [&](const std::vector<Var>& v) {
            Var bt = v[0], i = v[1], j = v[2];
            Expr ba = sa[0] == 1 ? make_zero(bt.type()) : Expr(bt);
            Expr bb = sb[0] == 1 ? make_zero(bt.type()) : Expr(bt);
            Expr x = transpose_a ? a(ba, k.var(), i) : a(ba, i, k.var());
            Expr y = transpose_b ? b(bb, j, k.var()) : b(bb, k.var(), j);
            return tessel::sum(acc.widen(x) * acc.widen(y), {k});
        },
        name);
}

Tensor dense(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation act,
             std::optional<Type> out_dtype, const std::string& name) {
    const char* op = name.c_str();
    internal::check_rank(x, 2, op, "x");
    internal::check_rank(weight, 2, op, "weight");
    std::vector<int64_t> sw = constant_shape(weight, op, "weight");
    if (bias.defined()) {
        internal::check_rank(bias, 1, op, "bias");
        internal::check_same_dtype(x, bias, op, "bias");
        if (constant_shape(bias, op, "bias")[0] != sw[0])
            bad_param(op, "bias",
                      "has extent " + std::to_string(constant_shape(bias, op, "bias")[0]) +
                          " but weight has " + std::to_string(sw[0]) + " units");
    }
    if (act != Activation::None && act != Activation::ReLU) internal::check_float(x, op, "x");
    internal::Accumulation acc = internal::accumulation(x.dtype(), out_dtype, op);
    bool epilogue = bias.defined() || act != Activation::None;
    if (!epilogue) return matmul(x, weight, false, true, out_dtype, name);
    // The product in the accumulator's type; bias and activation applied in it, then narrowed.
    Tensor y = matmul(x, weight, false, true, acc.accumulate, name + ".matmul");
    return compute(
        y.shape(),
        [&](Var i, Var j) {
            Expr v = y(i, j);
            if (bias.defined()) v = v + acc.widen(bias(j));
            return acc.narrow(apply_activation(act, v));
        },
        name);
}

}  // namespace tessel::op
