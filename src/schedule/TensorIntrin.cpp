// The built-in tensor intrinsics and the structural matcher of their patterns (see the header).
#include "tessel/schedule/TensorIntrin.h"

#include <algorithm>
#include <sstream>

#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace {

// The n of the wgmma intrinsics (tensor_intrins lists them; the instruction has every multiple
// of 8 up to 256: these are the ones a GEMM's warp tile takes).
constexpr int kWgmmaWidths[] = {8, 16, 32, 64, 96, 128, 192, 256};

Expr c32(int64_t v) {
    return make_const(Int(32), v);
}

// C[i, j] = sum_k cast(acc, A[i, k]) * cast(acc, B[k, j]) with A m x k, B k x n (or B[j, k],
// n x k, when `b_nk`).
Tensor mma_pattern(Type in, int m, int n, int k, bool b_nk = false) {
    Tensor a = placeholder({c32(m), c32(k)}, in, "A");
    Tensor b =
        b_nk ? placeholder({c32(n), c32(k)}, in, "B") : placeholder({c32(k), c32(n)}, in, "B");
    IterVar kk = reduce_axis(Range(c32(0), c32(k)), "k");
    return compute(
        {c32(m), c32(n)},
        [&](Var i, Var j) {
            Expr x = a(i, kk.var()), y = b_nk ? b(j, kk.var()) : b(kk.var(), j);
            if (in != Float(32)) {
                x = cast(Float(32), x);
                y = cast(Float(32), y);
            }
            return sum(x * y, {kk});
        },
        "C");
}

// C[j] = sum_k cast(acc, A[k]) * cast(acc, B[j, k]): `lanes` accumulators, each the dot product
// of a group of `group` elements of A (the same for every lane) and of its row of B.
Tensor dot_pattern(Type a_type, Type b_type, Type acc, int lanes, int group) {
    Tensor a = placeholder({c32(group)}, a_type, "A");
    Tensor b = placeholder({c32(lanes), c32(group)}, b_type, "B");
    IterVar kk = reduce_axis(Range(c32(0), c32(group)), "k");
    return compute(
        {c32(lanes)},
        [&](Var j) { return sum(cast(acc, a(kk.var())) * cast(acc, b(j, kk.var())), {kk}); }, "C");
}

// D[i, j] = S[i, j] (or S[j, i] when `transposed`), rows x cols.
Tensor copy_pattern(Type t, int rows, int cols, bool transposed) {
    Tensor s = transposed ? placeholder({c32(cols), c32(rows)}, t, "S")
                          : placeholder({c32(rows), c32(cols)}, t, "S");
    return compute(
        {c32(rows), c32(cols)}, [&](Var i, Var j) { return transposed ? s(j, i) : s(i, j); }, "D");
}

std::vector<TensorIntrin> make_intrins() {
    using K = TensorIntrinKind;
    using F = FragmentKind;
    const Type h = Float(16), b = BFloat(16), f = Float(32);
    std::vector<TensorIntrin> v;
    v.push_back({"mma_m16n8k16_f16", K::Mma, mma_pattern(h, 16, 8, 16), F::A16, false, {}});
    v.push_back({"mma_m16n8k16_bf16", K::Mma, mma_pattern(b, 16, 8, 16), F::A16, false, {}});
    v.push_back({"mma_m16n8k8_tf32", K::Mma, mma_pattern(f, 16, 8, 8), F::A8, false, {}});
    v.push_back({"mma_m16n8k8_tf32_bt", K::Mma, mma_pattern(f, 16, 8, 8, true), F::A8, true, {}});
    v.push_back({"mma_m16n8k16_f16_bt", K::Mma, mma_pattern(h, 16, 8, 16, true), F::A16, true, {}});
    v.push_back(
        {"mma_m16n8k16_bf16_bt", K::Mma, mma_pattern(b, 16, 8, 16, true), F::A16, true, {}});
    v.push_back({"ldmatrix_a", K::LdMatrix, copy_pattern(h, 16, 16, false), F::A16, false, {b}});
    v.push_back(
        {"ldmatrix_b_trans", K::LdMatrix, copy_pattern(h, 16, 8, false), F::B16, true, {b}});
    v.push_back({"ldmatrix_b", K::LdMatrix, copy_pattern(h, 16, 8, true), F::B16, false, {b}});
    v.push_back(
        {"ldmatrix_b_trans_x4", K::LdMatrix, copy_pattern(h, 16, 16, false), F::B16x2, true, {b}});
    v.push_back(
        {"ldmatrix_b_x4", K::LdMatrix, copy_pattern(h, 16, 16, true), F::B16x2, false, {b}});
    v.push_back({"ldmatrix_bt", K::LdMatrix, copy_pattern(h, 8, 16, false), F::B16T, false, {b}});
    v.push_back(
        {"ldmatrix_bt_x4", K::LdMatrix, copy_pattern(h, 16, 16, false), F::B16x2T, false, {b}});
    // The same fragments from a tile whose storage is k-major (storage_reorder): .trans, its
    // rows along k.
    v.push_back({"ldmatrix_bt_trans_x4",
                 K::LdMatrix,
                 copy_pattern(h, 16, 16, false),
                 F::B16x2T,
                 true,
                 {b}});
    v.push_back({"load_a16", K::LoadFragment, copy_pattern(h, 16, 16, false), F::A16, false, {b}});
    v.push_back({"load_b16", K::LoadFragment, copy_pattern(h, 16, 8, false), F::B16, false, {b}});
    v.push_back({"load_a8", K::LoadFragment, copy_pattern(f, 16, 8, false), F::A8, false, {}});
    v.push_back({"load_b8", K::LoadFragment, copy_pattern(f, 8, 8, false), F::B8, false, {}});
    v.push_back({"load_b8t", K::LoadFragment, copy_pattern(f, 8, 8, false), F::B8T, false, {}});
    v.push_back({"ldmatrix_a8", K::LdMatrix, copy_pattern(f, 16, 8, false), F::A8, false, {}});
    v.push_back({"ldmatrix_b8t", K::LdMatrix, copy_pattern(f, 8, 8, false), F::B8T, false, {}});
    v.push_back({"store_c", K::StoreFragment, copy_pattern(f, 16, 8, false), F::C, false, {}});
    for (int n : kWgmmaWidths)
        for (bool bt : {false, true})
            for (const Type& t : {h, b}) {
                v.push_back({wgmma_intrin_name(n, t, bt),
                             K::Wgmma,
                             mma_pattern(t, 16, n, 16, bt),
                             F::C,
                             bt,
                             {}});
            }
    const Type u8 = UInt(8), s8 = Int(8), i32 = Int(32);
    v.push_back({"dot_16x4_u8s8", K::CpuDot, dot_pattern(u8, s8, i32, 16, 4), F::C, false, {}});
    v.push_back({"dot_8x4_u8s8", K::CpuDot, dot_pattern(u8, s8, i32, 8, 4), F::C, false, {}});
    v.push_back({"dot_16x2_bf16", K::CpuDot, dot_pattern(b, b, f, 16, 2), F::C, false, {}});
    v.push_back({"dot_8x2_bf16", K::CpuDot, dot_pattern(b, b, f, 8, 2), F::C, false, {}});
    return v;
}

