// Internals shared by the schedule's source files.
#pragma once

#include <sstream>
#include <string>

#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

namespace tessel::internal {

/// Throws ScheduleError: "<primitive>: stage '<name>': <message>" followed by the stage's loop
/// nest. Build the message with a std::ostringstream.
[[noreturn]] void schedule_fail(const Schedule& s, const char* primitive, int stage,
                                const std::string& message);

/// Fails (schedule_fail for `primitive`) unless `stage` is untouched: no splits, fuses, reorders
/// or annotations, and nothing computed inside it (cache_write and reindex rebuild its loops).
void require_untransformed(const Schedule& s, const char* primitive, int stage);

/// A fresh root stage of `op`: one iterator per axis (data-parallel, then reduction), leaves =
/// roots, default storage, global scope.
Stage make_stage(const Operation& op);

/// A fresh stage of `op` that takes `old`'s place: its DAG operation, attachment, output flag,
/// storage layout, scope and pragmas (cache_write and rfactor replace a stage this way).
Stage replacement_stage(const Stage& old, const Operation& op);

/// Rebuilds the operations of the stages so that reads of an operation that is a key of `only`
/// (in the stages listed in `readers`) or of `all` (in every stage) read the mapped operation's
/// output of the same index instead. A rebuilt operation is itself redirected in every later
/// stage (the stages are in topological order). `dag_op` is kept.
void redirect_reads(std::vector<Stage>& stages, const std::vector<int>& readers,
                    const std::vector<std::pair<Operation, Operation>>& only,
                    std::vector<std::pair<Operation, Operation>> all);

/// One Whole storage dimension per data-parallel axis of `op` (none for placeholders).
std::vector<StorageDim> default_storage(const Operation& op);

/// A stage's buffer laid out by its storage dimensions over `axis_extents` (one constant extent
/// per data-parallel axis): each storage dimension's extent and stride (padded where
/// storage_align asks), outermost first, and the elements the buffer spans. The lowering
/// allocates this much; the shared-memory checks count it.
struct StorageLayout {
    std::vector<int64_t> extents, strides;
    int64_t elements = 1;
    bool padded = false;  ///< some stride is larger than the compact one
};
StorageLayout storage_layout(const Stage& st, const std::vector<int64_t>& axis_extents);

/// Parses "global", "shared" or "local"; ScheduleError naming `prim` and the stage otherwise.
StorageScope parse_scope(const Schedule& s, const char* prim, int stage, const std::string& scope);

/// ceil(extent / factor) as an expression of extent's type (folded for constants).
Expr ceil_div(const Expr& extent, int64_t factor);

/// A stage computed at a loop with a reader that is not inside that loop (the reader is neither
/// the target nor computed directly at the target at the same loop or a loop nested inside it).
/// The stages are named by their DAG operations, which stay valid when stages are inserted.
struct BrokenAttachment {
    Operation stage, reader;
    std::string message;
};

/// Every broken attachment of `stages` (bound inference needs none).
std::vector<BrokenAttachment> broken_attachments(const std::vector<Stage>& stages);

/// The first broken attachment of `s` as a message, or "" when there is none: what
/// verify_schedule and lowering check on the finished schedule.
std::string attachment_error(const Schedule& s);

/// The first attachment broken in `after` that was not already broken in `before` (the stages
/// before a primitive changed them), as a message, or "". A primitive fails on what it breaks;
/// an attachment left incomplete by an earlier compute_at (its other readers not attached yet,
/// TVM's order of calls) is checked when the schedule is finished (attachment_error).
std::string new_attachment_error(const std::vector<Stage>& before, const std::vector<Stage>& after);

/// Whether iterator `id` of `st` has its extent whatever the stage's attachment: a reduction
/// root, the inner loop of a split by factor, the outer of a split by nparts, a fusion of such
/// loops, or any loop of an output (outputs compute their whole domain). Other extents shrink to
/// the region the consumers need when the stage is computed at a loop (now or by a later step),
/// so checks of them (vectorize and unroll lengths) wait for the finished schedule.
bool extent_is_final(const Stage& st, int id);

/// Whether stage `i` is computed inside a GPU kernel: at a loop inside (or at) a blockIdx/threadIdx
/// loop of its target, or inside a stage that is.
bool computed_inside_kernel(const Schedule& s, int i);

/// Whether `read` (of a stage's body) reads zero where its index `d` is `length` or more: it
/// reads a padded copy computed inside a GPU kernel (the copy's body one read at its own axes),
/// a shared one directly (wgmma's operands) or through a fragment loaded from it by a copy
/// intrinsic, of a placeholder or a root stage whose extent along `d` is at most `length`, so
/// the copy's reads past that extent are zeros.
bool reads_zero_past(const Schedule& s, const TensorRead* read, size_t d, int64_t length);

/// How stage `stage` reads stage `target` for reverse_compute_at (Schedule::reverse_compute_at):
/// through the bodies of the stages between them (read by `stage`, reading `target`), each
/// substituted at the indices it is read at.
struct ReverseReads {
    std::vector<int> target_axis;  ///< per data-parallel axis of `stage`: the target axis it reads
    std::vector<bool> summed;      ///< per target axis: summed whole by a reduction on the way
    std::vector<int> between;      ///< the stages between them, in stage order
    std::string error;             ///< why `stage` cannot be computed so (empty: it can)
};
ReverseReads reverse_reads(const std::vector<Stage>& stages, int stage, int target);

/// The indices of the stages that read stage `stage`'s outputs, in stage order; an inlined reader
/// is replaced by its own consumers (transitively).
std::vector<int> consumers_of(const Schedule& s, int stage);
std::vector<int> consumers_of(const std::vector<Stage>& stages, int stage);

}  // namespace tessel::internal

