// Compute-location primitives: compute_at, compute_inline, compute_root, pre_transform.
#include <algorithm>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace internal {

std::vector<BrokenAttachment> broken_attachments(const std::vector<Stage>& stages) {
    std::vector<BrokenAttachment> out;
    for (int x = 0; x < static_cast<int>(stages.size()); ++x) {
        if (stages[x].attach != AttachKind::At) continue;
        int t = stages[x].attach_stage;
        const std::vector<int>& leaf = stages[t].leaf;
        auto pos = [&](int id) { return std::find(leaf.begin(), leaf.end(), id) - leaf.begin(); };
        for (int c : consumers_of(stages, x)) {
            if (c == t) continue;
            const Stage& reader = stages[c];
            bool direct = reader.attach == AttachKind::At && reader.attach_stage == t;
            if (direct && pos(reader.attach_iter) >= pos(stages[x].attach_iter)) continue;
            out.push_back({stages[x].dag_op, reader.dag_op,
                           "stage '" + stages[x].name() + "' is computed at '" + stages[t].name() +
                               "' loop '" + stages[t].iters[stages[x].attach_iter].name +
                               "', but its reader '" + reader.name() +
                               "' would not be computed inside that loop; compute_at '" +
                               reader.name() + "' inside it, or compute_root '" + stages[x].name() +
                               "' first"});
        }
    }
    return out;
}

std::string attachment_error(const Schedule& s) {
    std::vector<BrokenAttachment> broken = broken_attachments(s.stages());
    return broken.empty() ? "" : broken[0].message;
}

std::string new_attachment_error(const std::vector<Stage>& before,
                                 const std::vector<Stage>& after) {
    std::vector<BrokenAttachment> now = broken_attachments(after);
    if (now.empty()) return "";
    std::vector<BrokenAttachment> was = broken_attachments(before);
    for (const BrokenAttachment& b : now) {
        bool known = std::any_of(was.begin(), was.end(), [&](const BrokenAttachment& w) {
            return w.stage.same_as(b.stage) && w.reader.same_as(b.reader);
        });
        if (!known) return b.message;
    }
    return "";
}

bool computed_inside_kernel(const Schedule& s, int i) {
    for (size_t hops = 0; hops <= s.stages().size(); ++hops) {
        const Stage& st = s.stages()[i];
        if (st.attach != AttachKind::At) return false;
        const Stage& t = s.stages()[st.attach_stage];
        for (int id : t.leaf) {
            IterAnnotation a = t.iters[id].annotation;
            if (is_launch_axis(a)) return true;
            if (id == st.attach_iter) break;
        }
        i = st.attach_stage;
    }
    return false;
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

// Moves `stage` to (kind, target, iter), then checks that the move broke no attachment
// (internal::new_attachment_error): moving one stage changes who reads the others (compute_root
// of a reader, inlining a stage between two others). On failure the move is undone and the
// primitive fails, naming the stage whose attachment would break. `may_break(b)` excuses what a
// later step can still mend (compute_at: readers of the stage not attached yet).
template <typename Excuse>
void move_checked(Schedule& s, std::vector<Stage>& stages, const char* prim, int stage,
                  AttachKind kind, int target, int iter, Excuse may_break) {
    std::vector<internal::BrokenAttachment> after;
    {
        Stage& st = stages[stage];
        AttachKind old_kind = st.attach;
        int old_target = st.attach_stage, old_iter = st.attach_iter;
        st.attach = kind;
        st.attach_stage = target;
        st.attach_iter = iter;
        after = internal::broken_attachments(stages);
        if (after.empty()) return;
        st.attach = old_kind;
        st.attach_stage = old_target;
        st.attach_iter = old_iter;
    }
    std::vector<internal::BrokenAttachment> before = internal::broken_attachments(stages);
    for (const internal::BrokenAttachment& b : after) {
        bool known = std::any_of(before.begin(), before.end(), [&](const auto& w) {
            return w.stage.same_as(b.stage) && w.reader.same_as(b.reader);
        });
        if (!known && !may_break(b)) schedule_fail(s, prim, stage, b.message);
    }
    Stage& st = stages[stage];
    st.attach = kind;
    st.attach_stage = target;
    st.attach_iter = iter;
}

void move_checked(Schedule& s, std::vector<Stage>& stages, const char* prim, int stage,
                  AttachKind kind, int target, int iter) {
    move_checked(s, stages, prim, stage, kind, target, iter,
                 [](const internal::BrokenAttachment&) { return false; });
}

// The index of the stage computing DAG operation `op`.
int stage_made_from(const std::vector<Stage>& stages, const Operation& op) {
    for (size_t i = 0; i < stages.size(); ++i)
        if (stages[i].dag_op.same_as(op)) return static_cast<int>(i);
    return -1;
}

// pre_transform's stage is computed outside the kernel: nothing moves it back in.
void refuse_pre_transformed(Schedule& s, const char* prim, int stage) {
    if (s.stages()[stage].pre_transform)
        schedule_fail(s, prim, stage,
                      "is pre-transformed (computed once, outside the kernel); it stays at the "
                      "root");
}

// The placeholder `st` transforms when it computes each element from that one placeholder alone,
// without a reduction: a plain copy of it (what cache_read makes) or an element-wise transform
// (Winograd's transformed filters, op/Conv.h). Null otherwise.
const PlaceholderOpNode* transformed_placeholder(const Stage& st) {
    const ComputeOpNode* c = as_compute(st.op);
    if (!c || c->body.size() != 1 || !c->reduce_axis.empty()) return nullptr;
    const std::vector<Tensor> inputs = op_inputs(st.op);
    return inputs.size() == 1 ? as_placeholder(inputs[0].op()) : nullptr;
}

}  // namespace

