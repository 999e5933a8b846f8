// reindex: a stage rebuilt over groups of its axes, each group one axis (a convolution as a
// matrix product: its output pixels one axis, its reduction over channels and window another),
// its operands read through gathers indexed by those axes (implicit GEMM's im2col, computed where
// the gathers are: inlined into a shared tile's copy, it is never materialised).
#include <algorithm>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/te/Operation.h"

namespace tessel {

using internal::schedule_fail;
using A = ScheduleAccess;

namespace {

// One group of the stage's axes: the roots it fuses, outermost first, and their extents.
struct AxisGroup {
    std::vector<IterVar> axes;
    std::vector<int64_t> extents;
    bool reduction = false;
    int64_t extent() const {
        int64_t e = 1;
        for (int64_t x : extents) e *= x;
        return e;
    }
};

// The axes of group `g` as digits of its fused index `v`: axis j is v / (the extents after j)
// % extent j, plus its domain's minimum.
void bind_digits(const AxisGroup& g, const Expr& v, VarMap& map) {
    int64_t inner = 1;
    for (size_t j = g.axes.size(); j-- > 0;) {
        const Type t = g.axes[j].var().type();
        Expr digit = inner == 1 ? v : floordiv(v, make_const(v.type(), inner));
        if (j > 0) digit = floormod(digit, make_const(v.type(), g.extents[j]));
        if (digit.type() != t) digit = Cast::make(t, digit);
        map[g.axes[j].var().get()] = digit + g.axes[j].dom().min;
        inner *= g.extents[j];
    }
}

// The fused index of group `g` at the stage's own axes (mixed radix).
Expr fused_index(const AxisGroup& g) {
    Expr index;
    for (size_t j = 0; j < g.axes.size(); ++j) {
        Expr a = Expr(g.axes[j].var()) - g.axes[j].dom().min;
        index = index.defined() ? index * make_const(a.type(), g.extents[j]) + a : a;
    }
    return index;
}

// A tensor read of the body and the groups its indices use, in group order.
struct Gather {
    const TensorRead* read;
    std::vector<size_t> groups;
    Operation op;
};

// The tensor reads of `e`.
std::vector<const TensorRead*> reads_of(const Expr& e) {
    std::vector<const TensorRead*> reads;
    post_order_visit(e, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::TensorRead)
            reads.push_back(static_cast<const TensorRead*>(n));
    });
    return reads;
}

// Whether `e` reads a tensor in a branch of a select or an if_then_else (a gather reads every
// point of its domain, where the condition may guard the read).
bool reads_under_condition(const Expr& e) {
    bool guarded = false;
    post_order_visit(e, [&](const IRNode* n) {
        std::vector<Expr> branches;
        if (n->node_type == IRNodeType::Select) {
            const auto* s = static_cast<const Select*>(n);
            branches = {s->true_value, s->false_value};
        } else if (n->node_type == IRNodeType::Call &&
                   static_cast<const Call*>(n)->op == Intrinsic::if_then_else) {
            const auto* c = static_cast<const Call*>(n);
            branches.assign(c->args.begin() + 1, c->args.end());
        }
        for (const Expr& b : branches) guarded = guarded || !reads_of(b).empty();
    });
    return guarded;
}

// Replaces each gathered read by a read of its gather at the new stage's axes.
class ReadGathers : public IRMutator {
public:
    ReadGathers(const std::vector<Gather>& gathers, const std::vector<Expr>& group_vars)
        : gathers_(gathers), vars_(group_vars) {}
    using IRMutator::visit;

protected:
    Expr visit(const TensorRead* op) override {
        for (const Gather& g : gathers_)
            if (g.read->tensor.same_as(op->tensor) &&
                std::equal(g.read->indices.begin(), g.read->indices.end(), op->indices.begin(),
                           op->indices.end(),
                           [](const Expr& a, const Expr& b) { return structural_equal(a, b); })) {
                std::vector<Expr> idx;
                for (size_t grp : g.groups) idx.push_back(vars_[grp]);
                return op_output(g.op, 0)(idx);
            }
        return IRMutator::visit(op);
    }

private:
    const std::vector<Gather>& gathers_;
    const std::vector<Expr>& vars_;
};

}  // namespace