// Walks a pattern and a stage body in step.
class Matcher {
public:
    Matcher(const TensorIntrin& in, std::vector<MatchedRead>* reads, std::vector<Expr>* bounds)
        : in_(in), reads_(reads), bounds_(bounds) {}

    std::string match(const Expr& p, const Expr& s) {
        if (!why_.empty()) return why_;
        // The tf32 mma rounds its operands to tf32 itself: an operand read rounded so
        // (round_tf32, op::matmul's allow_tf32) is what it computes.
        if (const auto* c = s.as<Call>(); c && c->op == Intrinsic::round_tf32 &&
                                          p.as<TensorRead>() && in_.kind == TensorIntrinKind::Mma &&
                                          in_.fragment == FragmentKind::A8)
            return match(p, c->args[0]);
        if (p.node_type() != s.node_type()) return differ(p, s, "a different operation");
        if (const auto* pr = p.as<TensorRead>()) return read(pr, s.as<TensorRead>());
        if (p.type() != s.type()) return differ(p, s, "a different type");
        if (const auto* pc = p.as<Cast>()) return match(pc->value, s.as<Cast>()->value);
        if (const auto* pa = p.as<Add>()) return binary(pa, s.as<Add>());
        if (const auto* pa = p.as<Sub>()) return binary(pa, s.as<Sub>());
        if (const auto* pa = p.as<Mul>()) return binary(pa, s.as<Mul>());
        if (const auto* pr = p.as<Reduce>()) return reduce(pr, s.as<Reduce>());
        return differ(p, s, "an operation the pattern does not have");
    }

private:
    std::string differ(const Expr& p, const Expr& s, const char* what) {
        std::ostringstream os;
        os << "the stage computes " << s << " where the pattern has " << p << " (" << what << ")";
        why_ = os.str();
        return why_;
    }
    bool dtype_ok(Type pattern, Type stage) const {
        return pattern == stage || std::find(in_.other_dtypes.begin(), in_.other_dtypes.end(),
                                             stage) != in_.other_dtypes.end();
    }
    std::string read(const TensorRead* p, const TensorRead* s) {
        if (!dtype_ok(p->type, s->type))
            return differ(Expr(p), Expr(s), "a different element type");
        if (s->indices.size() < p->indices.size())
            return differ(Expr(p), Expr(s), "fewer dimensions");
        reads_->push_back({p, s});
        return "";
    }
    template <typename T>
    std::string binary(const T* p, const T* s) {
        if (!match(p->a, s->a).empty()) return why_;
        return match(p->b, s->b);
    }
    std::string reduce(const Reduce* p, const Reduce* s) {
        if (s->source.size() != 1) return differ(Expr(p), Expr(s), "a multi-valued reduction");
        if (!is_one(s->condition) && !bounds(s->condition))
            return differ(Expr(p), Expr(s),
                          bounds_ && (in_.kind == TensorIntrinKind::Mma ||
                                      in_.kind == TensorIntrinKind::Wgmma)
                              ? "a condition other than bounds `index < extent`"
                              : "a conditional reduction");
        const CommReducer& c = s->combiner;
        const auto* add = c->result[0].as<Add>();
        const auto zero = as_const_float(c->identity[0]);
        const bool is_sum = add && (is_zero(c->identity[0]) || (zero && *zero == 0.0)) &&
                            ((add->a.same_as(c->lhs[0]) && add->b.same_as(c->rhs[0])) ||
                             (add->a.same_as(c->rhs[0]) && add->b.same_as(c->lhs[0])));
        if (!is_sum) return differ(Expr(p), Expr(s), "a reduction other than a sum");
        return match(p->source[0], s->source[0]);
    }

