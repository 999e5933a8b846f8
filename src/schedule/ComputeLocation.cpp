// Compute-location primitives: compute_at, reverse_compute_at, compute_inline, compute_root,
// pre_transform.
#include <algorithm>
#include <map>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
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

namespace {

// Walks the reads of a body towards `target` for reverse_reads: `sub` maps the variables of the
// body being walked to indices in the reading stage's own variables; reduction variables keep
// their own (their ranges collected in `summed_ranges`).
class ReverseReadWalk {
public:
    ReverseReadWalk(const std::vector<Stage>& stages, int stage, int target, ReverseReads& out)
        : stages_(stages), target_(target), out_(out) {
        const ComputeOpNode* c = as_compute(stages[stage].op);
        for (size_t k = 0; k < c->axis.size(); ++k)
            own_[c->axis[k].var().get()] = static_cast<int>(k);
        out_.target_axis.assign(c->axis.size(), -1);
        const ComputeOpNode* t = as_compute(stages[target].op);
        const size_t rank = t ? t->axis.size() : as_placeholder(stages[target].op)->shape.size();
        out_.summed.assign(rank, false);
    }

    // Whether `body` (under `sub`) reads the target; records the pattern or an error.
    bool walk(const Expr& body, const VarMap& sub, int depth) {
        bool found = false;
        post_order_visit(body, [&](const IRNode* n) {  // (a Reduce is visited after its reads)
            if (n->node_type == IRNodeType::Reduce)
                for (const IterVar& iv : static_cast<const Reduce*>(n)->axis)
                    ranges_[iv.var().get()] = iv.dom();
        });
        post_order_visit(body, [&](const IRNode* n) {
            if (n->node_type != IRNodeType::TensorRead || !out_.error.empty()) return;
            const auto* r = static_cast<const TensorRead*>(n);
            std::vector<Expr> idx;
            for (const Expr& e : r->indices) idx.push_back(simplify(substitute(e, sub)));
            const Operation& op = r->tensor.op();
            if (op.same_as(stages_[target_].op)) {
                found = true;
                record(idx);
                return;
            }
            const ComputeOpNode* c = as_compute(op);
            if (!c || depth > static_cast<int>(stages_.size())) return;
            int st = -1;
            for (size_t i = 0; i < stages_.size(); ++i)
                if (stages_[i].op.same_as(op)) st = static_cast<int>(i);
            if (st < 0) return;
            VarMap inner;
            for (size_t d = 0; d < c->axis.size() && d < idx.size(); ++d)
                inner[c->axis[d].var().get()] = idx[d];
            bool reads = false;
            for (const Expr& b : c->body) reads = walk(b, inner, depth + 1) || reads;
            if (reads) {
                found = true;
                if (std::find(out_.between.begin(), out_.between.end(), st) == out_.between.end())
                    out_.between.push_back(st);
            }
        });
        return found;
    }

private:
    void record(const std::vector<Expr>& idx) {
        std::vector<int> axis_of(out_.target_axis.size(), -1);
        std::vector<bool> summed(idx.size(), false);
        for (size_t d = 0; d < idx.size(); ++d) {
            const Variable* v = idx[d].as<Variable>();
            auto own = v ? own_.find(v) : own_.end();
            auto range = v ? ranges_.find(v) : ranges_.end();
            if (own != own_.end() && axis_of[own->second] < 0) {
                axis_of[own->second] = static_cast<int>(d);
            } else if (range != ranges_.end() && whole(range->second, d)) {
                summed[d] = true;
            } else {
                std::ostringstream os;
                os << "its read of '" << stages_[target_].name() << "' at index " << d << " ("
                   << to_string(idx[d])
                   << ") is neither one of its own axes nor a reduction over that whole axis";
                out_.error = os.str();
                return;
            }
        }
        for (size_t k = 0; k < axis_of.size(); ++k) {
            if (axis_of[k] >= 0) continue;
            std::ostringstream os;
            os << "its axis " << k << " is not the index of any axis of '"
               << stages_[target_].name() << "' it reads";
            out_.error = os.str();
            return;
        }
        if (any_ && (axis_of != out_.target_axis || summed != out_.summed)) {
            out_.error = "it reads '" + stages_[target_].name() + "' at different indices";
            return;
        }
        any_ = true;
        out_.target_axis = axis_of;
        out_.summed = summed;
    }

