// Schedule construction, queries, step dispatch and error reporting.
#include "tessel/schedule/Schedule.h"

#include <algorithm>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/ir/Hash.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/te/Operation.h"

namespace tessel {

const char* annotation_name(IterAnnotation a) {
    switch (a) {
        case IterAnnotation::None: return "none";
        case IterAnnotation::Unroll: return "unroll";
        case IterAnnotation::Vectorize: return "vectorize";
        case IterAnnotation::Parallel: return "parallel";
        case IterAnnotation::VThread: return "vthread";
        case IterAnnotation::BlockX: return "blockIdx.x";
        case IterAnnotation::BlockY: return "blockIdx.y";
        case IterAnnotation::BlockZ: return "blockIdx.z";
        case IterAnnotation::ThreadX: return "threadIdx.x";
        case IterAnnotation::ThreadY: return "threadIdx.y";
        case IterAnnotation::ThreadZ: return "threadIdx.z";
    }
    return "?";
}

const char* tail_strategy_name(TailStrategy t) {
    switch (t) {
        case TailStrategy::Guard: return "guard";
        case TailStrategy::ShiftInwards: return "shift_inwards";
        case TailStrategy::RoundUp: return "round_up";
    }
    return "?";
}

std::optional<int64_t> Iterator::const_extent() const {
    return as_const_int(extent);
}

uint64_t dag_hash(const std::vector<Tensor>& outputs) {
    std::vector<Operation> ops = topo_order(outputs);
    StructuralHasher h;
    // Number every tensor by its operation's position first, so reads hash by producer.
    for (const Operation& op : ops)
        for (int v = 0; v < op_num_outputs(op); ++v) h.add(op_output(op, v));
    for (const Operation& op : ops) {
        h.add_int(static_cast<uint64_t>(op->kind));
        if (const PlaceholderOpNode* p = as_placeholder(op)) {
            h.add_string(p->dtype.str()).add_int(p->shape.size());
            for (const Expr& e : p->shape) h.add(e);
            // Only when set, so that the keys of DAGs without constants stay as they were.
            if (p->constant) h.add_string("constant");
            continue;
        }
        const ComputeOpNode* c = as_compute(op);
        h.add_int(c->axis.size());
        for (const IterVar& iv : c->axis)
            h.add_binder(iv.var()).add(iv.dom().min).add(iv.dom().extent);
        for (const Expr& b : c->body) h.add(b);
    }
    for (const Tensor& t : outputs) h.add(t);
    return h.result();
}

Schedule::Schedule(const std::vector<Tensor>& outputs, ScheduleLimits limits)
    : outputs_(outputs), limits_(limits) {
    if (outputs.empty()) TESSEL_THROW(ScheduleError) << "create_schedule: no output tensors";
    for (const Tensor& t : outputs)
        if (!t.defined()) TESSEL_THROW(ScheduleError) << "create_schedule: an output is undefined";
    for (const Operation& op : topo_order(outputs)) {
        Stage st = internal::make_stage(op);
        for (const Tensor& t : outputs)
            if (t.op().same_as(op)) st.is_output = true;
        stages_.push_back(std::move(st));
    }
    workload_key_ = dag_hash(outputs);
}

Schedule create_schedule(const std::vector<Tensor>& outputs, ScheduleLimits limits) {
    return Schedule(outputs, limits);
}

const Stage& Schedule::stage(int index) const {
    if (index < 0 || index >= static_cast<int>(stages_.size()))
        TESSEL_THROW(ScheduleError)
            << "stage index " << index << " out of range: the schedule has " << stages_.size()
            << " stages (0.." << stages_.size() - 1 << ")";
    return stages_[index];
}

int Schedule::stage_of(const Tensor& t) const {
    if (!t.defined()) TESSEL_THROW(ScheduleError) << "stage_of: undefined tensor";
    if (int i = find_stage(t.op()); i >= 0) return i;
    TESSEL_THROW(ScheduleError) << "stage_of: tensor '" << t.name()
                                << "' is not part of this schedule's DAG";
}

int Schedule::stage_of(const Operation& op) const {
    if (!op.defined()) TESSEL_THROW(ScheduleError) << "stage_of: undefined operation";
    if (int i = find_stage(op); i >= 0) return i;
    TESSEL_THROW(ScheduleError) << "stage_of: operation '" << op->name
                                << "' is not part of this schedule's DAG";
}

int Schedule::find_stage(const Operation& op) const {
    for (size_t i = 0; i < stages_.size(); ++i)
        if (stages_[i].op.same_as(op)) return static_cast<int>(i);
    for (size_t i = 0; i < stages_.size(); ++i)
        if (stages_[i].dag_op.same_as(op)) return static_cast<int>(i);
    return -1;
}

std::string Schedule::loop_nest_string(int index) const {
    const Stage& st = stage(index);
    std::ostringstream os;
    if (st.leaf.empty()) {
        os << "  (stage '" << st.name() << "' is a placeholder: no loops)\n";
        return os.str();
    }
    int depth = 0;
    for (size_t pos = 0; pos < st.leaf.size(); ++pos) {
        const Iterator& it = st.iters[st.leaf[pos]];
        os << std::string(2 + 2 * depth++, ' ') << "[" << pos << "] for " << it.name << " in range("
           << to_string(it.extent) << ")";
        if (it.kind == IterKind::Reduction) os << "  # reduce";
        if (it.annotation != IterAnnotation::None) os << "  # " << annotation_name(it.annotation);
        os << "\n";
    }
    os << std::string(2 + 2 * depth, ' ') << st.name() << "[...] = ...\n";
    return os.str();
}

StepResult Schedule::apply(const Step& step) {
    return std::visit(
        [this](const auto& s) -> StepResult {
            using T = std::decay_t<decltype(s)>;
            auto pair = [](std::pair<int, int> p) { return StepResult{{p.first, p.second}, -1}; };
            if constexpr (std::is_same_v<T, SplitStep>)
                return pair(s.by_nparts ? split_nparts(s.stage, s.iter, s.factor, s.tail)
                                        : split(s.stage, s.iter, s.factor, s.tail));
            else if constexpr (std::is_same_v<T, FuseStep>)
                return {{fuse(s.stage, s.iters)}, -1};
            else if constexpr (std::is_same_v<T, ReorderStep>)
                reorder(s.stage, s.order);
            else if constexpr (std::is_same_v<T, AnnotateStep>)
                annotate(s.stage, s.iter, s.annotation);
            else if constexpr (std::is_same_v<T, PragmaStep>)
                pragma(s.stage, s.key, s.value);
            else if constexpr (std::is_same_v<T, ComputeAtStep>)
                compute_at(s.stage, s.target, s.target_iter);
            else if constexpr (std::is_same_v<T, ReverseComputeAtStep>)
                reverse_compute_at(s.stage, s.target, s.target_iter);
            else if constexpr (std::is_same_v<T, ComputeInlineStep>)
                compute_inline(s.stage);
            else if constexpr (std::is_same_v<T, ComputeRootStep>)
                compute_root(s.stage);
            else if constexpr (std::is_same_v<T, PreTransformStep>)
                pre_transform(s.stage);
            else if constexpr (std::is_same_v<T, SetScopeStep>)
                set_scope(s.stage, s.scope);
            else if constexpr (std::is_same_v<T, CacheReadStep>)
                return {{}, cache_read(s.stage, s.scope, s.readers)};
            else if constexpr (std::is_same_v<T, CacheWriteStep>)
                return {{}, cache_write(s.stage, s.scope)};
            else if constexpr (std::is_same_v<T, StorageSplitStep>)
                storage_split(s.stage, s.dim, s.factor);
            else if constexpr (std::is_same_v<T, StorageReorderStep>)
                storage_reorder(s.stage, s.order);
            else if constexpr (std::is_same_v<T, StorageAlignStep>)
                storage_align(s.stage, s.dim, s.factor, s.offset);
            else if constexpr (std::is_same_v<T, StorageSwizzleStep>)
                storage_swizzle(s.stage, static_cast<int>(s.bits));
            else if constexpr (std::is_same_v<T, DoubleBufferStep>)
                double_buffer(s.stage);
            else if constexpr (std::is_same_v<T, PipelineStep>)
                pipeline(s.stage, s.depth);
            else if constexpr (std::is_same_v<T, TmaStep>)
                tma(s.stage);
            else if constexpr (std::is_same_v<T, WarpSpecializeStep>)
                warp_specialize(s.stage);
            else if constexpr (std::is_same_v<T, TmaStoreStep>)
                tma_store(s.stage);
            else if constexpr (std::is_same_v<T, TensorizeStep>)
                tensorize(s.stage, s.iter, s.intrin);
            else if constexpr (std::is_same_v<T, FollowSplitStep>)
                return pair(follow_split(s.stage, s.iter, s.src_step));
            else if constexpr (std::is_same_v<T, FollowFusedSplitStep>)
                return pair(follow_fused_split(s.stage, s.iter, s.src_steps));
            else if constexpr (std::is_same_v<T, RfactorStep>)
                return {{}, rfactor(s.stage, s.iter, s.factor_axis)};
            else if constexpr (std::is_same_v<T, ReindexStep>)
                return {{}, reindex(s.stage, s.order, s.groups)};
            else
                static_assert(sizeof(T) == 0, "a step kind without its primitive");
            return {};
        },
        step);
}

void Schedule::pragma(int stage, const std::string& key, int64_t value) {
    if (key != "auto_unroll_max_step") {
        ScheduleAccess::loop_stage(*this, "pragma", stage);
        internal::schedule_fail(*this, "pragma", stage,
                                "unknown pragma '" + key + "' (known: auto_unroll_max_step)");
    }
    pragma_auto_unroll(stage, value);
}

Schedule replay(const Schedule& base, const std::vector<Step>& steps) {
    if (!base.steps().empty())
        TESSEL_THROW(ScheduleError) << "replay: the base schedule has " << base.steps().size()
                                    << " steps; replay starts from a fresh schedule";
    Schedule s = base;  // shares the DAG, its stages' operations and its workload key
    for (size_t i = 0; i < steps.size(); ++i) {
        try {
            s.apply(steps[i]);
        } catch (const ScheduleError& e) {
            TESSEL_THROW(ScheduleError) << "replay: step " << i << " (" << step_kind_name(steps[i])
                                        << ") does not apply: " << e.what();
        }
    }
    return s;
}

Schedule replay(const std::vector<Tensor>& outputs, const std::vector<Step>& steps,
                ScheduleLimits limits) {
    return replay(Schedule(outputs, limits), steps);
}

namespace internal {

void schedule_fail(const Schedule& s, const char* primitive, int stage,
                   const std::string& message) {
    std::ostringstream os;
    os << primitive << ": ";
    if (stage >= 0 && stage < static_cast<int>(s.stages().size())) {
        os << "stage '" << s.stages()[stage].name() << "': " << message << "\n  loop nest of '"
           << s.stages()[stage].name() << "':\n"
           << s.loop_nest_string(stage);
    } else {
        os << message;
    }
    throw ScheduleError(os.str());
}

void require_untransformed(const Schedule& s, const char* primitive, int stage) {
    const Stage& st = s.stage(stage);
    bool fresh = st.leaf == st.root && st.relations.empty();
    for (int id : st.leaf) fresh = fresh && st.iters[id].annotation == IterAnnotation::None;
    if (!fresh)
        schedule_fail(s, primitive, stage,
                      std::string("has loop transformations already; ") + primitive +
                          " must come before splits, fuses, reorders and annotations of the stage");
    for (const Stage& other : s.stages())
        if (other.attach == AttachKind::At && other.attach_stage == stage)
            schedule_fail(s, primitive, stage,
                          "stage '" + other.name() + "' is computed inside it; " + primitive +
                              " it before compute_at into it");
}

Stage make_stage(const Operation& op) {
    Stage st;
    st.op = op;
    st.dag_op = op;
    st.storage = default_storage(op);
    if (const ComputeOpNode* c = as_compute(op)) {
        auto add_root = [&](const IterVar& iv, IterKind kind) {
            st.root.push_back(static_cast<int>(st.iters.size()));
            st.iters.push_back(
                Iterator{iv.var().name(), iv.dom().extent, kind, IterAnnotation::None});
        };
        for (const IterVar& iv : c->axis) add_root(iv, IterKind::Spatial);
        for (const IterVar& iv : c->reduce_axis) add_root(iv, IterKind::Reduction);
        st.leaf = st.root;
    }
    return st;
}

Stage replacement_stage(const Stage& old, const Operation& op) {
    Stage st = make_stage(op);
    st.dag_op = old.dag_op;
    st.attach = old.attach;
    st.attach_stage = old.attach_stage;
    st.attach_iter = old.attach_iter;
    st.is_output = old.is_output;
    st.storage = old.storage;
    st.scope = old.scope;
    st.auto_unroll_max_step = old.auto_unroll_max_step;
    st.double_buffer = old.double_buffer;
    st.pipeline_depth = old.pipeline_depth;
    st.tma = old.tma;
    st.warp_specialized = old.warp_specialized;
    st.tma_store = old.tma_store;
    st.pre_transform = old.pre_transform;
    return st;
}

std::vector<StorageDim> default_storage(const Operation& op) {
    std::vector<StorageDim> dims;
    if (const ComputeOpNode* c = as_compute(op))
        for (size_t d = 0; d < c->axis.size(); ++d) {
            StorageDim sd;
            sd.axis = static_cast<int>(d);
            dims.push_back(sd);
        }
    return dims;
}

StorageLayout storage_layout(const Stage& st, const std::vector<int64_t>& axis_extents) {
    StorageLayout l;
    for (const StorageDim& d : st.storage) {
        int64_t e = axis_extents.at(d.axis);
        l.extents.push_back(d.part == StorageDim::Part::Whole   ? e
                            : d.part == StorageDim::Part::Outer ? (e + d.factor - 1) / d.factor
                                                                : d.factor);
    }
    l.strides.resize(st.storage.size());
    int64_t stride = 1;
    for (size_t k = st.storage.size(); k-- > 0;) {
        const StorageDim& d = st.storage[k];
        if (d.align_factor > 0) {
            int64_t aligned =
                stride +
                ((d.align_offset - stride) % d.align_factor + d.align_factor) % d.align_factor;
            l.padded = l.padded || aligned != stride;
            stride = aligned;
        }
        l.strides[k] = stride;
        stride *= l.extents[k];
    }
    l.elements = stride;
    return l;
}

Expr ceil_div(const Expr& extent, int64_t factor) {
    // (c - 1) / f + 1, not (c + f - 1) / f: no overflow for factors near the type's maximum.
    if (auto c = as_const_int(extent))
        return make_const(extent.type(), *c <= 0 ? 0 : (*c - 1) / factor + 1);
    Expr f = make_const(extent.type(), factor);
    return FloorDiv::make(Add::make(extent, make_const(extent.type(), factor - 1)), f);
}

std::vector<int> consumers_of(const Schedule& s, int stage) {
    return consumers_of(s.stages(), stage);
}

std::vector<int> consumers_of(const std::vector<Stage>& stages, int stage) {
    std::vector<int> result;
    const Operation& op = stages[stage].op;
    for (size_t i = 0; i < stages.size(); ++i) {
        bool reads = false;
        for (const Tensor& t : op_inputs(stages[i].op)) reads = reads || t.op().same_as(op);
        if (!reads) continue;
        // An inlined consumer is replaced by its own consumers: they read this stage now.
        if (stages[i].attach == AttachKind::Inlined) {
            for (int c : consumers_of(stages, static_cast<int>(i)))
                if (std::find(result.begin(), result.end(), c) == result.end()) result.push_back(c);
        } else if (std::find(result.begin(), result.end(), static_cast<int>(i)) == result.end()) {
            result.push_back(static_cast<int>(i));
        }
    }
    return result;
}

}  // namespace internal
}  // namespace tessel
