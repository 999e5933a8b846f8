// Matrix products (op/Matmul.h).
#include "tessel/op/Matmul.h"

#include "op/OpUtil.h"
#include "tessel/schedule/TensorIntrin.h"

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

// Whether an int8 x int8 product in int32 is built shifted for `target`: a CPU whose dot-product
// unit multiplies uint8 by int8 (vpdpbusd). Elsewhere (no target, a GPU, a CPU without VNNI)
// the plain product.
bool shift_s8s8(const Tensor& a, const Tensor& b, const internal::Accumulation& acc,
                const std::optional<Target>& target) {
    return target && a.dtype() == Int(8) && b.dtype() == Int(8) && acc.accumulate == Int(32) &&
           cpu_dot_intrin_for(*target, UInt(8), Int(8), Int(32)) != nullptr;
}

// The operands of a (batched) product: `batch` leading dimensions (0 or 1), A's rows and K, B's
// columns, read through the transposes.
struct Operands {
    Tensor a, b;
    bool transpose_a, transpose_b;
    std::vector<int64_t> batch_a, batch_b;  // the batch extents (empty for matmul)
    Expr read_a(const std::vector<Expr>& bt, Expr i, Expr k) const {
        std::vector<Expr> x = batch_a.empty() ? std::vector<Expr>{} : bt;
        x.push_back(transpose_a ? k : i);
        x.push_back(transpose_a ? i : k);
        return a(x);
    }
    Expr read_b(const std::vector<Expr>& bt, Expr k, Expr j) const {
        std::vector<Expr> x = batch_b.empty() ? std::vector<Expr>{} : bt;
        x.push_back(transpose_b ? j : k);
        x.push_back(transpose_b ? k : j);
        return b(x);
    }
};

// An operand of the product, widened to the accumulator; rounded to tf32 where `allow_tf32`
// asks for it and the product is float32 in float32 (other types ignore it, as PyTorch's flag).
Expr tf32_operand(const Expr& x, const internal::Accumulation& acc, bool allow_tf32) {
    Expr w = acc.widen(x);
    if (allow_tf32 && x.type() == Float(32) && acc.accumulate == Float(32)) return round_tf32(w);
    return w;
}

// The batch index of an operand of batch extent `extent` (a batch of one broadcasts).
std::vector<Expr> batch_index(const std::vector<int64_t>& extent, const Var& bt) {
    if (extent.empty()) return {};
    return {extent[0] == 1 ? make_zero(bt.type()) : Expr(bt)};
}