void Schedule::pre_transform(int stage) {
    const char* prim = "pre_transform";
    Stage& st = A::loop_stage(*this, prim, stage);
    const PlaceholderOpNode* p = transformed_placeholder(st);
    if (st.is_output || !p)
        schedule_fail(*this, prim, stage,
                      "is neither a copy nor an element-wise transform of one placeholder; "
                      "pre_transform takes the stage that cache_read(weight, \"global\", "
                      "readers) made, or a transform of the weight alone");
    if (!p->constant)
        schedule_fail(*this, prim, stage,
                      "copies placeholder '" + p->name +
                          "', which is not constant; only a constant operand (a weight, "
                          "placeholder(..., constant=true)) can be transformed once");
    if (st.scope != StorageScope::Global)
        schedule_fail(*this, prim, stage,
                      std::string("has ") + scope_name(st.scope) +
                          " storage; the transformed weight is a global buffer");
    if (st.double_buffer || st.pipeline_depth || st.swizzle_bits || st.tensorize_iter >= 0)
        schedule_fail(*this, prim, stage,
                      "is double-buffered, pipelined, swizzled or tensorized; a transformed "
                      "weight is a plain buffer");
    for (const StorageDim& d : st.storage)
        if (d.align_factor)
            schedule_fail(*this, prim, stage,
                          "has padded strides (storage_align); the transformed weight is a "
                          "compact buffer in its storage order");
    if (st.pre_transform) schedule_fail(*this, prim, stage, "is pre-transformed already");
    move_checked(*this, stages_, prim, stage, AttachKind::Root, -1, -1);
    stages_[stage].pre_transform = true;
    record(PreTransformStep{stage});
}

void Schedule::compute_at(int stage, int target, int target_iter) {
    const char* prim = "compute_at";
    A::loop_stage(*this, prim, stage);
    refuse_pre_transformed(*this, prim, stage);
    Stage& st = stages_[stage];
    std::ostringstream os;
    if (target == stage) schedule_fail(*this, prim, stage, "a stage cannot be computed at itself");
    A::loop_stage(*this, prim, target);
    if (st.is_output)
        schedule_fail(*this, prim, stage,
                      "is an output of the schedule; outputs are computed at the root");
    // A reader that is an output stays at the root: unless it is the target, the stage could
    // never be inside all its readers. Other readers may still be moved inside the target by a
    // later compute_at (TVM accepts any order): that is checked on the finished schedule
    // (verify_schedule, lowering), naming both stages.
    std::vector<int> consumers = internal::consumers_of(*this, stage);
    for (int c : consumers) {
        if (c == target || !stages_[c].is_output) continue;
        bool is_consumer = std::find(consumers.begin(), consumers.end(), target) != consumers.end();
        if (!is_consumer)
            os << "target " << stage_name(*this, target) << " does not read "
               << stage_name(*this, stage) << ", and its reader " << stage_name(*this, c)
               << " is an output, computed at the root; compute_at needs a consumer, or a stage "
                  "every consumer is computed at (consumers:";
        else
            os << "it is also read by " << stage_name(*this, c)
               << ", an output (computed at the root), which can never be inside "
               << stage_name(*this, target) << "; keep this stage at the root or inline it "
               << "(consumers:";
        for (int r : consumers) os << " " << stage_name(*this, r);
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
    // What the move leaves incomplete about this stage's own readers can be mended by a later
    // step; what it breaks for other stages (this stage read something computed where it was)
    // fails now, as compute_root's and reorder's do.
    const Operation self = st.dag_op;
    move_checked(*this, stages_, prim, stage, AttachKind::At, target, iter_id,
                 [&](const internal::BrokenAttachment& b) {
                     int r = stage_made_from(stages_, b.reader);
                     return b.stage.same_as(self) && r >= 0 && !stages_[r].is_output;
                 });
    record(ComputeAtStep{stage, target, target_iter});
}

void Schedule::compute_inline(int stage) {
    const char* prim = "compute_inline";
    Stage& st = A::loop_stage(*this, prim, stage);
    refuse_pre_transformed(*this, prim, stage);
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
