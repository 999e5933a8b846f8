// Loop primitives: split, fuse, reorder, tile, annotations and pragmas.
#include <algorithm>
#include <sstream>
#include <utility>

#include "ScheduleInternal.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/te/Operation.h"

namespace tessel {

using internal::schedule_fail;

using A = ScheduleAccess;

namespace {

int add_iter(Stage& st, Iterator it) {
    st.iters.push_back(std::move(it));
    return static_cast<int>(st.iters.size()) - 1;
}

void check_tail(Schedule& s, const char* prim, int stage, const Iterator& it, TailStrategy tail,
                int64_t inner) {
    if (tail == TailStrategy::Guard) return;
    const Stage& st = s.stages()[stage];
    std::ostringstream os;
    if (it.kind == IterKind::Reduction) {
        os << "tail strategy " << tail_strategy_name(tail) << " on reduction iterator '" << it.name
           << "' would visit reduction points twice or past the end; use guard";
        schedule_fail(s, prim, stage, os.str());
    }
    if (tail == TailStrategy::ShiftInwards) {
        auto ext = it.const_extent();
        if (!ext || *ext < inner) {
            os << "shift_inwards needs a constant extent of '" << it.name
               << "' of at least the inner extent " << inner << " (extent is "
               << to_string(it.extent) << "); use guard";
            schedule_fail(s, prim, stage, os.str());
        }
    }
    if (tail == TailStrategy::RoundUp && st.is_output) {
        os << "round_up pads the storage of '" << st.name()
           << "', but it is an output whose buffer the caller allocates; use guard or "
              "shift_inwards";
        schedule_fail(s, prim, stage, os.str());
    }
}

// What bind() checks beyond annotate()'s common checks (see Schedule::bind).
void check_binding(Schedule& s, int stage, int iter, IterAnnotation a) {
    const Stage& st = s.stages()[stage];
    const Iterator& it = st.iters[st.leaf[iter]];
    std::ostringstream os;
    if (a != IterAnnotation::VThread) {
        for (size_t pos = 0; pos < st.leaf.size(); ++pos) {
            const Iterator& other = st.iters[st.leaf[pos]];
            if (static_cast<int>(pos) == iter || other.annotation != a) continue;
            os << "thread axis " << annotation_name(a) << " is already bound to loop '"
               << other.name << "' (position " << pos << ") of this stage; cannot also bind '"
               << it.name << "': each thread axis maps to one loop of a stage (fuse the loops "
               << "first, or use another axis)";
            schedule_fail(s, "bind", stage, os.str());
        }
    }
    if (it.kind != IterKind::Reduction) return;
    const ComputeOpNode* c = as_compute(st.op);
    bool reduction = c && !c->body.empty() && c->body[0].as<Reduce>();
    if (!is_thread_axis(a) || !reduction) {
        os << "iterator '" << it.name << "' is a reduction axis; binding it to "
           << annotation_name(a) << " needs a cross-thread reduction, which is only possible "
           << "for a threadIdx.x/y/z binding of a reduction stage (blockIdx and vthread "
           << "bindings of reduction axes are not)";
        schedule_fail(s, "bind", stage, os.str());
    }
    if (st.attach == AttachKind::Inlined)
        schedule_fail(s, "bind", stage, "the stage is inlined; it has no loops to bind");
}

// GPU mapping rules the stage alone already shows, checked by the primitive that would break
// them (lowering would refuse the schedule later): a CPU-parallel loop in a stage that binds
// blockIdx/threadIdx (a kernel has no CPU threads), and a cross-thread reduction (a reduction
// loop bound to threadIdx) with a data-parallel loop inside its reduction loops. Returns "" or the
// problem; `leaf` is the stage's loop nest to check (the one the primitive would make).
std::string gpu_mapping_error(const Stage& st, const std::vector<int>& leaf) {
    const Iterator* parallel = nullptr;
    const Iterator* launch = nullptr;
    const Iterator* cross = nullptr;
    for (int id : leaf) {
        const Iterator& it = st.iters[id];
        if (it.annotation == IterAnnotation::Parallel) parallel = &it;
        if (is_launch_axis(it.annotation)) launch = &it;
        if (it.kind == IterKind::Reduction && is_thread_axis(it.annotation)) cross = &it;
    }
    if (parallel && launch)
        return "loop '" + parallel->name + "' is parallel and loop '" + launch->name +
               "' is bound to " + annotation_name(launch->annotation) +
               ": a GPU kernel has no CPU threads (bind the loop to a thread axis instead)";
    if (!cross) return "";
    bool in_reduction = false;
    for (int id : leaf) {
        const Iterator& it = st.iters[id];
        in_reduction = in_reduction || it.kind == IterKind::Reduction;
        if (in_reduction && it.kind == IterKind::Spatial)
            return "reduction loop '" + cross->name + "' is bound to " +
                   annotation_name(cross->annotation) +
                   " (a cross-thread reduction), which needs every data-parallel loop outside "
                   "the reduction loops, but '" +
                   it.name + "' is inside them (reorder it outwards)";
    }
    return "";
}

}  // namespace

static std::pair<int, int> do_split(Schedule& s, const char* prim, int stage, int iter,
                                    int64_t factor, bool by_nparts, TailStrategy tail) {
    int id = A::check_leaf(s, prim, stage, iter);
    Stage& st = A::stages(s)[stage];
    const Iterator it = st.iters[id];
    if (factor <= 0) {
        std::ostringstream os;
        os << (by_nparts ? "nparts" : "factor") << " " << factor << " for iterator '" << it.name
           << "' must be positive";
        schedule_fail(s, prim, stage, os.str());
    }
    Type t = it.extent.type();
    if (factor > t.max_int()) {
        std::ostringstream os;
        os << (by_nparts ? "nparts" : "factor") << " " << factor << " for iterator '" << it.name
           << "' does not fit its index type " << t.str();
        schedule_fail(s, prim, stage, os.str());
    }
    if (tail != TailStrategy::Guard && tail != TailStrategy::ShiftInwards &&
        tail != TailStrategy::RoundUp) {
        std::ostringstream os;
        os << "unknown tail strategy " << static_cast<int>(tail) << " for iterator '" << it.name
           << "' (guard, shift_inwards or round_up)";
        schedule_fail(s, prim, stage, os.str());
    }
    Expr inner_extent, outer_extent;
    if (by_nparts) {
        outer_extent = make_const(t, factor);
        inner_extent = internal::ceil_div(it.extent, factor);
    } else {
        inner_extent = make_const(t, factor);
        outer_extent = internal::ceil_div(it.extent, factor);
    }
    auto inner_const = as_const_int(inner_extent);
    check_tail(s, prim, stage, it, tail, inner_const ? *inner_const : 0);
    int outer =
        add_iter(st, Iterator{it.name + ".outer", outer_extent, it.kind, IterAnnotation::None});
    int inner =
        add_iter(st, Iterator{it.name + ".inner", inner_extent, it.kind, IterAnnotation::None});
    IterRelation rel{
        IterRelation::Kind::Split, id, outer, inner, -1, inner_extent, tail, by_nparts, factor};
    st.relations.push_back(rel);
    st.leaf[iter] = outer;
    st.leaf.insert(st.leaf.begin() + iter + 1, inner);
    A::move_attachments(s, stage, id, inner);
    A::record(s, SplitStep{stage, iter, factor, by_nparts, tail});
    return {iter, iter + 1};
}

std::pair<int, int> Schedule::split(int stage, int iter, int64_t factor, TailStrategy tail) {
    return do_split(*this, "split", stage, iter, factor, false, tail);
}

std::pair<int, int> Schedule::split_nparts(int stage, int iter, int64_t nparts, TailStrategy tail) {
    return do_split(*this, "split", stage, iter, nparts, true, tail);
}

std::pair<int, int> Schedule::follow_split(int stage, int iter, int src_step) {
    const char* prim = "follow_split";
    A::check_leaf(*this, prim, stage, iter);
    const SplitStep* src = nullptr;
    if (src_step >= 0 && src_step < static_cast<int>(steps_.size()))
        src = std::get_if<SplitStep>(&steps_[src_step]);
    if (!src) {
        std::ostringstream os;
        os << "step " << src_step << " is not a split step of this schedule (it has "
           << steps_.size() << " steps; follow_split follows an earlier split)";
        schedule_fail(*this, prim, stage, os.str());
    }
    SplitStep from = *src;  // copied: do_split records into steps_
    auto result = do_split(*this, prim, stage, iter, from.factor, from.by_nparts, from.tail);
    steps_.back() = FollowSplitStep{stage, iter, src_step};
    return result;
}

// The inner extent a split-like step at `index` gave its loop: a split's factor, the factor a
// follow_split copied, the product a follow_fused_split took; 0 if the step is none of these
// (or a split by nparts, whose inner extent depends on the loop it split).
static int64_t split_step_factor(const std::vector<Step>& steps, int index) {
    if (index < 0 || index >= static_cast<int>(steps.size())) return 0;
    const Step& step = steps[index];
    if (const auto* s = std::get_if<SplitStep>(&step)) return s->by_nparts ? 0 : s->factor;
    if (const auto* s = std::get_if<FollowSplitStep>(&step))
        return s->src_step < index ? split_step_factor(steps, s->src_step) : 0;
    if (const auto* s = std::get_if<FollowFusedSplitStep>(&step)) {
        int64_t product = 1;
        for (int src : s->src_steps) {
            int64_t f = src < index ? split_step_factor(steps, src) : 0;
            if (f == 0 || product > (int64_t{1} << 40) / f) return 0;
            product *= f;
        }
        return product;
    }
    return 0;
}

std::pair<int, int> Schedule::follow_fused_split(int stage, int iter,
                                                 const std::vector<int>& src_steps) {
    const char* prim = "follow_fused_split";
    A::check_leaf(*this, prim, stage, iter);
    if (src_steps.empty()) schedule_fail(*this, prim, stage, "needs at least one source step");
    int64_t product = 1;
    for (int src : src_steps) {
        int64_t f = split_step_factor(steps_, src);
        if (f == 0) {
            std::ostringstream os;
            os << "step " << src << " is not a split by a factor of this schedule (it has "
               << steps_.size()
               << " steps; follow_fused_split multiplies the factors of earlier splits)";
            schedule_fail(*this, prim, stage, os.str());
        }
        if (product > (int64_t{1} << 40) / f)
            schedule_fail(*this, prim, stage, "the product of the source factors is too large");
        product *= f;
    }
    auto result = do_split(*this, prim, stage, iter, product, false, TailStrategy::Guard);
    steps_.back() = FollowFusedSplitStep{stage, iter, src_steps};
    return result;
}

int Schedule::fuse(int stage, const std::vector<int>& iters) {
    A::loop_stage(*this, "fuse", stage);
    if (iters.size() < 2) schedule_fail(*this, "fuse", stage, "needs at least two iterators");
    for (size_t k = 0; k < iters.size(); ++k) {
        A::check_leaf(*this, "fuse", stage, iters[k]);
        if (k > 0 && iters[k] != iters[k - 1] + 1) {
            std::ostringstream os;
            os << "iterators at positions " << iters[k - 1] << " and " << iters[k]
               << " are not adjacent; only consecutive loops can be fused (reorder them first)";
            schedule_fail(*this, "fuse", stage, os.str());
        }
    }
    Stage& st = stages_[stage];
    IterKind kind = st.iters[st.leaf[iters[0]]].kind;
    for (int pos : iters) {
        if (st.iters[st.leaf[pos]].kind != kind)
            schedule_fail(*this, "fuse", stage,
                          "cannot fuse a data-parallel iterator with a reduction iterator ('" +
                              st.iters[st.leaf[iters[0]]].name + "', '" +
                              st.iters[st.leaf[pos]].name + "')");
    }
    int acc = st.leaf[iters[0]];
    for (size_t k = 1; k < iters.size(); ++k) {
        int next = st.leaf[iters[k]];
        const Iterator& a = st.iters[acc];
        const Iterator& b = st.iters[next];
        Expr extent = Mul::make(a.extent, b.extent);
        if (auto ca = a.const_extent(), cb = b.const_extent(); ca && cb)
            extent = make_const(a.extent.type(), *ca * *cb);
        int fused = add_iter(
            st, Iterator{a.name + "." + b.name + ".fused", extent, kind, IterAnnotation::None});
        IterRelation rel;
        rel.kind = IterRelation::Kind::Fuse;
        rel.outer = acc;
        rel.inner = next;
        rel.fused = fused;
        st.relations.push_back(rel);
        A::move_attachments(*this, stage, acc, fused);
        A::move_attachments(*this, stage, next, fused);
        acc = fused;
    }
    st.leaf.erase(st.leaf.begin() + iters[0], st.leaf.begin() + iters.back() + 1);
    st.leaf.insert(st.leaf.begin() + iters[0], acc);
    record(FuseStep{stage, iters});
    return iters[0];
}

void Schedule::reorder(int stage, const std::vector<int>& given) {
    Stage& st = A::loop_stage(*this, "reorder", stage);
    std::vector<bool> seen(st.leaf.size(), false);
    if (given.size() > st.leaf.size()) {
        std::ostringstream os;
        os << "the order lists " << given.size() << " positions, but the stage has "
           << st.leaf.size() << " leaves (positions 0.." << st.leaf.size() - 1 << ")";
        schedule_fail(*this, "reorder", stage, os.str());
    }
    for (int pos : given) {
        if (pos < 0 || pos >= static_cast<int>(st.leaf.size()) || seen[pos]) {
            std::ostringstream os;
            os << "position " << pos
               << (pos >= 0 && pos < static_cast<int>(seen.size()) ? " is listed twice"
                                                                   : " is not a leaf of this stage")
               << "; the order must be a permutation of (some of) the leaf positions 0.."
               << st.leaf.size() - 1;
            schedule_fail(*this, "reorder", stage, os.str());
        }
        seen[pos] = true;
    }
    // Some of the leaves: they take the slots they held, in the given order (TVM's reorder).
    std::vector<int> order(st.leaf.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::vector<int> slots = given;
    std::sort(slots.begin(), slots.end());
    for (size_t i = 0; i < given.size(); ++i) order[slots[i]] = given[i];
    std::vector<int> leaf;
    for (int pos : order) leaf.push_back(st.leaf[pos]);
    if (std::string error = gpu_mapping_error(st, leaf); !error.empty())
        schedule_fail(*this, "reorder", stage, error);
    // Stages computed at this stage's loops must stay inside their readers' loops (what was
    // incomplete before the reorder is not its fault; the copy is only made in that rare case).
    std::swap(st.leaf, leaf);
    if (!internal::broken_attachments(stages_).empty()) {
        std::swap(st.leaf, leaf);
        std::vector<Stage> before = stages_;
        std::swap(st.leaf, leaf);
        std::string error = internal::new_attachment_error(before, stages_);
        if (!error.empty()) {
            std::swap(st.leaf, leaf);
            schedule_fail(*this, "reorder", stage, error);
        }
    }
    record(ReorderStep{stage, order});
}

int Schedule::tile(int stage, int x, int y, int64_t fx, int64_t fy) {
    Stage& st = A::loop_stage(*this, "tile", stage);
    if (y != x + 1) schedule_fail(*this, "tile", stage, "tiles two adjacent leaves (y = x + 1)");
    A::check_leaf(*this, "tile", stage, x);
    A::check_leaf(*this, "tile", stage, y);
    // Check both factors before the first split, so that a failed tile changes nothing.
    for (auto [pos, f] : {std::pair{x, fx}, std::pair{y, fy}}) {
        if (f <= 0) {
            std::ostringstream os;
            os << "factor " << f << " for iterator '" << st.iters[st.leaf[pos]].name
               << "' must be positive";
            schedule_fail(*this, "tile", stage, os.str());
        }
    }
    // The reorder can still fail (it would break an attachment or a cross-thread reduction):
    // then the splits are undone too, so a failed tile changes nothing.
    std::vector<Stage> saved = stages_;
    size_t steps = steps_.size();
    try {
        split(stage, x, fx);      // xo xi y
        split(stage, x + 2, fy);  // xo xi yo yi
        std::vector<int> order;
        for (int i = 0; i < static_cast<int>(st.leaf.size()); ++i) order.push_back(i);
        std::swap(order[x + 1], order[x + 2]);  // xo yo xi yi
        reorder(stage, order);
    } catch (const ScheduleError&) {
        stages_ = std::move(saved);
        steps_.resize(steps);
        throw;
    }
    return x;
}

bool internal::extent_is_final(const Stage& st, int id) {
    if (st.is_output) return true;
    for (const IterRelation& r : st.relations) {
        if (r.kind == IterRelation::Kind::Split && r.inner == id) return !r.by_nparts;
        if (r.kind == IterRelation::Kind::Split && r.outer == id) return r.by_nparts;
        if (r.kind == IterRelation::Kind::Fuse && r.fused == id)
            return extent_is_final(st, r.outer) && extent_is_final(st, r.inner);
    }
    return st.iters[id].kind == IterKind::Reduction;  // a root axis
}

void Schedule::annotate(int stage, int iter, IterAnnotation annotation) {
    int id = A::check_leaf(*this, "annotate", stage, iter);
    Stage& st = stages_[stage];
    Iterator& it = st.iters[id];
    const bool gpu = annotation >= IterAnnotation::VThread;
    const char* prim = gpu ? "bind" : annotation_name(annotation);
    std::ostringstream os;
    if (annotation == IterAnnotation::None) return;
    if (it.annotation != IterAnnotation::None && it.annotation != annotation) {
        os << "iterator '" << it.name << "' is already annotated '"
           << annotation_name(it.annotation) << "'";
        schedule_fail(*this, prim, stage, os.str());
    }
    if (gpu) {
        check_binding(*this, stage, iter, annotation);
        IterAnnotation before = it.annotation;
        it.annotation = annotation;
        if (std::string error = gpu_mapping_error(st, st.leaf); !error.empty()) {
            it.annotation = before;
            schedule_fail(*this, prim, stage, error);
        }
        record(AnnotateStep{stage, iter, annotation});
        return;
    }
    if (annotation != IterAnnotation::Unroll && it.kind == IterKind::Reduction) {
        os << "iterator '" << it.name << "' is a reduction axis; only data-parallel loops can be "
           << prim << "d (use rfactor to parallelise a reduction)";
        schedule_fail(*this, annotation == IterAnnotation::Vectorize ? "vectorize" : prim, stage,
                      os.str());
    }
    bool annotation_checked_later = false;
    auto ext = it.const_extent();
    // An extent that compute_at may still shrink (the write cache of TVM's GEMM walk-through,
    // vectorized over a loop of 1024 that is 32 inside its attach point) is checked on the
    // finished schedule: verify_schedule and lowering (lower/VerifySchedule.h).
    if (!internal::extent_is_final(st, id)) annotation_checked_later = true;
    if (annotation == IterAnnotation::Vectorize && !annotation_checked_later) {
        if (!ext)
            schedule_fail(*this, "vectorize", stage,
                          "iterator '" + it.name + "' has a non-constant extent " +
                              to_string(it.extent) + "; split it by a constant factor first");
        if (*ext > limits_.max_vector_lanes || *ext < 1) {
            os << "iterator '" << it.name << "' has extent " << *ext
               << ", beyond the vector lane cap of " << limits_.max_vector_lanes
               << "; split it by a factor <= " << limits_.max_vector_lanes << " first";
            schedule_fail(*this, "vectorize", stage, os.str());
        }
    }
    if (annotation == IterAnnotation::Unroll && !annotation_checked_later) {
        if (!ext)
            schedule_fail(*this, "unroll", stage,
                          "iterator '" + it.name + "' has a non-constant extent " +
                              to_string(it.extent) + "; split it by a constant factor first");
        if (*ext > limits_.max_unroll) {
            os << "iterator '" << it.name << "' has extent " << *ext
               << ", beyond the unroll cap of " << limits_.max_unroll << "; split it first";
            schedule_fail(*this, "unroll", stage, os.str());
        }
    }
    IterAnnotation before = it.annotation;
    it.annotation = annotation;
    if (std::string error = gpu_mapping_error(st, st.leaf); !error.empty()) {
        it.annotation = before;
        schedule_fail(*this, prim, stage, error);
    }
    record(AnnotateStep{stage, iter, annotation});
}

void Schedule::bind(int stage, int iter, IterAnnotation thread_axis) {
    if (thread_axis < IterAnnotation::VThread) {
        A::check_leaf(*this, "bind", stage, iter);
        schedule_fail(*this, "bind", stage,
                      std::string("'") + annotation_name(thread_axis) +
                          "' is not a thread axis (vthread, blockIdx.x/y/z, threadIdx.x/y/z)");
    }
    annotate(stage, iter, thread_axis);
}

void Schedule::set_scope(int stage, StorageScope scope) {
    Stage& st = A::loop_stage(*this, "set_scope", stage);
    if (scope != StorageScope::Global && scope != StorageScope::Shared &&
        scope != StorageScope::Local && scope != StorageScope::Warp) {
        std::ostringstream os;
        os << "unknown storage scope " << static_cast<int>(scope)
           << " (global, shared, local, warp)";
        schedule_fail(*this, "set_scope", stage, os.str());
    }
    if (st.pre_transform && scope != StorageScope::Global)
        schedule_fail(*this, "set_scope", stage,
                      "is pre-transformed; the transformed weight is a global buffer");
    if (st.is_output && scope != StorageScope::Global)
        schedule_fail(*this, "set_scope", stage,
                      std::string("'") + st.name() +
                          "' is an output, whose buffer the caller passes in global memory; it "
                          "cannot be " +
                          scope_name(scope));
    st.scope = scope;
    record(SetScopeStep{stage, scope});
}

void Schedule::vectorize(int stage, int iter) {
    annotate(stage, iter, IterAnnotation::Vectorize);
}
void Schedule::unroll(int stage, int iter) {
    annotate(stage, iter, IterAnnotation::Unroll);
}
void Schedule::parallel(int stage, int iter) {
    annotate(stage, iter, IterAnnotation::Parallel);
}

void Schedule::pragma_auto_unroll(int stage, int64_t max_step) {
    Stage& st = A::loop_stage(*this, "pragma", stage);
    if (max_step < 0 || max_step > limits_.max_unroll) {
        std::ostringstream os;
        os << "auto_unroll_max_step " << max_step << " must be in [0, " << limits_.max_unroll
           << "]";
        schedule_fail(*this, "pragma", stage, os.str());
    }
    st.auto_unroll_max_step = max_step;
    record(PragmaStep{stage, "auto_unroll_max_step", max_step});
}

}  // namespace tessel
