// How an operation's reads use its axes (op/ReadAccess.h).
#include "op/ReadAccess.h"

#include "op/OpUtil.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::op::internal {

namespace {

bool is_var(const Expr& e, const Var& v) {
    return e.get() == v.get();
}

}  // namespace

// Invariant: no index uses v; UnitLast: only the last, as v or v plus/minus an expression free of
// v (a dense vector access); Bare: only one index, exactly v (`bare_dim` says which); Other.
AxisUse axis_use(const std::vector<Expr>& idx, const Var& v, int* bare_dim) {
    int used = -1;
    for (size_t d = 0; d < idx.size(); ++d) {
        if (!uses_var(idx[d], v)) continue;
        if (used >= 0) return AxisUse::Other;
        used = static_cast<int>(d);
    }
    if (used < 0) return AxisUse::Invariant;
    const Expr& e = idx[static_cast<size_t>(used)];
    bool unit = is_var(e, v);
    if (const Add* a = e.as<Add>())
        unit = (is_var(a->a, v) && !uses_var(a->b, v)) || (is_var(a->b, v) && !uses_var(a->a, v));
    if (const Sub* sb = e.as<Sub>()) unit = is_var(sb->a, v) && !uses_var(sb->b, v);
    if (unit && used + 1 == static_cast<int>(idx.size())) return AxisUse::UnitLast;
    *bare_dim = used;
    return is_var(e, v) ? AxisUse::Bare : AxisUse::Other;
}

// The tensor reads of an operation's body.
std::vector<const TensorRead*> tensor_reads(const ComputeOpNode* c) {
    std::vector<const TensorRead*> reads;
    for (const Expr& b : c->body)
        post_order_visit(b, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::TensorRead)
                reads.push_back(static_cast<const TensorRead*>(n));
        });
    return reads;
}

// Whether every read of `c` is invariant or dense along axis `v`: a vector along it needs no
// gather.
bool dense_along(const ComputeOpNode* c, const Var& v) {
    for (const TensorRead* r : tensor_reads(c)) {
        int dim = -1;
        AxisUse use = axis_use(r->indices, v, &dim);
        if (use != AxisUse::Invariant && use != AxisUse::UnitLast) return false;
    }
    return true;
}

// Whether some read of `c` is transposed along its two innermost axes: the innermost axis a whole
// index before the last, the one outside it dense in the last (transpose's x[j, i]).
bool reads_transposed(const ComputeOpNode* c) {
    if (c->axis.size() < 2) return false;
    const Var& inner = c->axis.back().var();
    const Var& outer = c->axis[c->axis.size() - 2].var();
    for (const TensorRead* r : tensor_reads(c)) {
        int dim = -1, unused = -1;
        if (axis_use(r->indices, inner, &dim) == AxisUse::Bare &&
            axis_use(r->indices, outer, &unused) == AxisUse::UnitLast)
            return true;
    }
    return false;
}

// Whether every read of `c` uses axis `v` in a way a vector along it can load: invariant
// (broadcast), dense, or (placeholders only) a whole index, to be packed.
namespace {

bool vector_axis_ok(const ComputeOpNode* c, const Var& v, VectorAxisPlan* plan) {
    for (const TensorRead* r : tensor_reads(c)) {
        int dim = -1;
        AxisUse use = axis_use(r->indices, v, &dim);
        if (use == AxisUse::Other) return false;
        if (use != AxisUse::Bare) continue;
        if (!as_placeholder(r->tensor.op())) return false;
        bool known = false;
        for (const auto& [t, d] : plan->packs) known = known || same_tensor(t, r->tensor);
        if (!known) plan->packs.emplace_back(r->tensor, dim);
    }
    return true;
}

}  // namespace

// The plan for a tiled operation on a CPU: an empty plan (axis -1) keeps the innermost axis, as
// long as it is a good vector axis (its extent a multiple of the vector width, every read dense
// or invariant along it); otherwise the innermost other spatial axis that is good; otherwise, when
// the reads are dense along the innermost reduction axis, no tile (as_reduction).
VectorAxisPlan plan_vector_axis(const DAGAnalysis& a, int op, const Target& target) {
    const ComputeOpNode* c = as_compute(a.ops()[static_cast<size_t>(op)]);
    std::vector<int64_t> ext = a.spatial_extents(op);
    const int64_t lanes =
        target.vector_lanes(op_output(a.ops()[static_cast<size_t>(op)], 0).dtype());
    const int d = static_cast<int>(ext.size());
    if (lanes < 2 || d < 2) return {};
    VectorAxisPlan inner;
    if (ext.back() % lanes == 0 && vector_axis_ok(c, c->axis.back().var(), &inner) &&
        inner.packs.empty())
        return {};
    for (int v = d - 2; v >= 0; --v) {
        VectorAxisPlan plan;
        if (ext[static_cast<size_t>(v)] % lanes != 0 ||
            !vector_axis_ok(c, c->axis[static_cast<size_t>(v)].var(), &plan))
            continue;
        plan.axis = v;
        return plan;
    }
    // No good vector axis among the outputs (a matrix-vector product, dense with one row): a
    // reduction vectorised along its innermost axis when every read is dense along it.
    VectorAxisPlan reduce;
    const int64_t r = a.reduction_extents(op).back();
    reduce.as_reduction =
        dense_along(c, c->reduce_axis.back().var()) && divisor_at_most(r, 4 * lanes) >= lanes;
    return reduce;
}

}  // namespace tessel::op::internal
