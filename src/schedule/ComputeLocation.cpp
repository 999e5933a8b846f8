// Compute-location primitives: compute_at, compute_inline, compute_root.
#include <algorithm>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace internal {

std::string attachment_error(const Schedule& s) {
    const std::vector<Stage>& stages = s.stages();
    for (int x = 0; x < static_cast<int>(stages.size()); ++x) {
        if (stages[x].attach != AttachKind::At) continue;
        int t = stages[x].attach_stage;
        const std::vector<int>& leaf = stages[t].leaf;
        auto pos = [&](int id) { return std::find(leaf.begin(), leaf.end(), id) - leaf.begin(); };
        for (int c : consumers_of(s, x)) {
            if (c == t) continue;
            const Stage& reader = stages[c];
            bool direct = reader.attach == AttachKind::At && reader.attach_stage == t;
            if (direct && pos(reader.attach_iter) >= pos(stages[x].attach_iter)) continue;
            return "stage '" + stages[x].name() + "' is computed at '" + stages[t].name() +
                   "' loop '" + stages[t].iters[stages[x].attach_iter].name +
                   "', but its reader '" + reader.name() +
                   "' would not be computed inside that loop; compute_at '" + reader.name() +
                   "' inside it, or compute_root '" + stages[x].name() + "' first";
        }
    }
    return "";
}

}  // namespace internal

using internal::schedule_fail;
using A = ScheduleAccess;

namespace {

// True if `stage` is computed (transitively, through compute_at) inside stage `target`.
bool attached_within(const std::vector<Stage>& stages, int stage, int target) {
    for (int s = stage, hops = 0; hops <= static_cast<int>(stages.size()); ++hops) {
        if (stages[s].attach != AttachKind::At) return false;
        s = stages[s].attach_stage;
        if (s == target) return true;
    }
    return false;
}

std::string stage_name(const Schedule& s, int i) {
    return "'" + s.stages()[i].name() + "'";
}

// Moves `stage` to (kind, target, iter), then checks that every attachment is still valid
// (internal::attachment_error): moving one stage changes who reads the others (compute_root of
// a reader, inlining a stage between two others). On failure the move is undone and the
// primitive fails, naming the stage whose attachment would break.
void move_checked(Schedule& s, std::vector<Stage>& stages, const char* prim, int stage,
                  AttachKind kind, int target, int iter) {
    Stage& st = stages[stage];
    AttachKind old_kind = st.attach;
    int old_target = st.attach_stage, old_iter = st.attach_iter;
    st.attach = kind;
    st.attach_stage = target;
    st.attach_iter = iter;
    std::string error = internal::attachment_error(s);
    if (error.empty()) return;
    st.attach = old_kind;
    st.attach_stage = old_target;
    st.attach_iter = old_iter;
    schedule_fail(s, prim, stage, error);
}

}  // namespace

void Schedule::compute_at(int stage, int target, int target_iter) {
    const char* prim = "compute_at";
    A::loop_stage(*this, prim, stage);
    Stage& st = stages_[stage];
    std::ostringstream os;
    if (target == stage) schedule_fail(*this, prim, stage, "a stage cannot be computed at itself");
    A::loop_stage(*this, prim, target);
    if (st.is_output)
        schedule_fail(*this, prim, stage,
                      "is an output of the schedule; outputs are computed at the root");
    std::vector<int> consumers = internal::consumers_of(*this, stage);
    bool is_consumer = std::find(consumers.begin(), consumers.end(), target) != consumers.end();
    // As in TVM, a stage may also be computed at a stage that its consumers are all computed at
    // (a shared tile at k.outer of the stage whose k.inner computes the tile's register copy).
    bool consumers_inside =
        !consumers.empty() && std::all_of(consumers.begin(), consumers.end(), [&](int c) {
            return stages_[c].attach == AttachKind::At && stages_[c].attach_stage == target;
        });
    if (!is_consumer && !consumers_inside) {
        os << "target " << stage_name(*this, target) << " does not read "
           << stage_name(*this, stage)
           << "; compute_at needs a consumer, or a stage every consumer is computed at (consumers:";
        for (int c : consumers) os << " " << stage_name(*this, c);
        os << ")";
        schedule_fail(*this, prim, stage, os.str());
    }
    if (attached_within(stages_, target, stage))
        schedule_fail(*this, prim, stage,
                      "target " + stage_name(*this, target) + " is itself computed inside " +
                          stage_name(*this, stage) + ": that would be a cycle");
    if (stages_[target].attach == AttachKind::Inlined)
        schedule_fail(*this, prim, stage,
                      "target " + stage_name(*this, target) + " is inlined; it has no loops");
    const Stage& t = stages_[target];
    if (target_iter < 0 || target_iter >= static_cast<int>(t.leaf.size())) {
        // Name the stage being moved, but show the target's nest: that is where the position
        // points.
        os << "cannot compute " << stage_name(*this, stage) << " at iterator position "
           << target_iter << ": it is not a leaf loop of this stage; legal positions are 0.."
           << t.leaf.size() - 1;
        schedule_fail(*this, prim, target, os.str());
    }
    int iter_id = t.leaf[target_iter];
    for (int c : consumers) {
        // Bound inference unions the regions of readers computed directly inside the target.
        const Stage& reader = stages_[c];
        if (c == target || (reader.attach == AttachKind::At && reader.attach_stage == target))
            continue;
        // (move_checked below also checks the reader's loop is inside the attach loop.)
        os << "it is also read by " << stage_name(*this, c)
           << ", which is not computed directly inside " << stage_name(*this, target)
           << "; compute_at " << stage_name(*this, c)
           << " to a loop of it first, or inline/keep this stage at the root";
        schedule_fail(*this, prim, stage, os.str());
    }
    move_checked(*this, stages_, prim, stage, AttachKind::At, target, iter_id);
    record(ComputeAtStep{stage, target, target_iter});
}

void Schedule::compute_inline(int stage) {
    const char* prim = "compute_inline";
    Stage& st = A::loop_stage(*this, prim, stage);
    if (st.is_output)
        schedule_fail(*this, prim, stage,
                      "is an output of the schedule; outputs cannot be inlined");
    const ComputeOpNode* c = as_compute(st.op);
    if (!c->reduce_axis.empty())
        schedule_fail(
            *this, prim, stage,
            "is a reduction; only element-wise stages can be inlined (compute_at it instead)");
    for (size_t i = 0; i < stages_.size(); ++i) {
        if (stages_[i].attach == AttachKind::At && stages_[i].attach_stage == stage)
            schedule_fail(*this, prim, stage,
                          "stage " + stage_name(*this, static_cast<int>(i)) +
                              " is computed inside it; move that stage first");
    }
    move_checked(*this, stages_, prim, stage, AttachKind::Inlined, -1, -1);
    record(ComputeInlineStep{stage});
}

void Schedule::compute_root(int stage) {
    A::loop_stage(*this, "compute_root", stage);
    move_checked(*this, stages_, "compute_root", stage, AttachKind::Root, -1, -1);
    record(ComputeRootStep{stage});
}

}  // namespace tessel