    // A reduction's condition made of bounds `index < extent` (a split-K part's end), each
    // kept in bounds_; only for an mma, and only where the caller takes them.
    bool bounds(const Expr& cond) {
        if (!bounds_ || (in_.kind != TensorIntrinKind::Mma && in_.kind != TensorIntrinKind::Wgmma))
            return false;
        if (const auto* a = cond.as<And>()) return bounds(a->a) && bounds(a->b);
        if (is_one(cond)) return true;
        const auto* lt = cond.as<LT>();
        if (!lt || !as_const_int(lt->b)) return false;
        bounds_->push_back(cond);
        return true;
    }

    const TensorIntrin& in_;
    std::vector<MatchedRead>* reads_;
    std::vector<Expr>* bounds_;
    std::string why_;
};

}  // namespace

const std::vector<TensorIntrin>& tensor_intrins() {
    static const std::vector<TensorIntrin> intrins = make_intrins();
    return intrins;
}

const TensorIntrin* cpu_dot_intrin_for(const Target& target, Type a, Type b, Type acc) {
    if (target.is_gpu()) return nullptr;
    const char* name = nullptr;
    if (a == UInt(8) && b == Int(8) && acc == Int(32)) {
        if (target.has_feature("avx512vnni"))
            name = "dot_16x4_u8s8";
        else if (target.has_feature("avxvnni"))
            name = "dot_8x4_u8s8";
    } else if (a == BFloat(16) && b == BFloat(16) && acc == Float(32)) {
        if (target.has_feature("avx512bf16")) name = "dot_16x2_bf16";
    }
    return name ? find_tensor_intrin(name) : nullptr;
}

std::string wgmma_intrin_name(int64_t n, const Type& t, bool b_nk) {
    return "wgmma_m64n" + std::to_string(n) + "k16_" + (t == BFloat(16) ? "bf16" : "f16") +
           (b_nk ? "_bt" : "");
}

const TensorIntrin* find_tensor_intrin(const std::string& name) {
    for (const TensorIntrin& in : tensor_intrins())
        if (in.name == name) return &in;
    return nullptr;
}

std::string tensor_intrin_names() {
    std::string out;
    for (const TensorIntrin& in : tensor_intrins()) out += (out.empty() ? "" : ", ") + in.name;
    return out;
}

std::vector<IterVar> tensor_intrin_axes(const TensorIntrin& in) {
    const ComputeOpNode* c = as_compute(in.pattern.op());
    std::vector<IterVar> axes = c->axis;
    axes.insert(axes.end(), c->reduce_axis.begin(), c->reduce_axis.end());
    return axes;
}

std::string match_tensor_intrin(const TensorIntrin& in, const Expr& body, Type out,
                                std::vector<MatchedRead>* reads, std::vector<Expr>* bounds) {
    const ComputeOpNode* c = as_compute(in.pattern.op());
    Expr p = c->body[0], s = body;
    const bool copy = in.kind != TensorIntrinKind::Mma && in.kind != TensorIntrinKind::CpuDot &&
                      in.kind != TensorIntrinKind::Wgmma;
    if (in.kind == TensorIntrinKind::StoreFragment) {
        if (const auto* cast = s.as<Cast>()) s = cast->value;  // the conversion on the way out
    } else if (copy ? (out != s.type() ||
                       (out != p.type() && std::find(in.other_dtypes.begin(), in.other_dtypes.end(),
                                                     out) == in.other_dtypes.end()))
                    : out != p.type()) {
        std::ostringstream os;
        os << "the stage's element type is " << out << " where the pattern's is " << p.type();
        return os.str();
    }
    reads->clear();
    if (bounds) bounds->clear();
    std::string why = Matcher(in, reads, bounds).match(p, s);
    if (!why.empty() || !bounds) return why;
    // Each bound is on an index that an operand reads at (where that operand may read zero).
    for (const Expr& b : *bounds) {
        const Expr index = simplify(b.as<LT>()->a);
        bool read = false;
        for (const MatchedRead& m : *reads)
            for (const Expr& x : m.stage->indices)
                read = read || structural_equal(simplify(x), index);
        if (!read) {
            std::ostringstream os;
            os << "the reduction's condition " << b << " bounds an index that no operand reads at";
            return os.str();
        }
    }
    return "";
}

}  // namespace tessel
