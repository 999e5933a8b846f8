// rfactor: factor a reduction into a stage of partial results over one part of a split
// reduction axis (now data-parallel) and a stage that reduces the partial results.
#include <algorithm>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

namespace tessel {

using internal::schedule_fail;
using A = ScheduleAccess;

namespace {

// The split relation that produced iterator `id`, or nullptr.
const IterRelation* split_of(const Stage& st, int id) {
    for (const IterRelation& r : st.relations)
        if (r.kind == IterRelation::Kind::Split && (r.outer == id || r.inner == id)) return &r;
    return nullptr;
}

Expr cast_to(Type t, const Expr& e) {
    return e.type() == t ? e : Cast::make(t, e);
}

// `v` with `x` inserted at position `at`.
std::vector<Expr> with_inserted(std::vector<Expr> v, size_t at, const Expr& x) {
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), x);
    return v;
}

}  // namespace

int Schedule::rfactor(int stage, int iter, int factor_axis) {
    const char* prim = "rfactor";
    int id = A::check_leaf(*this, prim, stage, iter);
    Stage& st = stages_[stage];
    const Iterator& it = st.iters[id];
    std::ostringstream os;
    if (st.attach == AttachKind::Inlined) schedule_fail(*this, prim, stage, "is inlined");
    if (it.kind != IterKind::Reduction) {
        os << "iterator '" << it.name << "' (position " << iter
           << ") is data-parallel; rfactor factors a reduction iterator (the outer or inner part "
              "of a split reduction axis)";
        schedule_fail(*this, prim, stage, os.str());
    }
    const ComputeOpNode* c = as_compute(st.op);
    const size_t nsp = c->axis.size();
    const IterRelation* rel = split_of(st, id);
    auto root_at = rel ? std::find(st.root.begin(), st.root.end(), rel->parent) : st.root.end();
    if (!rel || root_at == st.root.end()) {
        os << "iterator '" << it.name << "' (position " << iter
           << ") is not the outer or inner part of a split root reduction axis; split the "
              "reduction axis first and rfactor one of its parts";
        schedule_fail(*this, prim, stage, os.str());
    }
    if (factor_axis < 0 || factor_axis > static_cast<int>(nsp)) {
        os << "factor_axis " << factor_axis << " must be in [0, " << nsp
           << "] (a position among the " << nsp << " data-parallel axes of the new stage)";
        schedule_fail(*this, prim, stage, os.str());
    }
    for (const Stage& other : stages_)
        if (other.attach == AttachKind::At && other.attach_stage == stage)
            schedule_fail(*this, prim, stage,
                          "stage '" + other.name() +
                              "' is computed inside it; rfactor before compute_at into it");
    const IterVar rv = c->reduce_axis[(root_at - st.root.begin()) - nsp];
    const Reduce* red = c->body[0].as<Reduce>();
    const bool is_outer = rel->outer == id;
    const Expr x_ext = it.extent;
    const Expr y_ext = st.iters[is_outer ? rel->inner : rel->outer].extent;
    const Expr inner_ext = st.iters[rel->inner].extent;
    auto ce = as_const_int(rv.dom().extent), co = as_const_int(st.iters[rel->outer].extent),
         ci = as_const_int(inner_ext);
    const bool exact = ce && co && ci && *co * *ci == *ce;
    Type rt = rv.var().type();

    std::vector<Expr> spatial_shape;
    for (const IterVar& iv : c->axis) spatial_shape.push_back(iv.dom().extent);
    IterVar ry = reduce_axis(Range(0, y_ext), it.name + ".rest");
    std::vector<IterVar> rf_axes = c->reduce_axis;
    std::replace_if(
        rf_axes.begin(), rf_axes.end(), [&](const IterVar& a) { return a.same_as(rv); }, ry);
    std::vector<Tensor> rf = compute_multi(
        with_inserted(spatial_shape, factor_axis, x_ext),
        [&](const std::vector<Var>& v) {
            VarMap map;
            for (size_t d = 0; d < nsp; ++d)
                map[c->axis[d].var().get()] = cast_to(
                    c->axis[d].var().type(), v[d < static_cast<size_t>(factor_axis) ? d : d + 1]);
            Expr x = cast_to(rt, v[factor_axis]);
            Expr part = is_outer ? x * cast_to(rt, inner_ext) + ry.var()
                                 : Expr(ry.var()) * cast_to(rt, inner_ext) + x;
            map[rv.var().get()] = part + rv.dom().min;
            Expr cond = substitute(red->condition, map);
            if (!exact) cond = cond && (part < cast_to(rt, rv.dom().extent));
            std::vector<Expr> sources, bodies;
            for (const Expr& e : red->source) sources.push_back(substitute(e, map));
            for (size_t k = 0; k < c->body.size(); ++k)
                bodies.push_back(
                    Reduce::make(red->combiner, sources, rf_axes, cond, static_cast<int>(k)));
            return bodies;
        },
        c->name + ".rf");
    Operation rf_op = rf[0].op();
    IterVar kr = reduce_axis(Range(0, x_ext), it.name);
    std::vector<Tensor> fin = compute_multi(
        spatial_shape,
        [&](const std::vector<Var>& v) {
            std::vector<Expr> idx =
                with_inserted(std::vector<Expr>(v.begin(), v.end()), factor_axis, kr.var());
            std::vector<Expr> sources, bodies;
            for (const Tensor& t : rf) sources.push_back(t(idx));
            for (size_t k = 0; k < c->body.size(); ++k)
                bodies.push_back(Reduce::make(red->combiner, sources, {kr}, make_const(Bool(), 1),
                                              static_cast<int>(k)));
            return bodies;
        },
        c->name);
    Operation orig = st.op;
    std::vector<Stage> saved = stages_;
    st = internal::replacement_stage(st, fin[0].op());
    A::insert_stage(*this, stage, internal::make_stage(rf_op));
    internal::redirect_reads(stages_, {}, {}, {{orig, fin[0].op()}});
    // The rfactor stage reads the stage's producers now; one computed at a consumer breaks.
    std::string error = internal::new_attachment_error(saved, stages_);
    if (!error.empty()) {
        stages_ = std::move(saved);
        schedule_fail(*this, prim, stage, error);
    }
    record(RfactorStep{stage, iter, factor_axis});
    return stage;
}

}  // namespace tessel