// s8 x s8 -> s32 on a uint8 x int8 unit (TVM's and oneDNN's +128 shift): A' = A + 128 is a
// uint8 (A xor 0x80), and sum_k A[i, k] B[k, j] = sum_k A'[i, k] B[k, j] - 128 sum_k B[k, j]:
// the unit's product of A' and B ("<name>.dot") minus 128 times B's column sums
// ("<name>.b_sum", the compensation), in "<name>". A' ("<name>.a_shift") is laid out [.., M, K]
// whatever transpose_a says: the unit reads A's rows along K. Every sum wraps around as int32,
// so the result is the plain product's bit for bit.
Tensor shifted_s8s8(const Operands& o, int64_t m, int64_t n, int64_t k_len,
                    const internal::Accumulation& acc, const std::string& name) {
    const bool batched = !o.batch_a.empty();
    const int64_t batch = batched ? std::max(o.batch_a[0], o.batch_b[0]) : 1;
    auto with_batch = [&](std::vector<int64_t> dims, const std::vector<int64_t>& b) {
        if (!b.empty()) dims.insert(dims.begin(), b[0]);
        return dims;
    };
    std::vector<Expr> a_shape, b_sum_shape, out_shape;
    for (int64_t e : with_batch({m, k_len}, o.batch_a)) a_shape.push_back(make_const(Int(32), e));
    for (int64_t e : with_batch({n}, o.batch_b)) b_sum_shape.push_back(make_const(Int(32), e));
    for (int64_t e : with_batch({m, n}, batched ? std::vector<int64_t>{batch} : o.batch_a))
        out_shape.push_back(make_const(Int(32), e));
    const size_t nb = batched ? 1 : 0;
    Tensor a_shift = compute(
        a_shape,
        [&](const std::vector<Var>& v) {
            std::vector<Expr> bt(v.begin(), v.begin() + nb);
            return cast(UInt(8), cast(Int(32), o.read_a(bt, v[nb], v[nb + 1])) + 128);
        },
        name + ".a_shift");
    IterVar ks = reduce_axis({0, make_const(Int(32), k_len)}, "k");
    Tensor b_sum = compute(
        b_sum_shape,
        [&](const std::vector<Var>& v) {
            std::vector<Expr> bt(v.begin(), v.begin() + nb);
            return sum(cast(Int(32), o.read_b(bt, ks.var(), v[nb])), {ks});
        },
        name + ".b_sum");
    IterVar k = reduce_axis({0, make_const(Int(32), k_len)}, "k");
    Tensor dot = compute(
        out_shape,
        [&](const std::vector<Var>& v) {
            std::vector<Expr> ba, bb;
            if (batched) ba = batch_index(o.batch_a, v[0]), bb = batch_index(o.batch_b, v[0]);
            std::vector<Expr> ia = ba;
            ia.push_back(v[nb]);
            ia.push_back(k.var());
            return sum(cast(Int(32), a_shift(ia)) * cast(Int(32), o.read_b(bb, k.var(), v[nb + 1])),
                       {k});
        },
        name + ".dot");
    return compute(
        out_shape,
        [&](const std::vector<Var>& v) {
            std::vector<Expr> bb, at = {v.begin(), v.end()};
            if (batched) bb = batch_index(o.batch_b, v[0]);
            bb.push_back(v[nb + 1]);
            return acc.narrow(dot(at) - b_sum(bb) * 128);
        },
        name);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              std::optional<Type> out_dtype, const std::string& name,
              const std::optional<Target>& target, bool allow_tf32) {
    const char* op = name.c_str();
    internal::check_rank(a, 2, op, "a");
    internal::check_rank(b, 2, op, "b");
    internal::check_product_dtypes(a, b, op, "b");
    std::vector<int64_t> sa = constant_shape(a, op, "a"), sb = constant_shape(b, op, "b");
    auto [m, ka] = rows_cols(sa[0], sa[1], transpose_a);
    auto [kb, n] = rows_cols(sb[0], sb[1], transpose_b);
    check_inner(ka, kb, op);
    internal::Accumulation acc = internal::accumulation(a.dtype(), out_dtype, op);
    if (shift_s8s8(a, b, acc, target))
        return shifted_s8s8({a, b, transpose_a, transpose_b, {}, {}}, m, n, ka, acc, name);
    IterVar k = reduce_axis({0, make_const(Int(32), ka)}, "k");
    return internal::reduction_stage(
        {m, n}, acc,
        [&](const std::vector<Var>& v) {
            Var i = v[0], j = v[1];
            Expr x = transpose_a ? a(k.var(), i) : a(i, k.var());
            Expr y = transpose_b ? b(j, k.var()) : b(k.var(), j);
            return tessel::sum(tf32_operand(x, acc, allow_tf32) * tf32_operand(y, acc, allow_tf32),
                               {k});
        },
        name);
}

Tensor batch_matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                    std::optional<Type> out_dtype, const std::string& name,
                    const std::optional<Target>& target, bool allow_tf32) {
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
    if (shift_s8s8(a, b, acc, target))
        return shifted_s8s8({a, b, transpose_a, transpose_b, {sa[0]}, {sb[0]}}, m, n, ka, acc,
                            name);
    IterVar k = reduce_axis({0, make_const(Int(32), ka)}, "k");
    return internal::reduction_stage(
        {std::max(sa[0], sb[0]), m, n}, acc,
        [&](const std::vector<Var>& v) {
            Var bt = v[0], i = v[1], j = v[2];
            Expr ba = sa[0] == 1 ? make_zero(bt.type()) : Expr(bt);
            Expr bb = sb[0] == 1 ? make_zero(bt.type()) : Expr(bt);
            Expr x = transpose_a ? a(ba, k.var(), i) : a(ba, i, k.var());
            Expr y = transpose_b ? b(bb, j, k.var()) : b(bb, k.var(), j);
            return tessel::sum(tf32_operand(x, acc, allow_tf32) * tf32_operand(y, acc, allow_tf32),
                               {k});
        },
        name);
}

Tensor dense(const Tensor& x, const Tensor& weight, const Tensor& bias, Activation act,
             std::optional<Type> out_dtype, const std::string& name,
             const std::optional<Target>& target, bool allow_tf32) {
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
    if (!epilogue) return matmul(x, weight, false, true, out_dtype, name, target, allow_tf32);
    // The product in the accumulator's type; bias and activation applied in it, then narrowed.
    Tensor y = matmul(x, weight, false, true, acc.accumulate, name + ".matmul", target, allow_tf32);
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