    // Whether `r` is the whole of the target's axis d.
    bool whole(const Range& r, size_t d) const {
        const ComputeOpNode* t = as_compute(stages_[target_].op);
        const Expr extent =
            t ? t->axis[d].dom().extent : as_placeholder(stages_[target_].op)->shape[d];
        return is_zero(r.min) && is_zero(simplify(Sub::make(r.extent, extent)));
    }

    const std::vector<Stage>& stages_;
    int target_;
    ReverseReads& out_;
    std::map<const Variable*, int> own_;
    std::map<const Variable*, Range> ranges_;
    bool any_ = false;
};

}  // namespace

ReverseReads reverse_reads(const std::vector<Stage>& stages, int stage, int target) {
    ReverseReads out;
    ReverseReadWalk walk(stages, stage, target, out);
    bool found = false;
    for (const Expr& body : as_compute(stages[stage].op)->body)
        found = walk.walk(body, VarMap{}, 0) || found;
    if (!found && out.error.empty()) out.error = "it does not read '" + stages[target].name() + "'";
    std::sort(out.between.begin(), out.between.end());
    return out;
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
                  AttachKind kind, int target, int iter, Excuse may_break,
                  bool attach_after = false) {
    std::vector<internal::BrokenAttachment> after;
    {
        Stage& st = stages[stage];
        AttachKind old_kind = st.attach;
        int old_target = st.attach_stage, old_iter = st.attach_iter;
        bool old_after = st.attach_after;
        st.attach = kind;
        st.attach_stage = target;
        st.attach_iter = iter;
        st.attach_after = attach_after;
        after = internal::broken_attachments(stages);
        if (after.empty()) return;
        st.attach = old_kind;
        st.attach_stage = old_target;
        st.attach_iter = old_iter;
        st.attach_after = old_after;
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
    st.attach_after = attach_after;
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

void Schedule::reverse_compute_at(int stage, int target, int target_iter) {
    const char* prim = "reverse_compute_at";
    A::loop_stage(*this, prim, stage);
    refuse_pre_transformed(*this, prim, stage);
    if (target == stage) schedule_fail(*this, prim, stage, "a stage cannot be computed at itself");
    A::loop_stage(*this, prim, target);
    const Stage& t = stages_[target];
    if (t.attach == AttachKind::Inlined)
        schedule_fail(*this, prim, stage,
                      "target " + stage_name(*this, target) + " is inlined; it has no loops");
    if (t.attach != AttachKind::Root)
        schedule_fail(*this, prim, stage,
                      "target " + stage_name(*this, target) +
                          " is computed at another stage's loop, where its region follows its "
                          "readers; reverse_compute_at needs a target computed at the root");
    if (attached_within(stages_, target, stage))
        schedule_fail(*this, prim, stage,
                      "target " + stage_name(*this, target) + " is itself computed inside " +
                          stage_name(*this, stage) + ": that would be a cycle");
    internal::ReverseReads reads = internal::reverse_reads(stages_, stage, target);
    if (!reads.error.empty()) schedule_fail(*this, prim, stage, reads.error);
    if (target_iter < 0 || target_iter >= static_cast<int>(t.leaf.size())) {
        std::ostringstream os;
        os << "cannot compute " << stage_name(*this, stage) << " at iterator position "
           << target_iter << ": it is not a leaf loop of this stage; legal positions are 0.."
           << t.leaf.size() - 1;
        schedule_fail(*this, prim, target, os.str());
    }
    for (int pos = 0; pos <= target_iter; ++pos)
        if (t.iters[t.leaf[pos]].kind == IterKind::Reduction)
            schedule_fail(
                *this, prim, stage,
                "loop '" + t.iters[t.leaf[target_iter]].name + "' of " + stage_name(*this, target) +
                    " is inside (or is) its reduction loop '" + t.iters[t.leaf[pos]].name +
                    "': the target's values are final only outside its reduction");
    // The stages between the two are computed inside this one by later steps (compute_at): what
    // the move leaves incomplete about its own readers may be mended so.
    const Operation self = stages_[stage].dag_op;
    move_checked(
        *this, stages_, prim, stage, AttachKind::At, target, t.leaf[target_iter],
        [&](const internal::BrokenAttachment& b) {
            int r = stage_made_from(stages_, b.reader);
            return b.stage.same_as(self) && r >= 0 && !stages_[r].is_output;
        },
        /*attach_after=*/true);
    record(ReverseComputeAtStep{stage, target, target_iter});
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
