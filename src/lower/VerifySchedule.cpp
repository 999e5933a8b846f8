// verify_schedule (lower/VerifySchedule.h): the checks that need the finished schedule, its bounds
// or the target, without lowering.
#include "tessel/lower/VerifySchedule.h"

#include <map>
#include <optional>
#include <sstream>

#include "../schedule/ScheduleInternal.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/VerifyThreadMapping.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace {

// Whether a loop bound to blockIdx/threadIdx encloses stage i's nest or is one of its own.
bool inside_kernel(const Schedule& s, int i) {
    for (size_t hops = 0; i >= 0 && hops <= s.stages().size(); ++hops) {
        const Stage& st = s.stages()[i];
        for (int id : st.leaf)
            if (is_launch_axis(st.iters[id].annotation)) return true;
        i = st.attach == AttachKind::At ? st.attach_stage : -1;
    }
    return false;
}

// The top-level stage whose nest holds stage i.
int top_of(const Schedule& s, int i) {
    for (size_t hops = 0; s.stages()[i].attach == AttachKind::At && hops <= s.stages().size();
         ++hops)
        i = s.stages()[i].attach_stage;
    return i;
}

// A schedule with GPU thread bindings built for a CPU: the schedule may be fine, the target is
// not the one it was written for, so this is a CompileError (as the LLVM backend's was).
void check_cpu(const Schedule& s, const Target& target) {
    for (const Stage& st : s.stages()) {
        for (int id : st.leaf) {
            IterAnnotation a = st.iters[id].annotation;
            if (a < IterAnnotation::BlockX) continue;  // vthread loops run serially on a CPU
            TESSEL_THROW(CompileError)
                << "verify_schedule: stage '" << st.name() << "': loop '" << st.iters[id].name
                << "' is bound to " << annotation_name(a)
                << ": a thread-bound schedule needs a GPU target, and '" << target.str()
                << "' is a CPU (build for a cuda target, or leave the loop unbound)";
        }
    }
}

// Bytes of stage i's storage, as bound inference sizes it (0 when not constant): its
// data-parallel axes (storage_extent lists the reduction axes after them; they take no storage).
// The bytes of the stage's buffer as the lowering allocates it: its storage layout's padding
// (storage_align) included; 0 when an extent is symbolic.
int64_t storage_bytes(const Stage& st, const StageBounds& b) {
    size_t axes = as_compute(st.op) ? as_compute(st.op)->axis.size() : b.storage_extent.size();
    std::vector<int64_t> extents;
    for (size_t d = 0; d < axes && d < b.storage_extent.size(); ++d) {
        auto c = as_const_int(b.storage_extent[d]);
        if (!c) return 0;
        extents.push_back(*c);
    }
    if (extents.size() != axes) return 0;
    int64_t elements = 1;
    if (st.storage.empty()) {
        for (int64_t e : extents) elements *= e;
    } else {
        elements = internal::storage_layout(st, extents).elements;
    }
    return elements * op_output(st.op, 0).dtype().bytes();
}

// The copies of a stage's buffer: double_buffer's two, pipeline's `depth`.
int64_t buffer_copies(const Stage& st) {
    if (st.pipeline_depth) return st.pipeline_depth;
    return st.double_buffer ? 2 : 1;
}

// pipeline copies with cp.async, which sm_80 introduced; tma copies need sm_90 and a pipeline.
void check_pipelines(const Schedule& s, const Target& target) {
    int cc = target.compute_capability();
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        if (st.tma && !st.pipeline_depth)
            internal::schedule_fail(s, "tma", static_cast<int>(i),
                                    "it is not pipelined; TMA copies land asynchronously on an "
                                    "mbarrier: pipeline(depth) "
                                    "the stage too");
        if (st.warp_specialized && target.arch() != "sm_90a")
            internal::schedule_fail(s, "warp_specialize", static_cast<int>(i),
                                    "the target '" + target.str() + "' (" + target.arch() +
                                        ") lacks setmaxnreg, which moves the producer warp "
                                        "group's registers to the consumers: build for sm_90a "
                                        "(plain 'cuda' on a compute-capability-9.0 GPU is)");
        if (st.tma && cc < 90)
            internal::schedule_fail(s, "tma", static_cast<int>(i),
                                    "the target '" + target.str() + "' (" + target.arch() +
                                        ") has no Tensor Memory Accelerator (sm_90 and newer); "
                                        "pipeline its fetch with cp.async instead");
        if (st.tma_store && cc < 90)
            internal::schedule_fail(s, "tma_store", static_cast<int>(i),
                                    "the target '" + target.str() + "' (" + target.arch() +
                                        ") has no Tensor Memory Accelerator (sm_90 and newer); "
                                        "copy the shared stage out with the block's threads");
        if (!st.pipeline_depth || cc >= 80) continue;
        internal::schedule_fail(
            s, "pipeline", static_cast<int>(i),
            "the target '" + target.str() + "' (" + target.arch() +
                ") has no asynchronous copies (cp.async needs sm_80 or newer); use "
                "double_buffer(), which stages the next fetch through registers on any GPU");
    }
}