namespace tessel {

// Checks that `stage` is a compute stage whose loops can be scheduled and returns it.
struct ScheduleAccess {
    static Stage& loop_stage(Schedule& s, const char* prim, int stage) {
        if (stage < 0 || stage >= static_cast<int>(s.stages_.size())) {
            std::ostringstream os;
            os << "stage index " << stage << " out of range (the schedule has " << s.stages_.size()
               << " stages)";
            internal::schedule_fail(s, prim, -1, os.str());
        }
        s.bounds_memo_.reset();
        Stage& st = s.stages_[stage];
        if (!as_compute(st.op))
            internal::schedule_fail(s, prim, stage,
                                    "is a placeholder (an input); it has no loops to schedule");
        return st;
    }
    static int check_leaf(Schedule& s, const char* prim, int stage, int iter) {
        Stage& st = loop_stage(s, prim, stage);
        if (iter < 0 || iter >= static_cast<int>(st.leaf.size())) {
            std::ostringstream os;
            os << "iterator position " << iter
               << " is not a leaf loop of this stage; legal positions are 0.."
               << st.leaf.size() - 1;
            internal::schedule_fail(s, prim, stage, os.str());
        }
        return st.leaf[iter];
    }
    // The mutable accessors forget the schedule's inferred bounds (Schedule::BoundsMemo).
    static std::vector<Stage>& stages(Schedule& s) {
        s.bounds_memo_.reset();
        return s.stages_;
    }
    static const std::vector<Step>& steps(const Schedule& s) { return s.steps_; }
    // Inserts `st` at index `at`; attachments to stages at or after `at` shift with them.
    static void insert_stage(Schedule& s, int at, Stage st) {
        s.bounds_memo_.reset();
        for (Stage& other : s.stages_)
            if (other.attach == AttachKind::At && other.attach_stage >= at) ++other.attach_stage;
        s.stages_.insert(s.stages_.begin() + at, std::move(st));
    }
    static void record(Schedule& s, const Step& step) { s.record(step); }
    // Stages attached at iterator `from` of `stage` follow it to `to` (Ansor's rule).
    static void move_attachments(Schedule& s, int stage, int from, int to) {
        s.bounds_memo_.reset();
        for (Stage& other : s.stages_)
            if (other.attach == AttachKind::At && other.attach_stage == stage &&
                other.attach_iter == from)
                other.attach_iter = to;
    }
};

}  // namespace tessel
