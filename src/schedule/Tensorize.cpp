// tensorize: replaces a stage's innermost loops by a tensor intrinsic (schedule/TensorIntrin.h).
// What needs the bounds (the reads' strides, the operands' scopes) is checked by lowering
// (lower/ScheduleOps.cpp), which emits the intrinsic calls.
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/schedule/TensorIntrin.h"

namespace tessel {

using internal::schedule_fail;
using A = ScheduleAccess;

namespace {

// Whether iterator `id`'s extent is final: the inner loop of a split (its factor). Other extents
// of a stage computed at another may still shrink to the region bound inference gives it; those
// are checked when the schedule is lowered.
bool extent_final(const Stage& st, int id) {
    for (const IterRelation& r : st.relations)
        if (r.kind == IterRelation::Kind::Split && r.inner == id && !r.by_nparts) return true;
    return st.attach != AttachKind::At;
}

// The leaves from `iter` on must be the pattern's axes: same count, kinds and extents.
void check_loops(const Schedule& s, int stage, int iter, const TensorIntrin& in) {
    const char* prim = "tensorize";
    const Stage& st = s.stages()[stage];
    const std::vector<IterVar> axes = tensor_intrin_axes(in);
    const size_t below = st.leaf.size() - static_cast<size_t>(iter);
    std::ostringstream os;
    os << "intrinsic " << in.name << " replaces " << axes.size() << " loops (";
    for (size_t k = 0; k < axes.size(); ++k)
        os << (k ? ", " : "") << axes[k].var().name() << ": "
           << as_const_int(axes[k].dom().extent).value()
           << (axes[k].kind() == IterVarKind::Reduce ? " reduction" : "");
    os << ")";
    const std::string want = os.str();
    if (below != axes.size())
        schedule_fail(s, prim, stage,
                      want + " but the loop nest from leaf " + std::to_string(iter) + " has " +
                          std::to_string(below) + " loops");
    for (size_t k = 0; k < axes.size(); ++k) {
        const Iterator& it = st.iters[st.leaf[iter + k]];
        const int64_t extent = as_const_int(axes[k].dom().extent).value();
        const bool reduction = axes[k].kind() == IterVarKind::Reduce;
        std::string what;
        if (extent_final(st, st.leaf[iter + k]) && it.const_extent() != extent)
            what = "has extent " + (it.const_extent() ? std::to_string(*it.const_extent())
                                                      : std::string("(not constant)"));
        else if ((it.kind == IterKind::Reduction) != reduction)
            what = reduction ? "is not a reduction loop" : "is a reduction loop";
        else if (it.annotation != IterAnnotation::None && it.annotation != IterAnnotation::Unroll)
            what = std::string("is annotated ") + annotation_name(it.annotation);
        if (!what.empty())
            schedule_fail(s, prim, stage,
                          want + "; loop '" + it.name + "' (leaf " + std::to_string(iter + k) +
                              ", for " + axes[k].var().name() + ") " + what);
    }
}

}  // namespace

void Schedule::tensorize(int stage, int iter, const std::string& intrin) {
    const char* prim = "tensorize";
    const int id = A::check_leaf(*this, prim, stage, iter);
    Stage& st = A::stages(*this)[stage];
    const TensorIntrin* in = find_tensor_intrin(intrin);
    if (!in)
        schedule_fail(
            *this, prim, stage,
            "unknown tensor intrinsic '" + intrin + "' (known: " + tensor_intrin_names() + ")");
    if (st.tensorize_iter >= 0)
        schedule_fail(*this, prim, stage,
                      "it is already tensorized (with " + st.tensorize_intrin + ")");
    const ComputeOpNode* c = as_compute(st.op);
    if (c->body.size() != 1)
        schedule_fail(*this, prim, stage, "it computes several outputs; an intrinsic computes one");
    check_loops(*this, stage, iter, *in);
    std::vector<MatchedRead> reads;
    std::vector<Expr> bounds;  // checked by lowering, once the operands' copies are in place
    std::string why = match_tensor_intrin(*in, c->body[0], c->body[0].type(), &reads, &bounds);
    if (!why.empty())
        schedule_fail(*this, prim, stage,
                      "the body does not match intrinsic " + in->name + ": " + why);
    const bool writes_fragment =
        in->kind != TensorIntrinKind::StoreFragment && in->kind != TensorIntrinKind::CpuDot;
    if (writes_fragment && st.scope != StorageScope::Warp)
        schedule_fail(*this, prim, stage,
                      std::string("intrinsic ") + in->name +
                          " writes a fragment, but the stage's " + "scope is " +
                          scope_name(st.scope) +
                          " (fragments live in \"warp\" scope: cache_read/cache_write with "
                          "\"warp\", or set_scope)");
    st.tensorize_iter = id;
    st.tensorize_intrin = in->name;
    record(TensorizeStep{stage, iter, in->name});
}

}  // namespace tessel