// Infers the bounds once, for the thread mapping and the shared memory, and leaves them in
// `inferred` for lower().
void check_gpu(const Schedule& s, const Target& target, std::vector<StageBounds>* inferred) {
    bool any_shared = false, any_launch = false;
    for (const Stage& st : s.stages()) {
        any_shared =
            any_shared || (st.scope == StorageScope::Shared && st.attach != AttachKind::Inlined);
        for (int id : st.leaf) any_launch = any_launch || is_launch_axis(st.iters[id].annotation);
    }
    std::vector<StageBounds> bounds;
    if (any_launch) bounds = infer_bounds(s);
    verify_thread_mapping(s, target.max_threads_per_block(), any_launch ? &bounds : nullptr);
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        if (st.scope == StorageScope::Global || st.attach == AttachKind::Inlined) continue;
        if (!inside_kernel(s, static_cast<int>(i)))
            internal::schedule_fail(s, "verify_schedule", static_cast<int>(i),
                                    std::string("the stage has ") + scope_name(st.scope) +
                                        " scope but is not computed inside a kernel; compute_at "
                                        "it at a loop inside the blockIdx/threadIdx loops of its "
                                        "consumer");
    }
    if (any_shared) {
        if (!any_launch) bounds = infer_bounds(s);
        std::map<int, int64_t> shared;  // per top-level stage
        for (size_t i = 0; i < s.stages().size(); ++i) {
            const Stage& st = s.stages()[i];
            if (st.scope != StorageScope::Shared || st.attach == AttachKind::Inlined) continue;
            int top = top_of(s, static_cast<int>(i));
            int64_t bytes = storage_bytes(st, bounds[i]) * buffer_copies(st);
            shared[top] += bytes;
            int64_t limit = target.max_shared_memory_per_block_optin();
            if (shared[top] <= limit) continue;
            std::ostringstream os;
            os << "the kernel of '" << s.stages()[top].name() << "' needs " << shared[top]
               << " bytes of shared memory per block with this stage (" << bytes << " bytes";
            if (buffer_copies(st) > 1) os << " in " << buffer_copies(st) << " copies";
            os << "), more than the " << limit << " bytes a block may have on '" << target.str()
               << "'";
            internal::schedule_fail(s, "verify_schedule", static_cast<int>(i), os.str());
        }
    }
    if (inferred && !bounds.empty()) *inferred = std::move(bounds);
}

// Whether a vectorized or unrolled loop's extent was left to the finished schedule (the
// primitive could not know it: Schedule::annotate, internal::extent_is_final).
bool has_deferred_annotation(const Schedule& s) {
    for (const Stage& st : s.stages()) {
        if (st.attach == AttachKind::Inlined) continue;
        for (int id : st.leaf) {
            IterAnnotation a = st.iters[id].annotation;
            if ((a == IterAnnotation::Vectorize || a == IterAnnotation::Unroll) &&
                !internal::extent_is_final(st, id))
                return true;
        }
    }
    return false;
}

std::string where_computed(const Schedule& s, const Stage& st) {
    if (st.attach != AttachKind::At) return "at the root";
    const Stage& t = s.stages()[st.attach_stage];
    return "inside '" + t.name() + "' loop '" + t.iters[st.attach_iter].name + "'";
}

void check_deferred_annotations(const Schedule& s, const std::vector<StageBounds>& bounds) {
    const ScheduleLimits& limits = s.limits();
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        if (st.attach == AttachKind::Inlined) continue;
        for (int id : st.leaf) {
            IterAnnotation a = st.iters[id].annotation;
            bool vec = a == IterAnnotation::Vectorize;
            if ((!vec && a != IterAnnotation::Unroll) || internal::extent_is_final(st, id))
                continue;
            std::optional<int64_t> n = as_const_int(bounds[i].iter_extents[id]);
            int64_t cap = vec ? limits.max_vector_lanes : limits.max_unroll;
            if (n && *n >= 1 && *n <= cap) continue;
            std::ostringstream os;
            os << (vec ? "vectorized" : "unrolled") << " loop '" << st.iters[id].name << "' has ";
            if (n)
                os << "extent " << *n;
            else
                os << "a non-constant extent " << to_string(bounds[i].iter_extents[id]);
            os << " where the stage is computed (" << where_computed(s, st) << ")";
            if (n && *n >= 1)
                os << ", beyond the " << (vec ? "vector lane" : "unroll") << " cap of " << cap;
            os << "; split it by a constant factor <= " << cap
               << " first, or compute the stage at an inner loop";
            internal::schedule_fail(s, vec ? "vectorize" : "unroll", static_cast<int>(i), os.str());
        }
    }
}

}  // namespace

void verify_annotated_extents(const Schedule& s, std::vector<StageBounds>* bounds) {
    if (!has_deferred_annotation(s)) return;
    std::vector<StageBounds> inferred;
    if (!bounds || bounds->empty()) inferred = infer_bounds(s);
    const std::vector<StageBounds>& b = inferred.empty() ? *bounds : inferred;
    check_deferred_annotations(s, b);
    if (bounds && !inferred.empty()) *bounds = std::move(inferred);
}

void verify_schedule(const Schedule& s, const Target& target, std::vector<StageBounds>* bounds) {
    std::string error = internal::attachment_error(s);
    if (!error.empty()) TESSEL_THROW(ScheduleError) << "verify_schedule: " << error;
    std::vector<StageBounds> local;
    std::vector<StageBounds>* inferred = bounds ? bounds : &local;
    if (target.is_gpu()) {
        check_pipelines(s, target);
        check_gpu(s, target, inferred);
    } else
        check_cpu(s, target);
    verify_annotated_extents(s, inferred);
}

}  // namespace tessel