int Schedule::reindex(int stage, const std::vector<int>& order, const std::vector<int>& groups) {
    const char* prim = "reindex";
    Stage& st = A::loop_stage(*this, prim, stage);
    std::ostringstream os;
    if (st.attach == AttachKind::Inlined) schedule_fail(*this, prim, stage, "is inlined");
    const ComputeOpNode* c = as_compute(st.op);
    const Reduce* red = c->body.size() == 1 ? c->body[0].as<Reduce>() : nullptr;
    if (!red)
        schedule_fail(*this, prim, stage,
                      "is not a reduction with one output; reindex rebuilds a reduction (a "
                      "convolution, a product) over groups of its axes");
    internal::require_untransformed(*this, prim, stage);
    // The groups: `order` a permutation of the leaves, cut into groups of the given sizes, the
    // data-parallel groups first.
    const size_t nsp = c->axis.size(), n = nsp + c->reduce_axis.size();
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    bool perm = sorted.size() == n;
    for (size_t i = 0; perm && i < n; ++i) perm = sorted[i] == static_cast<int>(i);
    if (!perm) {
        os << "order must list each of the stage's " << n << " loops once (positions 0.." << n - 1
           << ")";
        schedule_fail(*this, prim, stage, os.str());
    }
    std::vector<AxisGroup> grp;
    size_t at = 0;
    for (int size : groups) {
        if (size < 1 || at + static_cast<size_t>(size) > n) {
            os << "group sizes must be positive and sum to the " << n << " loops of the stage";
            schedule_fail(*this, prim, stage, os.str());
        }
        AxisGroup g;
        for (int j = 0; j < size; ++j, ++at) {
            const size_t pos = static_cast<size_t>(order[at]);
            const IterVar& iv = pos < nsp ? c->axis[pos] : c->reduce_axis[pos - nsp];
            const bool r = pos >= nsp;
            auto e = as_const_int(iv.dom().extent);
            if (!e)
                schedule_fail(*this, prim, stage,
                              "loop '" + iv.var().name() + "' has no constant extent");
            if (j > 0 && r != g.reduction) {
                os << "group " << grp.size() << " mixes data-parallel and reduction loops";
                schedule_fail(*this, prim, stage, os.str());
            }
            g.reduction = r;
            g.axes.push_back(iv);
            g.extents.push_back(*e);
        }
        if (!grp.empty() && grp.back().reduction && !g.reduction)
            schedule_fail(*this, prim, stage, "the data-parallel groups must come first");
        grp.push_back(std::move(g));
    }
    if (at != n) {
        os << "group sizes sum to " << at << ", not to the " << n << " loops of the stage";
        schedule_fail(*this, prim, stage, os.str());
    }
    if (std::none_of(grp.begin(), grp.end(), [](const AxisGroup& g) { return !g.reduction; }))
        schedule_fail(*this, prim, stage, "needs at least one data-parallel group");
    // The reads to gather: each distinct read that uses a loop, indexed by the groups it uses.
    std::vector<const TensorRead*> reads;
    bool guarded = !reads_of(red->condition).empty();
    for (const Expr& e : red->source) {
        for (const TensorRead* r : reads_of(e)) reads.push_back(r);
        guarded = guarded || reads_under_condition(e);
    }
    if (guarded)
        schedule_fail(*this, prim, stage,
                      "reads a tensor under a condition (if_then_else, select or the reduction's "
                      "condition); a gather would read it where the condition guards it");
    std::vector<Gather> gathers;
    for (const TensorRead* r : reads) {
        bool seen = false;
        for (const Gather& g : gathers)
            seen = seen ||
                   (g.read->tensor.same_as(r->tensor) &&
                    std::equal(g.read->indices.begin(), g.read->indices.end(), r->indices.begin(),
                               r->indices.end(), [](const Expr& a, const Expr& b) {
                                   return structural_equal(a, b);
                               }));
        if (seen) continue;
        Gather g{r, {}, Operation()};
        for (size_t k = 0; k < grp.size(); ++k) {
            bool used = false;
            for (const IterVar& iv : grp[k].axes)
                for (const Expr& i : r->indices) used = used || uses_var(i, iv.var());
            if (used) g.groups.push_back(k);
        }
        if (!g.groups.empty()) gathers.push_back(std::move(g));
    }
    // The gathers: each read at the digits of its groups' axes.
    for (Gather& g : gathers) {
        std::vector<Expr> shape;
        for (size_t k : g.groups) shape.push_back(make_const(Int(32), grp[k].extent()));
        const Tensor& t = g.read->tensor;
        g.op = compute_multi(
                   shape,
                   [&](const std::vector<Var>& v) {
                       VarMap map;
                       for (size_t j = 0; j < g.groups.size(); ++j)
                           bind_digits(grp[g.groups[j]], v[j], map);
                       std::vector<Expr> idx;
                       for (const Expr& i : g.read->indices) idx.push_back(substitute(i, map));
                       return std::vector<Expr>{t(idx)};
                   },
                   t.op()->name + ".gather")[0]
                   .op();
    }
    // The stage over the groups, and the stage itself a copy out of it.
    std::vector<Expr> shape;
    std::vector<IterVar> raxes;
    for (const AxisGroup& g : grp)
        if (!g.reduction) shape.push_back(make_const(Int(32), g.extent()));
    for (size_t k = 0; k < grp.size(); ++k)
        if (grp[k].reduction) {
            std::string name;
            for (const IterVar& iv : grp[k].axes)
                name += (name.empty() ? "" : ".") + iv.var().name();
            raxes.push_back(reduce_axis(Range(0, make_const(Int(32), grp[k].extent())),
                                        grp[k].axes.size() > 1 ? name + ".fused" : name));
        }
    Operation body =
        compute_multi(
            shape,
            [&](const std::vector<Var>& v) {
                std::vector<Expr> vars;
                VarMap map;
                size_t sp = 0, rd = 0;
                for (const AxisGroup& g : grp) {
                    Expr x = g.reduction ? Expr(raxes[rd++].var()) : Expr(v[sp++]);
                    vars.push_back(x);
                    bind_digits(g, x, map);
                }
                ReadGathers swap(gathers, vars);
                std::vector<Expr> sources;
                for (const Expr& e : red->source)
                    sources.push_back(substitute(swap.mutate(e), map));
                return std::vector<Expr>{Reduce::make(red->combiner, sources, raxes,
                                                      substitute(red->condition, map), 0)};
            },
            c->name + ".reindex")[0]
            .op();
    std::vector<Expr> out_shape;
    for (const IterVar& iv : c->axis) out_shape.push_back(iv.dom().extent);
    Operation copy = compute_multi(
                         out_shape,
                         [&](const std::vector<Var>& v) {
                             VarMap own;
                             for (size_t d = 0; d < nsp; ++d) own[c->axis[d].var().get()] = v[d];
                             std::vector<Expr> idx;
                             for (const AxisGroup& g : grp)
                                 if (!g.reduction) idx.push_back(substitute(fused_index(g), own));
                             return std::vector<Expr>{op_output(body, 0)(idx)};
                         },
                         c->name)[0]
                         .op();
    Operation orig = st.op;
    std::vector<Stage> saved = stages_;
    st = internal::replacement_stage(st, copy);
    A::insert_stage(*this, stage, internal::make_stage(body));
    for (size_t k = gathers.size(); k-- > 0;)
        A::insert_stage(*this, stage, internal::make_stage(gathers[k].op));
    internal::redirect_reads(stages_, {}, {}, {{orig, copy}});
    std::string error = internal::new_attachment_error(saved, stages_);
    if (!error.empty()) {
        stages_ = std::move(saved);
        schedule_fail(*this, prim, stage, error);
    }
    record(ReindexStep{stage, order, groups});
    return stage + static_cast<int>(gathers.size());
}

}  // namespace tessel
