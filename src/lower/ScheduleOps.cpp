// ScheduleOps (see include/tessel/lower/ScheduleOps.h).
#include "tessel/lower/ScheduleOps.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "../schedule/ScheduleInternal.h"
#include "PassUtil.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/PartitionLoops.h"
#include "tessel/lower/StorageFlatten.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/schedule/TensorIntrin.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace {

ForKind for_kind(IterAnnotation a) {
    switch (a) {
        case IterAnnotation::Vectorize: return ForKind::Vectorized;
        case IterAnnotation::Unroll: return ForKind::Unrolled;
        case IterAnnotation::Parallel: return ForKind::Parallel;
        case IterAnnotation::None: return ForKind::Serial;
        default: return ForKind::ThreadBound;
    }
}

// Whether any loop of the schedule is bound to a GPU block or thread axis (a GPU schedule).
bool binds_threads(const Schedule& s) {
    for (const Stage& st : s.stages())
        for (int id : st.leaf)
            if (is_launch_axis(st.iters[id].annotation)) return true;
    return false;
}

// Where stage i's storage lives: global stages computed inside a kernel are private to a thread.
// Outside kernels a CPU schedule (no thread bindings) may name any scope: the CPU has one memory,
// and "local" / "shared" buffers are plain allocations at the attach point (cache_write(C,
// "local") is the CPU register-tile idiom). A GPU schedule's shared or local stage must be
// computed inside a kernel.
// A stage whose scope cannot be where it is computed: `why` follows "has <scope> scope".
[[noreturn]] void refuse_scope(const Schedule& s, int i, const std::string& why) {
    const Stage& st = s.stages()[i];
    TESSEL_THROW(ScheduleError) << "lower: stage '" << st.name() << "' has "
                                << scope_name(st.scope) << " scope" << why << "\n  loop nest of '"
                                << st.name() << "':\n"
                                << s.loop_nest_string(i);
}

StorageScope effective_scope(const Schedule& s, int i) {
    const Stage& st = s.stages()[i];
    if (st.attach == AttachKind::At && st.attach_after) {  // its tiles of a global tensor
        if (st.scope != StorageScope::Global)
            refuse_scope(s, i,
                         ", but it is computed by reverse_compute_at, which writes its tiles of a "
                         "global tensor");
        return StorageScope::Global;
    }
    if (!internal::computed_inside_kernel(s, i)) {
        if (st.scope != StorageScope::Global && !binds_threads(s)) return StorageScope::Global;
        if (st.scope != StorageScope::Global)
            refuse_scope(s, i,
                         " but is not computed inside a kernel; compute_at it at a loop inside "
                         "the blockIdx/threadIdx loops of its consumer");
        return StorageScope::Global;
    }
    return st.scope == StorageScope::Global ? StorageScope::Local : st.scope;
}

// Whether stage i is computed by reverse_compute_at: its buffer is the whole tensor (global),
// indexed by absolute indices, not its region's.
bool whole_tensor(const Stage& st) {
    return st.attach == AttachKind::At && st.attach_after;
}

// The index of a stage's buffer that point `index` of root axis d is at: relative to its region,
// or absolute for a whole tensor.
Expr storage_index(const Stage& st, const StageBounds& b, size_t d, Expr index) {
    const Expr& mn = b.region_min[d];
    if (index.type() != mn.type()) index = Cast::make(mn.type(), index);
    return whole_tensor(st) || is_zero(mn) ? index : Sub::make(index, mn);
}

// Whether stage i reduces across threads: a reduction leaf bound to threadIdx.
bool is_cross_thread(const Stage& st) {
    for (int id : st.leaf)
        if (st.iters[id].kind == IterKind::Reduction && is_thread_axis(st.iters[id].annotation))
            return true;
    return false;
}

// True when the stage's storage is compact row-major over its axes (no storage_* primitive).
bool default_layout(const Stage& st) {
    for (size_t k = 0; k < st.storage.size(); ++k) {
        const StorageDim& d = st.storage[k];
        if (d.part != StorageDim::Part::Whole || d.axis != static_cast<int>(k) || d.align_factor)
            return false;
    }
    return st.swizzle_bits == 0;
}

// Indices into the stage's buffer for logical indices `idx` (relative to its region): one per
// storage dimension, blocked dimensions as idx / factor and idx % factor.
std::vector<Expr> storage_indices(const Stage& st, const std::vector<Expr>& idx) {
    if (default_layout(st)) return idx;
    std::vector<Expr> out;
    for (const StorageDim& d : st.storage) {
        const Expr& i = idx[d.axis];
        Expr f = make_const(i.type(), d.factor);
        if (d.part == StorageDim::Part::Whole)
            out.push_back(i);
        else if (d.part == StorageDim::Part::Outer)
            out.push_back(FloorDiv::make(i, f));
        else
            out.push_back(FloorMod::make(i, f));
    }
    return out;
}

// Whether `e` is the constant zero (an integer or a float).
bool is_zero_value(const Expr& e) {
    if (auto f = as_const_float(e)) return *f == 0;
    return is_zero(e);
}

// The condition of a zero padding: `c` for if_then_else(c, v, 0) or select(c, v, 0), else
// undefined.
Expr padding_condition(const Expr& e) {
    if (const auto* call = e.as<Call>(); call && call->op == Intrinsic::if_then_else &&
                                         call->args[0].type().is_scalar() &&
                                         is_zero_value(call->args[2]))
        return call->args[0];
    if (const auto* sel = e.as<Select>();
        sel && sel->condition.type().is_scalar() && is_zero_value(sel->false_value))
        return sel->condition;
    return Expr();
}

// A condition outside which `e`, the term of a sum, is zero because a factor of it reads a zero
// padding (a convolution's window on its padded input): the padding itself inlined, or an
// element of an operation whose value is one (its axes replaced by the read's indices). Undefined
// where no factor says so. A product with a zero factor is zero except where the other factor is
// infinite or NaN; the update skipped there does what oneDNN's and PyTorch's convolutions do, which
// never multiply the padding.
Expr zero_outside(const Expr& e) {
    if (const auto* m = e.as<Mul>()) {
        Expr a = zero_outside(m->a), b = zero_outside(m->b);
        if (!a.defined() || !b.defined()) return a.defined() ? a : b;
        return And::make(a, b);
    }
    if (const auto* c = e.as<Cast>()) return zero_outside(c->value);
    if (Expr c = padding_condition(e); c.defined()) return c;
    const auto* r = e.as<TensorRead>();
    const ComputeOpNode* op = r ? as_compute(r->tensor->op) : nullptr;
    if (!op || op->body.size() != 1) return Expr();
    Expr c = padding_condition(op->body[0]);
    if (!c.defined()) return Expr();
    VarMap map;
    for (size_t d = 0; d < op->axis.size(); ++d) map[op->axis[d].var().get()] = r->indices[d];
    return substitute(c, map);
}

class NestBuilder {
public:
    NestBuilder(const Schedule& s, const std::vector<Tensor>& args, std::vector<StageBounds> bounds,
                SchedulePart part, bool skip_padding_taps)
        : s_(s),
          part_(part),
          skip_padding_taps_(skip_padding_taps),
          bounds_(std::move(bounds)),
          bodies_(inlined_bodies(s)),
          buffers_(s.stages().size()),
          is_arg_(s.stages().size(), false) {
        make_buffers(args);
        pass_pre_transformed();
        check_double_buffers();
        check_warp_stages();
    }
    LoweredFunc build(const std::string& name);

private:
    void make_buffers(const std::vector<Tensor>& args);
    void pass_pre_transformed();
    void check_double_buffers() const;
    void check_warp_stages() const;
    BufferSwizzle swizzle_of(const Stage& st, Type elem, const std::vector<int64_t>& extents,
                             StorageScope scope) const;
    Buffer laid_out_buffer(const Stage& st, const Tensor& t, const std::vector<Expr>& shape,
                           StorageScope scope, const std::string& name = "");
    Stmt stage_nest(int i);
    Stmt tma_nest(int i);
    Stmt loops(int i, size_t from, size_t to, bool init, const Stmt& inner);
    Stmt with_attached(int i, int iter_id, Stmt body);
    Stmt after_nest(int x);
    Stmt allocate(int i, Stmt body);
    Stmt guarded(int i, bool init, Stmt body);
    Stmt init_stmt(int i);
    Stmt update_stmt(int i);
    Stmt update_into(int i, const std::vector<Buffer>& into, const std::vector<Expr>& idx);
    Expr padding_guard(int i);
    Stmt cross_thread_nest(int i, size_t first_reduction);
    Stmt tensorized_nest(int i);
    Stmt cpu_dot_nest(int i, size_t t, const TensorIntrin& in, const std::vector<Expr>& args);
    Stmt wgmma_call(const TensorIntrin& in, const std::vector<Var>& vars,
                    const std::vector<Expr>& loads, const std::vector<Expr>& args,
                    const std::function<void(const std::string&)>& fail);
    Stmt edge_store(int i, std::vector<Expr> args, const std::vector<Var>& vars,
                    const std::vector<IterVar>& axes,
                    const std::function<std::optional<int64_t>(const Expr&, size_t)>& step_along,
                    const std::function<void(const std::string&)>& fail);
    size_t tensorized_leaf(int i, const TensorIntrin& in) const;
    std::vector<Expr> tile(int i, const Expr& load, const Var& row_var);
    Stmt make_loop(int i, int id, Stmt body);
    Expr lower_expr(int i, const Expr& e);
    std::vector<Expr> store_indices(int i);

    const Schedule& s_;
    SchedulePart part_;
    bool skip_padding_taps_;
    std::vector<StageBounds> bounds_;
    std::vector<std::vector<Expr>> bodies_;
    std::vector<std::vector<Buffer>> buffers_;  ///< per stage, per output
    std::vector<bool> is_arg_;
    std::vector<Buffer> arg_buffers_;
    std::map<const BufferNode*, Expr> alloc_size_;  ///< padded (storage_align) buffers' sizes
    std::vector<Buffer> counters_;  ///< tile_arrive's counters (after_nest), zero between calls
};

void NestBuilder::make_buffers(const std::vector<Tensor>& args) {
    for (const Tensor& t : args) {
        if (!t.defined()) TESSEL_THROW(ScheduleError) << "lower: an argument tensor is undefined";
        int stage;
        try {
            stage = s_.stage_of(t);
        } catch (const ScheduleError&) {
            TESSEL_THROW(ScheduleError)
                << "lower: argument '" << t.name() << "' is not a tensor of this schedule's DAG";
        }
        if (s_.stages()[stage].attach == AttachKind::Inlined)
            TESSEL_THROW(ScheduleError)
                << "lower: argument '" << t.name()
                << "' is inlined; it has no storage to pass (compute_root it)";
        if (!default_layout(s_.stages()[stage]))
            TESSEL_THROW(ScheduleError)
                << "lower: argument '" << t.name()
                << "' has a storage layout (storage_split/reorder/align); the caller's buffers "
                   "are compact row-major";
        Buffer& slot =
            buffers_[stage].empty() ? buffers_[stage].emplace_back() : buffers_[stage][0];
        (void)slot;
        buffers_[stage].resize(op_num_outputs(s_.stages()[stage].op));
        if (buffers_[stage][t.value_index()].defined())
            TESSEL_THROW(ScheduleError) << "lower: argument '" << t.name() << "' is listed twice";
        buffers_[stage][t.value_index()] = Buffer(t.name(), t.dtype(), t.shape());
        is_arg_[stage] = true;
        arg_buffers_.push_back(buffers_[stage][t.value_index()]);
    }
    std::vector<int> needed;  // placeholders read by a computed stage, and the outputs
    for (size_t i = 0; i < s_.stages().size(); ++i) {
        const Stage& st = s_.stages()[i];
        bool placeholder = as_placeholder(st.op) != nullptr;
        for (int v = 0; v < op_num_outputs(st.op); ++v) {
            bool has =
                is_arg_[i] && v < static_cast<int>(buffers_[i].size()) && buffers_[i][v].defined();
            if (is_arg_[i] && !has)
                TESSEL_THROW(ScheduleError)
                    << "lower: the arguments list another output of '" << st.name() << "' but not '"
                    << op_output(st.op, v).name() << "'; pass every output of a multi-output stage";
            if ((placeholder || st.is_output) && !has)
                TESSEL_THROW(ScheduleError)
                    << "lower: the arguments omit " << (placeholder ? "placeholder" : "output")
                    << " '" << op_output(st.op, v).name() << "', which the DAG "
                    << (placeholder ? "reads" : "computes") << "; pass it too";
        }
        if (is_arg_[i] || placeholder || st.attach == AttachKind::Inlined) continue;
        const StageBounds& b = bounds_[i];
        std::vector<Expr> shape;
        for (size_t d = 0; d < as_compute(st.op)->axis.size(); ++d) {
            if (whole_tensor(st)) {
                shape.push_back(as_compute(st.op)->axis[d].dom().extent);
                continue;
            }
            if (!as_const_int(b.storage_extent[d]) && st.attach == AttachKind::At)
                TESSEL_THROW(ScheduleError)
                    << "lower: stage '" << st.name() << "' needs storage of extent "
                    << to_string(b.storage_extent[d]) << " in axis " << d
                    << ", which is not constant";
            shape.push_back(b.storage_extent[d]);
        }
        StorageScope scope = effective_scope(s_, static_cast<int>(i));
        for (int v = 0; v < op_num_outputs(st.op); ++v)
            buffers_[i].push_back(laid_out_buffer(st, op_output(st.op, v), shape, scope));
    }
}

// Pre-transformed stages (Schedule::pre_transform): their buffer, over the whole weight in the
// stage's storage layout, is an argument. The kernel takes it in the weight's place; the
// pre-transform function takes the weights, then their laid-out buffers.
void NestBuilder::pass_pre_transformed() {
    std::vector<Buffer> weights, packed;
    for (size_t i = 0; i < s_.stages().size(); ++i) {
        const Stage& st = s_.stages()[i];
        if (!st.pre_transform) continue;
        const Tensor w = op_inputs(st.op).at(0);
        const int p = s_.stage_of(w);
        // (A copy of the weight has its shape; a transform of it, its own.)
        const std::vector<Expr> shape = op_output(st.op, 0).shape();
        const StageBounds& b = bounds_[i];
        // The stage covers the whole transformed weight (its storage may be padded past the end:
        // a padded tile's reads there are clamped to the last point, so they never leave it).
        for (size_t d = 0; d < shape.size(); ++d) {
            auto have = as_const_int(b.storage_extent[d]), want = as_const_int(shape[d]);
            if (!is_zero(b.region_min[d]) || !have || !want || *have < *want)
                TESSEL_THROW(ScheduleError)
                    << "lower: pre-transformed stage '" << st.name() << "' covers "
                    << to_string(b.storage_extent[d]) << " from " << to_string(b.region_min[d])
                    << " of its axis " << d << " (extent " << to_string(shape[d]) << ", of '"
                    << w.name() << "'); its readers must read the whole weight, of constant shape";
        }
        for (size_t c = 0; c < s_.stages().size(); ++c) {
            const Stage& r = s_.stages()[c];
            if (c == i || !as_compute(r.op) || r.attach == AttachKind::Inlined) continue;
            for (const Tensor& t : op_inputs(r.op))
                if (t.op().same_as(w.op()))
                    TESSEL_THROW(ScheduleError)
                        << "lower: stage '" << r.name() << "' reads '" << w.name()
                        << "' itself, not its pre-transformed copy '" << st.name()
                        << "'; the kernel takes only the transformed weight (cache_read it for "
                           "every reader)";
        }
        Buffer laid = laid_out_buffer(st, op_output(st.op, 0), b.storage_extent,
                                      StorageScope::Global, w.name() + "_packed");
        buffers_[i] = {laid};
        is_arg_[i] = true;
        weights.push_back(buffers_[p].at(0));
        packed.push_back(laid);
    }
    if (weights.empty()) {
        if (part_ == SchedulePart::PreTransform)
            TESSEL_THROW(ScheduleError)
                << "lower_pre_transform: the schedule pre-transforms no weight";
        return;
    }
    if (part_ == SchedulePart::PreTransform) {
        arg_buffers_ = weights;
        arg_buffers_.insert(arg_buffers_.end(), packed.begin(), packed.end());
        return;
    }
    for (size_t k = 0; k < weights.size(); ++k)
        for (Buffer& a : arg_buffers_)
            if (a.same_as(weights[k])) a = packed[k];
}

// double_buffer and pipeline are for shared stages computed inside a GPU kernel
// (inject_double_buffer checks the loop they are computed at).
// Fragments ("warp" scope) are written and read only by tensor intrinsics (ir/Fragment.h).
void NestBuilder::check_warp_stages() const {
    for (size_t i = 0; i < s_.stages().size(); ++i) {
        const Stage& st = s_.stages()[i];
        if (st.scope != StorageScope::Warp || st.attach == AttachKind::Inlined) continue;
        std::string bad;
        if (st.tensorize_iter < 0) bad = "'" + st.name() + "' itself";
        for (int c : internal::consumers_of(s_, static_cast<int>(i)))
            if (bad.empty() && s_.stages()[c].tensorize_iter < 0)
                bad = "its reader '" + s_.stages()[c].name() + "'";
        if (bad.empty()) continue;
        TESSEL_THROW(ScheduleError)
            << "lower: stage '" << st.name() << "' has warp scope, but " << bad
            << " is not tensorized (a fragment is spread over the lanes of a warp: only tensor "
               "intrinsics write and read it; tensorize both with intrinsics of "
               "schedule/TensorIntrin.h)\n  loop nest of '"
            << st.name() << "':\n"
            << s_.loop_nest_string(static_cast<int>(i));
    }
}

// double_buffer is for shared stages computed inside a GPU kernel (inject_double_buffer checks
// the loop they are computed at).
void NestBuilder::check_double_buffers() const {
    for (size_t i = 0; i < s_.stages().size(); ++i) {
        const Stage& st = s_.stages()[i];
        if (!st.double_buffer && !st.pipeline_depth) continue;
        bool shared = st.attach == AttachKind::At &&
                      effective_scope(s_, static_cast<int>(i)) == StorageScope::Shared;
        if (!shared)
            TESSEL_THROW(ScheduleError)
                << (st.double_buffer ? "double_buffer" : "pipeline") << ": stage '" << st.name()
                << "' is not a shared stage computed inside a GPU kernel ("
                << (st.double_buffer ? "double buffering" : "pipelining")
                << " overlaps the fetches of shared tiles); cache_read it to \"shared\" and "
                   "compute_at it at a serial loop inside the kernel\n  loop nest of '"
                << st.name() << "':\n"
                << s_.loop_nest_string(static_cast<int>(i));
    }
}

// storage_swizzle's layout for a stage whose storage dimensions have `extents` (docs/schedule.md):
// rows are the last dimension; per = max(1, 2^bits / chunks) rows share one of min(2^bits, chunks)
// phases. In flat terms (the row length is a multiple of vector * phases) the chunk bits of the
// offset are XORed with (offset / (row * per)) % phases.
BufferSwizzle NestBuilder::swizzle_of(const Stage& st, Type elem,
                                      const std::vector<int64_t>& extents,
                                      StorageScope scope) const {
    auto fail = [&](const std::string& why) {
        TESSEL_THROW(ScheduleError)
            << "storage_swizzle: stage '" << st.name() << "' " << why << "\n  loop nest of '"
            << st.name() << "':\n"
            << s_.loop_nest_string(static_cast<int>(&st - s_.stages().data()));
    };
    if (scope != StorageScope::Shared || st.attach != AttachKind::At)
        fail(std::string("has ") + scope_name(scope) +
             " storage; only shared buffers of a GPU kernel are swizzled (the layout is about "
             "shared-memory banks): cache_read it to \"shared\" and compute_at it inside the "
             "kernel");
    const int eb = elem.bytes();
    if (elem.is_vector() || 16 % eb != 0)
        fail("has elements of type " + elem.str() +
             ", which do not tile a 16-byte chunk (an element would straddle two chunks)");
    const int64_t vector = 16 / eb, row = extents.back(), chunks = row / vector;
    if (row % vector != 0 || chunks < 2)
        fail("has rows of " + std::to_string(row) + " elements (" + std::to_string(row * eb) +
             " bytes); a swizzled row is a multiple of 16 bytes and at least 32");
    const int64_t want = int64_t(1) << st.swizzle_bits;
    if (chunks >= want ? chunks % want != 0 : want % chunks != 0)
        fail("has rows of " + std::to_string(chunks) +
             " 16-byte chunks; with bits = " + std::to_string(st.swizzle_bits) +
             " a row is a multiple of " + std::to_string(want) + " chunks or divides " +
             std::to_string(want) + " chunks (pad the tile, or choose other bits)");
    const int64_t phases = std::min(want, chunks), per = std::max<int64_t>(1, want / chunks);
    return {vector, row * per, phases};
}

// The buffer of one output of a stage with storage extents `shape`: its storage dimensions in
// the stage's layout order, with padded strides where storage_align asks for them.
Buffer NestBuilder::laid_out_buffer(const Stage& st, const Tensor& t,
                                    const std::vector<Expr>& shape, StorageScope scope,
                                    const std::string& name) {
    const std::string& buffer_name = name.empty() ? t.name() : name;
    if (default_layout(st)) return Buffer(buffer_name, t.dtype(), shape, scope);
    std::vector<int64_t> axis_extents(shape.size(), 0);
    for (const StorageDim& d : st.storage) {
        auto e = as_const_int(shape[d.axis]);
        if (!e)
            TESSEL_THROW(ScheduleError)
                << "lower: stage '" << st.name() << "' has a storage layout but extent "
                << to_string(shape[d.axis]) << " of axis " << d.axis << " is not constant";
        axis_extents[d.axis] = *e;
    }
    internal::StorageLayout layout = internal::storage_layout(st, axis_extents);
    const std::vector<int64_t>& extents = layout.extents;
    const std::vector<int64_t>& strides = layout.strides;
    const bool padded = layout.padded;
    const int64_t stride = layout.elements;
    Type idx = shape.empty() ? Int(32) : shape[0].type();
    if (stride > idx.max_int()) idx = Int(64);
    std::vector<Expr> phys;
    for (int64_t e : extents) phys.push_back(make_const(idx, e));
    // Before the node exists: swizzle_of throws for a layout it cannot swizzle.
    BufferSwizzle swizzle;
    if (st.swizzle_bits) swizzle = swizzle_of(st, t.dtype(), extents, scope);
    auto* n = new BufferNode();
    n->data = Var(buffer_name, Handle());
    n->dtype = t.dtype();
    n->shape = phys;
    n->elem_offset = make_zero(idx);
    n->name = buffer_name;
    n->scope = scope;
    n->swizzle = swizzle;
    if (padded) {
        for (int64_t x : strides) n->strides.push_back(make_const(idx, x));
        alloc_size_[n] = make_const(idx, stride);
    }
    return Buffer(n);
}

// Rewrites a stage's body: DSL axis variables become the absolute root values, reads of tensors
// become buffer loads relative to the producer's region. In a padded tile (`guard_reads`, see
// InferBounds.h) a read of a producer whose region may not cover it reads zero outside that
// region; `leaves` (the reading stage's loop ranges) proves the axes it does cover, which then
// need no check (a tensor intrinsic's operands must be plain loads).
class LowerReads : public IRMutator {
public:
    LowerReads(const Schedule& s, const std::vector<StageBounds>& b,
               const std::vector<std::vector<Buffer>>& bufs, bool guard_reads, Scope leaves)
        : s_(s),
          bounds_(b),
          buffers_(bufs),
          guard_reads_(guard_reads),
          leaves_(std::move(leaves)) {}
    using IRMutator::visit;

protected:
    Expr visit(const TensorRead* op) override {
        std::vector<Expr> idx;
        mutate_all(op->indices, &idx);
        int p = s_.stage_of(op->tensor);
        const StageBounds& pb = bounds_[p];
        for (size_t d = 0; d < idx.size(); ++d)
            idx[d] = storage_index(s_.stages()[p], pb, d, idx[d]);
        Expr load = BufferLoad::make(buffers_[p][op->tensor.value_index()],
                                     storage_indices(s_.stages()[p], idx));
        if (!guard_reads_) return load;
        // Axes of a padded producer cover every read; the others are checked.
        Expr inside;
        for (size_t d = 0; d < idx.size(); ++d) {
            if (d < pb.overcomputed_axes.size() && pb.overcomputed_axes[d]) continue;
            Type t = idx[d].type();
            Expr extent = pb.region_extent[d];
            if (extent.type() != t) extent = Cast::make(t, extent);
            Expr c = And::make(GE::make(idx[d], make_zero(t)), LT::make(idx[d], extent));
            if (can_prove(c, leaves_)) continue;
            inside = inside.defined() ? And::make(inside, c) : c;
        }
        if (!inside.defined()) return load;
        return if_then_else(simplify(inside), load, make_zero(load.type()));
    }

private:
    const Schedule& s_;
    const std::vector<StageBounds>& bounds_;
    const std::vector<std::vector<Buffer>>& buffers_;
    bool guard_reads_;
    Scope leaves_;
};

Expr NestBuilder::lower_expr(int i, const Expr& e) {
    const ComputeOpNode* c = as_compute(s_.stages()[i].op);
    VarMap map;
    // read_values: round-up splits store past the region but read at its last point.
    for (size_t r = 0; r < c->axis.size(); ++r)
        map[c->axis[r].var().get()] = bounds_[i].read_values[r];
    for (size_t r = 0; r < c->reduce_axis.size(); ++r)
        map[c->reduce_axis[r].var().get()] = bounds_[i].read_values[c->axis.size() + r];
    // The ranges of the stage's loops and of the loops it is computed inside.
    Scope leaves;
    for (int at = bounds_[i].overcomputed ? i : -1; at >= 0;) {
        const Stage& st = s_.stages()[static_cast<size_t>(at)];
        for (int id : st.leaf) {
            const Expr& ext = bounds_[static_cast<size_t>(at)].iter_extents[id];
            leaves[bounds_[static_cast<size_t>(at)].iter_vars[id].get()] =
                Interval(make_zero(ext.type()), simplify(Sub::make(ext, make_one(ext.type()))));
        }
        at = st.attach == AttachKind::At ? st.attach_stage : -1;
    }
    return LowerReads(s_, bounds_, buffers_, bounds_[i].overcomputed, std::move(leaves))
        .mutate(substitute(e, map));
}

std::vector<Expr> NestBuilder::store_indices(int i) {
    const ComputeOpNode* c = as_compute(s_.stages()[i].op);
    std::vector<Expr> idx;
    for (size_t d = 0; d < c->axis.size(); ++d)
        idx.push_back(
            simplify(storage_index(s_.stages()[i], bounds_[i], d, bounds_[i].root_values[d])));
    return storage_indices(s_.stages()[i], idx);
}

Stmt NestBuilder::init_stmt(int i) {
    const auto* red = bodies_[i][0].as<Reduce>();
    std::vector<Stmt> stores;
    std::vector<Expr> idx = store_indices(i);
    for (size_t v = 0; v < bodies_[i].size(); ++v)
        stores.push_back(BufferStore::make(buffers_[i][v], red->combiner->identity[v], idx));
    return Seq::make(stores);
}

Stmt NestBuilder::update_stmt(int i) {
    return update_into(i, buffers_[i], store_indices(i));
}

// The update of reduction stage i accumulating into `into` at `idx`.
Stmt NestBuilder::update_into(int i, const std::vector<Buffer>& into,
                              const std::vector<Expr>& idx) {
    const auto* red = bodies_[i][0].as<Reduce>();
    const CommReducer& comb = red->combiner;
    VarMap map;
    for (size_t v = 0; v < comb.num_values(); ++v) {
        map[comb->lhs[v].get()] = BufferLoad::make(into[v], idx);
        map[comb->rhs[v].get()] = lower_expr(i, red->source[v]);
    }
    Stmt update;
    if (comb.num_values() == 1) {
        update = BufferStore::make(into[0], substitute(comb->result[0], map), idx);
    } else {
        // Every result is computed from the old values before any is stored.
        std::vector<Var> results;
        std::vector<Stmt> stores;
        for (size_t v = 0; v < comb.num_values(); ++v) {
            results.emplace_back(into[v].name() + "_v", comb->result[v].type());
            stores.push_back(BufferStore::make(into[v], results.back(), idx));
        }
        update = Seq::make(stores);
        for (size_t v = comb.num_values(); v-- > 0;)
            update = LetStmt::make(results[v], substitute(comb->result[v], map), update);
    }
    if (!is_one(red->condition)) update = IfThenElse::make(lower_expr(i, red->condition), update);
    if (Expr taps = padding_guard(i); taps.defined())
        update =
            AttrStmt::make(kSkippableGuardAttr, make_zero(Int(32)), IfThenElse::make(taps, update));
    return update;
}

// The guard that skips a sum's updates whose term reads zero padding (zero_outside), lowered, in
// a CPU schedule: a convolution's taps on its padding. The conjuncts on stage i's vectorized
// loops are left out (a vector's lanes take one branch). The guard is a skippable one
// (kSkippableGuardAttr): partition_loops splits the window's loops on it or narrows them to the
// rows inside the input, and drops what the loops' ranges leave undecided (a tile of some of a
// row's columns: a branch in the tile costs more than the taps it saves, 1.35 x the time of
// ResNet-50's stem). Undefined where there is nothing to skip.
Expr NestBuilder::padding_guard(int i) {
    const auto* red = bodies_[i][0].as<Reduce>();
    const CommReducer& comb = red->combiner;
    if (!skip_padding_taps_ || comb.num_values() != 1 || !is_zero_value(comb->identity[0]) ||
        binds_threads(s_))
        return Expr();
    const auto* add = comb->result[0].as<Add>();
    if (!add || !((add->a.same_as(comb->lhs[0]) && add->b.same_as(comb->rhs[0])) ||
                  (add->a.same_as(comb->rhs[0]) && add->b.same_as(comb->lhs[0]))))
        return Expr();
    Expr zero = zero_outside(red->source[0]);
    if (!zero.defined()) return Expr();
    const Stage& st = s_.stages()[i];
    std::vector<Var> lanes;
    for (int id : st.leaf)
        if (st.iters[id].annotation == IterAnnotation::Vectorize)
            lanes.push_back(bounds_[i].iter_vars[id]);
    std::vector<Expr> conjuncts;
    internal::split_conjuncts(simplify(lower_expr(i, zero)), &conjuncts);
    Expr guard;
    for (const Expr& c : conjuncts) {
        if (is_one(c) ||
            std::any_of(lanes.begin(), lanes.end(), [&](const Var& v) { return uses_var(c, v); }))
            continue;
        guard = guard.defined() ? And::make(guard, c) : c;
    }
    return guard;
}

Stmt NestBuilder::guarded(int i, bool init, Stmt body) {
    const std::vector<StageGuard>& guards = bounds_[i].guards;
    for (size_t g = guards.size(); g-- > 0;) {
        if (init && guards[g].on_reduction) continue;
        body = IfThenElse::make(Call::make(Intrinsic::likely, {guards[g].condition}), body);
    }
    return body;
}

Stmt NestBuilder::allocate(int i, Stmt body) {
    if (is_arg_[i]) return body;
    for (size_t v = buffers_[i].size(); v-- > 0;) {
        const Buffer& b = buffers_[i][v];
        auto padded = alloc_size_.find(b.get());
        std::vector<Expr> extents =
            padded == alloc_size_.end() ? b.shape() : std::vector<Expr>{padded->second};
        body = Allocate::make(b->data, b.dtype(), extents, b->scope, body);
    }
    return body;
}

// Whether `s` holds an AttrStmt of `key`.
bool has_attr(const Stmt& s, const std::string& key) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) {
        found = found || (n->node_type == IRNodeType::AttrStmt &&
                          static_cast<const AttrStmt*>(n)->key == key);
    });
    return found;
}

// Stages computed at (i, iter_id), emitted before `body` with their storage around both.
Stmt NestBuilder::with_attached(int i, int iter_id, Stmt body) {
    // A tma_store() stage's copy out of the shared stage computed here, the innermost such
    // loop's (inject_tma_stores).
    if (s_.stages()[i].tma_store && !has_attr(body, "tma_store_copy"))
        for (const Stage& st : s_.stages())
            if (st.attach == AttachKind::At && st.attach_stage == i && st.attach_iter == iter_id &&
                st.scope == StorageScope::Shared) {
                body = AttrStmt::make("tma_store_copy", buffers_[i][0]->data, body);
                break;
            }
    for (int p = static_cast<int>(s_.stages().size()) - 1; p >= 0; --p) {
        const Stage& st = s_.stages()[p];
        if (st.attach != AttachKind::At || st.attach_stage != i || st.attach_iter != iter_id ||
            st.attach_after)
            continue;
        if (st.double_buffer || st.pipeline_depth) {  // marked for inject_double_buffer
            const Var& data = buffers_[p][0]->data;
            Stmt nest = st.tma ? AttrStmt::make("tma_copy", data, tma_nest(p)) : stage_nest(p);
            Stmt fetch = AttrStmt::make("double_buffer_write", data, nest);
            Stmt alloc = allocate(p, Seq::make({fetch, body}));
            const char* scope =
                st.warp_specialized ? "warp_specialized_pipeline_scope" : "pipeline_scope";
            body = st.pipeline_depth
                       ? AttrStmt::make(scope, make_const(Int(32), st.pipeline_depth), alloc)
                       : AttrStmt::make("double_buffer_scope", data, alloc);
            continue;
        }
        body = allocate(p, Seq::make({stage_nest(p), body}));
    }
    for (size_t x = 0; x < s_.stages().size(); ++x) {
        const Stage& st = s_.stages()[x];
        if (st.attach == AttachKind::At && st.attach_after && st.attach_stage == i &&
            st.attach_iter == iter_id)
            body = Seq::make({body, after_nest(static_cast<int>(x))});
    }
    return body;
}

// A stage computed by reverse_compute_at, after its target's body: where several iterations
// write the target's points one tile of it reads, the last of them to finish computes it
// (tile_arrive on a counter per tile, kept zero between calls: build() allocates it).
Stmt NestBuilder::after_nest(int x) {
    const StageBounds& b = bounds_[x];
    const Stage& st = s_.stages()[x];
    Stmt nest = stage_nest(x);  // (its buffer: an argument, or allocated by build())
    if (b.arrivals > 1) {
        const Stage& t = s_.stages()[st.attach_stage];
        for (size_t pos = 0; pos < t.leaf.size() && t.leaf[pos] != st.attach_iter; ++pos)
            if (is_thread_axis(t.iters[t.leaf[pos]].annotation) ||
                t.iters[t.leaf[pos]].annotation == IterAnnotation::VThread)
                internal::schedule_fail(s_, "lower", x,
                                        "it is computed after '" + t.name() +
                                            "' by the last block to finish a "
                                            "tile, at a loop inside '" +
                                            t.name() + "''s thread loop '" +
                                            t.iters[t.leaf[pos]].name +
                                            "': the block arrives together, so the "
                                            "attach loop must be outside every threadIdx loop");
        Buffer counter(st.name() + ".arrivals", Int(32), {make_const(Int(32), b.arrival_tiles)});
        counters_.push_back(counter);
        Buffer last(st.name() + ".last", Int(32), {make_const(Int(32), 1)}, StorageScope::Local);
        Stmt arrive = Evaluate::make(Call::make(
            Intrinsic::tile_arrive,
            {counter->data, b.arrival_tile, make_const(Int(32), b.arrivals), last->data}));
        Stmt run = IfThenElse::make(
            NE::make(BufferLoad::make(last, {make_zero(Int(32))}), make_zero(Int(32))), nest);
        nest = Allocate::make(last->data, Int(32), {make_const(Int(32), 1)}, StorageScope::Local,
                              Seq::make({arrive, run}));
    }
    if (b.arrival_valid.defined() && !is_one(b.arrival_valid))
        nest = IfThenElse::make(b.arrival_valid, nest);
    return nest;
}

// Leaf loops [from, to) of stage i around `inner`; the init nest skips reduction leaves.
Stmt NestBuilder::loops(int i, size_t from, size_t to, bool init, const Stmt& inner) {
    const Stage& st = s_.stages()[i];
    Stmt body = inner;
    for (size_t pos = to; pos-- > from;) {
        int id = st.leaf[pos];
        const Iterator& it = st.iters[id];
        if (init && it.kind == IterKind::Reduction) continue;
        if (!init) body = with_attached(i, id, body);
        body = make_loop(i, id, body);
    }
    if (st.tma_store && !init && from == 0 && !has_attr(body, "tma_store_copy"))
        internal::schedule_fail(
            s_, "tma_store", i,
            "no shared stage is computed at one of its loops; a TMA store copies one "
            "out (cache_write the stage into \"shared\" and compute_at the cache at one "
            "of its loops)");
    return body;
}

Stmt NestBuilder::make_loop(int i, int id, Stmt body) {
    IterAnnotation a = s_.stages()[i].iters[id].annotation;
    ForKind kind = for_kind(a);
    return For::make(bounds_[i].iter_vars[id], make_zero(bounds_[i].iter_extents[id].type()),
                     bounds_[i].iter_extents[id], kind, std::move(body),
                     kind == ForKind::ThreadBound ? annotation_name(a) : "");
}

// A reduction with threadIdx-bound reduction leaves (Schedule::bind): each thread accumulates its
// share over the other reduction leaves into a local accumulator, thread_allreduce combines the
// accumulators of the bound threads, and the threads at index 0 of the bound axes store the result
// (every thread stores its own copy when the stage's storage is per thread).
Stmt NestBuilder::cross_thread_nest(int i, size_t p) {
    const Stage& st = s_.stages()[i];
    const auto* red = bodies_[i][0].as<Reduce>();
    const CommReducer& comb = red->combiner;
    std::vector<int> bound, serial;
    for (size_t pos = p; pos < st.leaf.size(); ++pos) {
        const Iterator& it = st.iters[st.leaf[pos]];
        if (it.kind != IterKind::Reduction)
            TESSEL_THROW(ScheduleError)
                << "lower: stage '" << st.name() << "': a cross-thread reduction needs every "
                << "data-parallel loop outside the reduction loops, but '" << it.name
                << "' is inside them (reorder it outwards)\n  loop nest of '" << st.name() << "':\n"
                << s_.loop_nest_string(i);
        (is_thread_axis(it.annotation) ? bound : serial).push_back(st.leaf[pos]);
    }
    std::vector<Buffer> acc, red_buf;
    std::vector<Expr> zero{make_const(Int(32), 0)};
    for (size_t v = 0; v < comb.num_values(); ++v) {
        Type t = buffers_[i][v].dtype();
        acc.emplace_back(buffers_[i][v].name() + ".acc", t,
                         std::vector<Expr>{make_const(Int(32), 1)}, StorageScope::Local);
        red_buf.emplace_back(buffers_[i][v].name() + ".red", t,
                             std::vector<Expr>{make_const(Int(32), 1)}, StorageScope::Local);
    }
    std::vector<Stmt> init;
    for (size_t v = 0; v < comb.num_values(); ++v)
        init.push_back(BufferStore::make(acc[v], comb->identity[v], zero));
    // The bound loops go outside the serial ones. A stage computed at a bound loop that had
    // serial loops outside it in the leaf order needs those loops' variables (its region was
    // inferred per leaf-order iteration): it is computed inside the innermost of them instead.
    std::map<int, std::vector<int>> hosted;  // serial loop id -> bound loops computed inside it
    std::set<int> moved;
    for (int b : bound) {
        int host = -1;
        for (size_t pos = p; st.leaf[pos] != b; ++pos)
            if (!is_thread_axis(st.iters[st.leaf[pos]].annotation)) host = st.leaf[pos];
        if (host < 0) continue;
        hosted[host].push_back(b);
        moved.insert(b);
    }
    Stmt update = guarded(i, false, update_into(i, acc, zero));
    for (size_t k = serial.size(); k-- > 0;) {
        const std::vector<int>& here = hosted[serial[k]];
        for (size_t h = here.size(); h-- > 0;) update = with_attached(i, here[h], update);
        update = make_loop(i, serial[k], with_attached(i, serial[k], update));
    }
    // thread_allreduce(n, m, values, identity, lhs, rhs, result, dest, threads): see ir/IR.h.
    const size_t n = comb.num_values();
    std::vector<Expr> args{make_const(Int(32), static_cast<int64_t>(n)),
                           make_const(Int(32), static_cast<int64_t>(bound.size()))};
    for (size_t v = 0; v < n; ++v) args.push_back(BufferLoad::make(acc[v], zero));
    for (size_t v = 0; v < n; ++v) args.push_back(comb->identity[v]);
    for (size_t v = 0; v < n; ++v) args.push_back(comb->lhs[v]);
    for (size_t v = 0; v < n; ++v) args.push_back(comb->rhs[v]);
    for (size_t v = 0; v < n; ++v) args.push_back(comb->result[v]);
    for (size_t v = 0; v < n; ++v) args.push_back(red_buf[v]->data);
    for (int id : bound) args.push_back(bounds_[i].iter_vars[id]);
    Stmt allreduce = Evaluate::make(Call::make(Intrinsic::thread_allreduce, args));
    std::vector<Stmt> stores;
    std::vector<Expr> idx = store_indices(i);
    for (size_t v = 0; v < n; ++v)
        stores.push_back(
            BufferStore::make(buffers_[i][v], BufferLoad::make(red_buf[v], zero), idx));
    Stmt store = guarded(i, true, Seq::make(stores));
    if (buffers_[i][0]->scope != StorageScope::Local) {
        Expr first;
        for (int id : bound) {
            const Var& x = bounds_[i].iter_vars[id];
            Expr c = EQ::make(x, make_zero(x.type()));
            first = first.defined() ? And::make(first, c) : c;
        }
        store = IfThenElse::make(first, store);
    }
    Stmt body = Seq::make({Seq::make(init), update, allreduce, store});
    for (size_t v = n; v-- > 0;) {
        body = Allocate::make(red_buf[v]->data, red_buf[v].dtype(), red_buf[v].shape(),
                              StorageScope::Local, body);
        body =
            Allocate::make(acc[v]->data, acc[v].dtype(), acc[v].shape(), StorageScope::Local, body);
    }
    for (size_t k = bound.size(); k-- > 0;)
        body =
            make_loop(i, bound[k], moved.count(bound[k]) ? body : with_attached(i, bound[k], body));
    return body;
}

// The leaf position stage i is tensorized from, rechecked against the intrinsic's loops (later
// steps may have changed them) and the stage's guards and attachments.
size_t NestBuilder::tensorized_leaf(int i, const TensorIntrin& in) const {
    const Stage& st = s_.stages()[i];
    auto fail = [&](const std::string& why) {
        TESSEL_THROW(ScheduleError)
            << "lower: stage '" << st.name() << "': tensorize with " << in.name << ": " << why
            << "\n  loop nest of '" << st.name() << "':\n"
            << s_.loop_nest_string(i);
    };
    const size_t t = static_cast<size_t>(
        std::find(st.leaf.begin(), st.leaf.end(), st.tensorize_iter) - st.leaf.begin());
    const std::vector<IterVar> axes = tensor_intrin_axes(in);
    if (t + axes.size() != st.leaf.size()) fail("its loops were changed after tensorize");
    for (size_t k = 0; k < axes.size(); ++k) {
        const int id = st.leaf[t + k];
        if (as_const_int(bounds_[i].iter_extents[id]) != as_const_int(axes[k].dom().extent))
            fail("loop '" + st.iters[id].name + "' no longer has the extent of axis " +
                 axes[k].var().name());
        for (const Stage& other : s_.stages())
            if (other.attach == AttachKind::At && &s_.stages()[other.attach_stage] == &st &&
                other.attach_iter == id)
                fail("stage '" + other.name() + "' is computed at loop '" + st.iters[id].name +
                     "', inside the tensorized nest");
    }
    if (!bounds_[i].guards.empty() && in.kind != TensorIntrinKind::StoreFragment)
        fail(
            "a loop of the stage does not divide its axis (guarded points); tensor intrinsics "
            "compute whole tiles (only a fragment store stops at its tensor's edge)");
    return t;
}

// A tile operand (ir/IR.h): the BufferLoad `load` (in leaf variables) at the tile's origin (the
// tensorized variables at 0) and one row below (`row_var` at 1).
std::vector<Expr> NestBuilder::tile(int i, const Expr& load, const Var& row_var) {
    const Stage& st = s_.stages()[i];
    const size_t t = tensorized_leaf(i, *find_tensor_intrin(st.tensorize_intrin));
    VarMap at;
    for (size_t pos = t; pos < st.leaf.size(); ++pos) {
        const Var& v = bounds_[i].iter_vars[st.leaf[pos]];
        at[v.get()] = make_zero(v.type());
    }
    Expr origin = simplify(substitute(load, at));
    at[row_var.get()] = make_one(row_var.type());
    return {origin, simplify(substitute(load, at))};
}

// tensorize (schedule/TensorIntrin.h): the loops from the tensorized leaf inwards become one
// intrinsic call; the reads' strides along them and the operands' scopes are checked here.
Stmt NestBuilder::tensorized_nest(int i) {
    const Stage& st = s_.stages()[i];
    const TensorIntrin& in = *find_tensor_intrin(st.tensorize_intrin);
    auto fail = [&](const std::string& why) {
        TESSEL_THROW(ScheduleError)
            << "lower: stage '" << st.name() << "': tensorize with " << in.name << ": " << why
            << "\n  loop nest of '" << st.name() << "':\n"
            << s_.loop_nest_string(i);
    };
    const size_t t = tensorized_leaf(i, in);
    const std::vector<IterVar> axes = tensor_intrin_axes(in);
    std::vector<Var> vars;  // the tensorized loops' variables, in the pattern's axis order
    for (size_t k = 0; k < axes.size(); ++k) vars.push_back(bounds_[i].iter_vars[st.leaf[t + k]]);
    std::vector<MatchedRead> reads;
    std::vector<Expr> bounds;
    std::string why =
        match_tensor_intrin(in, bodies_[i][0], buffers_[i][0].dtype(), &reads, &bounds);
    if (!why.empty()) fail("the body does not match: " + why);
    // An mma has no guard: a bound of its reduction (split-K's last part running past k) holds
    // only where an operand read at that index reads zero past it.
    for (const Expr& b : bounds) {
        const Expr index = simplify(b.as<LT>()->a);
        const int64_t extent = *as_const_int(b.as<LT>()->b);
        bool zero = false;
        for (const MatchedRead& m : reads)
            for (size_t d = 0; d < m.stage->indices.size(); ++d)
                zero = zero || (structural_equal(simplify(m.stage->indices[d]), index) &&
                                internal::reads_zero_past(s_, m.stage, d, extent));
        if (!zero) {
            std::ostringstream os;
            os << "the reduction is guarded by " << b
               << ", which the mma cannot check, and no operand read at that index is a "
                  "fragment of a plain shared copy of a stored tensor that ends there (zero "
                  "past it)";
            fail(os.str());
        }
    }
    auto axis_of = [&](const Expr& e) -> int {
        for (size_t k = 0; k < axes.size(); ++k)
            if (e.same_as(axes[k].var())) return static_cast<int>(k);
        return -1;
    };
    // The leaves' ranges, so that an index the tiles split (B[j / 16, k / 4, j % 16, k % 4])
    // steps by a constant inside a tile.
    Analyzer leaves;
    for (size_t pos = 0; pos < st.leaf.size(); ++pos)
        if (auto e = as_const_int(bounds_[i].iter_extents[st.leaf[pos]]); e && *e > 0)
            leaves.bind(bounds_[i].iter_vars[st.leaf[pos]], 0, *e - 1);
    // How far `e` (in leaf variables) moves from vars[k] to vars[k] + 1 within the tile, where
    // that is a constant.
    auto step_along = [&](const Expr& e, size_t k) {
        Analyzer inside = leaves;
        const int64_t extent = as_const_int(axes[k].dom().extent).value();
        if (extent >= 2) inside.bind(vars[k], 0, extent - 2);
        return as_const_int(inside.simplify(
            substitute(e, vars[k], Add::make(vars[k], make_one(vars[k].type()))) - e));
    };
    // Index `got` (in leaf variables) of `what` must step by 1 along the pattern's axis `want`
    // (-1: none) and stay along the other tensorized loops.
    auto check_index = [&](const Expr& got, int want, const std::string& what) {
        for (size_t k = 0; k < vars.size(); ++k) {
            auto c = step_along(got, k);
            if (!c || *c != (static_cast<int>(k) == want ? 1 : 0))
                fail(what + " moves by " +
                     (c ? std::to_string(*c) : std::string("a varying amount")) + " along loop '" +
                     vars[k].name() + "' (the pattern's " + axes[k].var().name() +
                     "), where the pattern moves by " + (static_cast<int>(k) == want ? "1" : "0"));
        }
    };
    auto check_scope = [&](const Expr& load, bool fragment, StorageScope other) {
        const BufferNode* b = load.as<BufferLoad>()->buffer.get();
        if (fragment && b->scope != StorageScope::Warp)
            fail("'" + b->name + "' is a fragment operand but has " + scope_name(b->scope) +
                 " scope (cache_read/cache_write it with \"warp\")");
        if (!fragment && b->scope == StorageScope::Warp)
            fail("'" + b->name + "' has warp scope but is not a fragment operand");
        if (!fragment && other == StorageScope::Shared && b->scope != StorageScope::Shared)
            fail("'" + b->name +
                 "' must be in shared memory (ldmatrix reads shared memory), "
                 "not " +
                 scope_name(b->scope));
    };
    // The CPU's dot products read memory, not fragments: what matters is how far each operand's
    // storage index moves along the tensorized loops (j, k): C by (1, 0), A by (0, 1) and B by
    // (group, 1), a tile's rows of B contiguous (whatever its logical dimensions, packed or not).
    const bool cpu_dot = in.kind == TensorIntrinKind::CpuDot;
    auto check_storage_steps = [&](const Expr& load, const std::vector<int64_t>& want,
                                   const std::string& what) {
        const auto* l = load.as<BufferLoad>();
        const Expr f = flat_index(l->buffer, l->indices);
        for (size_t k = 0; k < vars.size(); ++k) {
            Analyzer inside = leaves;
            const int64_t extent = as_const_int(axes[k].dom().extent).value();
            if (extent >= 2) inside.bind(vars[k], 0, extent - 2);
            auto c = as_const_int(inside.simplify(
                substitute(f, vars[k], Add::make(vars[k], make_one(vars[k].type()))) - f));
            if (!c || *c != want[k])
                fail(what + " '" + l->buffer->name + "' moves by " +
                     (c ? std::to_string(*c) : std::string("a varying number of")) +
                     " elements along loop '" + vars[k].name() + "' (the pattern's " +
                     axes[k].var().name() + "), where the instruction needs " +
                     std::to_string(want[k]) +
                     (k == 0 && want[0] > 1
                          ? " (pack the operand so that a group of " + std::to_string(want[0]) +
                                " elements is its innermost axis: cache_read, storage_split and "
                                "storage_reorder, or a packed compute stage)"
                          : std::string()));
        }
    };
    // The destination: the stage's own buffer, its last axes the pattern's spatial ones.
    const ComputeOpNode* c = as_compute(st.op);
    const size_t spatial = as_compute(in.pattern.op())->axis.size();
    for (size_t d = 0; d < c->axis.size() && !cpu_dot; ++d) {
        const size_t lead = c->axis.size() - spatial;
        check_index(bounds_[i].root_values[d], d < lead ? -1 : static_cast<int>(d - lead),
                    "the stage's index " + std::to_string(d));
    }
    Expr out = BufferLoad::make(buffers_[i][0], store_indices(i));
    const int64_t group = cpu_dot ? as_const_int(axes[1].dom().extent).value() : 0;
    if (cpu_dot) check_storage_steps(out, {1, 0}, "the destination");
    std::vector<Expr> args = tile(i, out, vars[0]);
    // The reads, in the pattern's order.
    VarMap map;
    for (size_t r = 0; r < c->axis.size(); ++r)
        map[c->axis[r].var().get()] = bounds_[i].read_values[r];
    for (size_t r = 0; r < c->reduce_axis.size(); ++r)
        map[c->reduce_axis[r].var().get()] = bounds_[i].read_values[c->axis.size() + r];
    std::vector<Expr> loads;  // the reads' BufferLoads, in the pattern's order
    for (const MatchedRead& m : reads) {
        Expr read = substitute(Expr(m.stage), map);
        const auto* tr = read.as<TensorRead>();
        const size_t lead = tr->indices.size() - m.pattern->indices.size();
        for (size_t d = 0; d < tr->indices.size() && !cpu_dot; ++d)
            check_index(tr->indices[d], d < lead ? -1 : axis_of(m.pattern->indices[d - lead]),
                        "the read of '" + tr->tensor.name() + "' at index " + std::to_string(d));
        Expr load = lower_expr(i, Expr(m.stage));
        if (!load.as<BufferLoad>())
            fail("the read of '" + tr->tensor.name() +
                 "' may fall outside its producer's "
                 "region (a padded tile); tensor intrinsics read whole tiles");
        if (cpu_dot)  // A (one index: k) is the broadcast group; B's rows are `group` apart
            check_storage_steps(load,
                                m.pattern->indices.size() == 1 ? std::vector<int64_t>{0, 1}
                                                               : std::vector<int64_t>{group, 1},
                                "the read of");
        // (B16x2T fragments by ldmatrix .trans: the tile is stored k-major, its rows along k.)
        const bool rows_k = in.kind == TensorIntrinKind::LdMatrix && in.trans &&
                            in.fragment == FragmentKind::B16x2T;
        std::vector<Expr> pair = tile(i, load, vars[axis_of(m.pattern->indices[rows_k ? 1 : 0])]);
        args.insert(args.end(), pair.begin(), pair.end());
        loads.push_back(load);
    }
    if (in.kind == TensorIntrinKind::CpuDot) return cpu_dot_nest(i, t, in, args);
    const bool store = in.kind == TensorIntrinKind::StoreFragment;
    check_scope(args[0].as<BufferLoad>() ? args[0] : out, !store, StorageScope::Global);
    const bool wgmma = in.kind == TensorIntrinKind::Wgmma;
    for (size_t r = 0; r < reads.size(); ++r)
        check_scope(args[2 + 2 * r], store || in.kind == TensorIntrinKind::Mma,
                    in.kind == TensorIntrinKind::LdMatrix || wgmma ? StorageScope::Shared
                                                                   : StorageScope::Global);
    auto kind = [](FragmentKind k) { return make_const(Int(32), static_cast<int64_t>(k)); };
    Stmt call;
    switch (in.kind) {
        case TensorIntrinKind::Mma: {
            std::vector<Expr> mma = {args[0], args[1], args[2], args[3],
                                     args[4], args[5], args[0], args[1]};
            if (in.trans)  // B read [n][k]
                mma.push_back(
                    kind(in.fragment == FragmentKind::A8 ? FragmentKind::B8T : FragmentKind::B16T));
            call = Evaluate::make(Call::make(Intrinsic::mma_sync, mma));
            break;
        }
        case TensorIntrinKind::LdMatrix:
            args.insert(args.begin(), {kind(in.fragment), make_const(Int(32), in.trans ? 1 : 0)});
            call = Evaluate::make(Call::make(Intrinsic::ldmatrix, args));
            break;
        case TensorIntrinKind::LoadFragment:
            args.insert(args.begin(), kind(in.fragment));
            call = Evaluate::make(Call::make(Intrinsic::fragment_load, args));
            break;
        case TensorIntrinKind::StoreFragment:
            args.insert(args.begin(), kind(in.fragment));
            return loops(i, 0, t, false, edge_store(i, args, vars, axes, step_along, fail));
        case TensorIntrinKind::Wgmma: call = wgmma_call(in, vars, loads, args, fail); break;
        case TensorIntrinKind::CpuDot: break;  // cpu_dot_nest, above
    }
    if (in.kind != TensorIntrinKind::Mma && !wgmma) return loops(i, 0, t, false, call);
    // The reduction's init fills the accumulator fragment with the identity.
    const auto* red = bodies_[i][0].as<Reduce>();
    Stmt fill =
        Evaluate::make(Call::make(Intrinsic::fragment_fill, {kind(FragmentKind::C), args[0],
                                                             args[1], red->combiner->identity[0]}));
    if (wgmma) {  // the warp's 16 x n accumulator: n / 8 C fragments
        std::vector<Stmt> fills;
        const int64_t n = as_const_int(axes[1].dom().extent).value();
        for (int64_t c = 0; c < n; c += 8) {
            VarMap at;
            for (size_t pos = t; pos < st.leaf.size(); ++pos) {
                const Var& v = bounds_[i].iter_vars[st.leaf[pos]];
                at[v.get()] = make_const(v.type(), v.same_as(vars[1]) ? c : 0);
            }
            Expr origin = simplify(substitute(out, at));
            at[vars[0].get()] = make_one(vars[0].type());
            fills.push_back(
                Evaluate::make(Call::make(Intrinsic::fragment_fill, {kind(FragmentKind::C), origin,
                                                                     simplify(substitute(out, at)),
                                                                     red->combiner->identity[0]})));
        }
        fill = Seq::make(fills);
    }
    size_t p = 0;
    while (p < st.leaf.size() && st.iters[st.leaf[p]].kind != IterKind::Reduction) ++p;
    if (t <= p) return loops(i, 0, t, false, Seq::make({fill, call}));
    Stmt init = loops(i, p, t, true, fill);
    Stmt update = loops(i, p, t, false, call);
    return loops(i, 0, p, false, Seq::make({init, update}));
}

// A fragment store (args: kind, D, D', S, S') over the tile's loops `vars` (the intrinsic's
// `axes`) at the stage's guards, which a
// tile at its tensor's edge has: a guard that reads the tile's own loops bounds its rows or its
// columns (`idx < extent`, idx stepping by 1 along one of them), and becomes the store's limit
// there (the least of several: fragment_store's rows and cols); the others guard the call. A tile
// with no element left (past the tensor: its origin would lie outside) stores nothing.
// `step_along(e, k)`: how far e moves along the tile's axis k (tensorized_nest).
Stmt NestBuilder::edge_store(
    int i, std::vector<Expr> args, const std::vector<Var>& vars, const std::vector<IterVar>& axes,
    const std::function<std::optional<int64_t>(const Expr&, size_t)>& step_along,
    const std::function<void(const std::string&)>& fail) {
    VarMap origin;  // the tile's loops at 0
    for (const Var& v : vars) origin[v.get()] = make_zero(v.type());
    Expr limit[2];
    std::vector<Expr> outer;
    for (const StageGuard& g : bounds_[i].guards) {
        bool inside = false;
        for (const Var& v : vars) inside = inside || uses_var(g.condition, v);
        if (!inside) {  // (two splits of one axis may leave the same guard)
            bool known = false;
            for (const Expr& o : outer) known = known || structural_equal(o, g.condition);
            if (!known) outer.push_back(g.condition);
            continue;
        }
        Expr past;  // past < 0 on the points the guard keeps
        if (const auto* lt = g.condition.as<LT>()) past = lt->a - lt->b;
        if (const auto* le = g.condition.as<LE>()) past = le->a - le->b - make_one(le->a.type());
        int axis = -1;
        for (size_t k = 0; past.defined() && k < 2; ++k) {
            auto step = step_along(past, k);
            if (step && *step == 1 && axis < 0)
                axis = static_cast<int>(k);
            else if (!step || *step != 0)
                past = Expr();
        }
        if (!past.defined() || axis < 0)
            fail("its guard " + to_string(g.condition) +
                 " is not a bound of the tile's rows or columns (a fragment store stops at its "
                 "tensor's edge only)");
        Expr left = cast(Int(32), simplify(make_zero(past.type()) - substitute(past, origin)));
        limit[axis] = limit[axis].defined() ? simplify(Min::make(limit[axis], left)) : left;
    }
    Stmt call;
    if (limit[0].defined() || limit[1].defined()) {
        for (int k : {0, 1})
            args.push_back(limit[k].defined() ? limit[k] : cast(Int(32), axes[k].dom().extent));
        Expr some =
            And::make(GT::make(args[5], make_zero(Int(32))), GT::make(args[6], make_zero(Int(32))));
        call = IfThenElse::make(Call::make(Intrinsic::likely, {some}),
                                Evaluate::make(Call::make(Intrinsic::fragment_store, args)));
    } else {
        call = Evaluate::make(Call::make(Intrinsic::fragment_store, args));
    }
    for (size_t g = outer.size(); g-- > 0;)
        call = IfThenElse::make(Call::make(Intrinsic::likely, {outer[g]}), call);
    return call;
}

// wgmma (ir/IR.h) for the tensorized loops `vars` (i, j, k): `args` are the tile operands of the
// accumulator, A and B (origin, next row), `loads` A's and B's reads. The shared operands must be
// laid out as the instruction reads them through its matrix descriptors: rows of the swizzle's
// width (32, 64 or 128 bytes, storage_swizzle's pattern then the hardware's), k-major A, B k-major
// or n-major in panels of one row's width (storage_split and storage_reorder: [n / w][k][w]),
// each checked element by element here. A [k][n] B (the plain intrinsics) is n-major; a B read
// [n][k] (the _bt ones) is k-major unless its storage puts consecutive n next to each other (an
// HWIO weight's gather): the call's transpose flag says which.
Stmt NestBuilder::wgmma_call(const TensorIntrin& in, const std::vector<Var>& vars,
                             const std::vector<Expr>& loads, const std::vector<Expr>& args,
                             const std::function<void(const std::string&)>& fail) {
    const int64_t n = as_const_int(tensor_intrin_axes(in)[1].dom().extent).value();
    const Var &vi = vars[0], &vj = vars[1], &vk = vars[2];
    // The tensorized loops' values at (i, j, k).
    auto point = [&](int64_t i, int64_t j, int64_t k) {
        return VarMap{{vi.get(), make_const(vi.type(), i)},
                      {vj.get(), make_const(vj.type(), j)},
                      {vk.get(), make_const(vk.type(), k)}};
    };
    // The unswizzled storage offset of the operand's element at (i, j, k) from its origin.
    auto offset = [&](const Expr& load, int64_t i, int64_t j, int64_t k) -> std::optional<int64_t> {
        const auto* l = load.as<BufferLoad>();
        const Expr f = unswizzled_flat_index(l->buffer, l->indices);
        return as_const_int(
            simplify(substitute(f, point(i, j, k)) - substitute(f, point(0, 0, 0))));
    };
    // The operand's row width w (its storage step along `row`): the swizzle's, 32 to 128 bytes.
    auto row_width = [&](const Expr& load, const char* what, int64_t i, int64_t j, int64_t k) {
        const BufferNode* b = load.as<BufferLoad>()->buffer.get();
        const int64_t e = b->dtype.bytes();
        const std::optional<int64_t> w = offset(load, i, j, k);
        const BufferSwizzle& z = b->swizzle;
        if (!w || !z.defined() || z.vector * e != 16 || z.span * e != 128 ||
            z.phases * 16 != *w * e)
            fail(std::string(what) + " '" + b->name +
                 "' is not laid out as wgmma reads shared memory: its rows must be 32, 64 or "
                 "128 bytes wide, swizzled with storage_swizzle() (bits 3), each row one " +
                 (what[0] == 'A' ? "row of A (k-major)"
                                 : "k of B ([k][n] in panels of one row: storage_split and "
                                   "storage_reorder to [n / w][k][w]) or one n ([n][k], the _bt "
                                   "intrinsics)"));
        return *w;
    };
    // A: k-major, rows of width w_a; each of the warp's 16 rows w_a apart, k contiguous.
    const int64_t wa = row_width(loads[0], "A", 1, 0, 0);
    // B's storage is n-major where its next column is the next element: a [k][n] B (the plain
    // intrinsics) in panels, or a B read [n][k] (the _bt ones) whose tile is stored so (an HWIO
    // weight's gather, copied along n). Otherwise k-major.
    const bool mn = !in.trans || offset(loads[1], 0, 1, 0) == std::optional<int64_t>(1);
    const int64_t wb = mn ? row_width(loads[1], "B", 0, 0, 1) : row_width(loads[1], "B", 0, 1, 0);
    auto expect = [&](const Expr& load, const char* what, int64_t i, int64_t j, int64_t k,
                      int64_t want) {
        std::optional<int64_t> got = offset(load, i, j, k);
        if (!got || *got != want)
            fail(std::string(what) + " '" + load.as<BufferLoad>()->buffer->name +
                 "': its element (" + std::to_string(i) + ", " + std::to_string(j) + ", " +
                 std::to_string(k) + ") is " +
                 (got ? std::to_string(*got) : std::string("a varying number of")) +
                 " elements from the tile's origin where wgmma reads element " +
                 std::to_string(want));
    };
    for (int64_t r = 0; r < 16; ++r)
        for (int64_t k = 0; k < 16; ++k) expect(loads[0], "A", r, 0, k, r * wa + k);
    int64_t panel = 0;  // B's panel stride (n-major B wider than a row)
    if (mn && n > wb) {
        panel = offset(loads[1], 0, wb, 0).value_or(-1);
        if (panel < 16 * wb)
            fail("B '" + loads[1].as<BufferLoad>()->buffer->name + "' is n-major with rows of " +
                 std::to_string(wb) +
                 " elements, narrower than the instruction's n = " + std::to_string(n) +
                 ", but its next panel of columns does not follow the tile's 16 rows");
    }
    for (int64_t j = 0; j < n; ++j)
        for (int64_t k = 0; k < 16; ++k)
            expect(loads[1], "B", 0, j, k, mn ? (j / wb) * panel + j % wb + k * wb : j * wb + k);
    auto b_at = [&](int64_t j, int64_t k) {
        return simplify(substitute(loads[1], point(0, j, k)));
    };
    // Bp: B's element at column wb (its next panel), or B itself. B's next row is its next k
    // where it is n-major (the _bt intrinsics' operand names the next n).
    const Expr bp = panel > 0 ? b_at(wb, 0) : args[4];
    const Expr b_row = mn && in.trans ? b_at(0, 1) : args[5];
    return Evaluate::make(
        Call::make(Intrinsic::wgmma, {args[0], args[1], args[2], args[3], args[4], b_row, bp,
                                      make_const(Int(32), n), make_const(Int(32), mn ? 1 : 0)}));
}

// dot_product (ir/IR.h) for the tensorized loops from leaf t: `args` are the tile operands of
// the destination, A and B (origin, next row), their storage steps checked (tensorized_nest).
// The reduction's init is the stage's own, plain stores.
Stmt NestBuilder::cpu_dot_nest(int i, size_t t, const TensorIntrin& in,
                               const std::vector<Expr>& args) {
    const Stage& st = s_.stages()[i];
    const std::vector<IterVar> axes = tensor_intrin_axes(in);
    const int64_t lanes = as_const_int(axes[0].dom().extent).value();
    const int64_t group = as_const_int(axes[1].dom().extent).value();
    Stmt call = Evaluate::make(
        Call::make(Intrinsic::dot_product, {make_const(Int(32), lanes), make_const(Int(32), group),
                                            args[0], args[2], args[4], args[5]}));
    size_t p = 0;
    while (p < st.leaf.size() && st.iters[st.leaf[p]].kind != IterKind::Reduction) ++p;
    const size_t n = st.leaf.size();
    if (t <= p) return loops(i, 0, t, false, Seq::make({loops(i, t, n, true, init_stmt(i)), call}));
    Stmt init = loops(i, p, n, true, init_stmt(i));
    Stmt update = loops(i, p, t, false, call);
    return loops(i, 0, p, false, Seq::make({init, update}));
}

// A tma() stage's fetch: its nest as it is (one loop an axis around the copy), which
// inject_double_buffer turns into bulk tensor copies; the loops must be the stage's own.
Stmt NestBuilder::tma_nest(int i) {
    const Stage& st = s_.stages()[i];
    auto fail = [&](const std::string& why) {
        internal::schedule_fail(
            s_, "tma", i, why + "\n  loop nest of '" + st.name() + "':\n" + s_.loop_nest_string(i));
    };
    if (!st.relations.empty())
        fail(
            "its loops are split or fused; a TMA copy moves the whole tile from one thread: "
            "leave the stage's loops as they are");
    for (int id : st.leaf)
        if (st.iters[id].annotation != IterAnnotation::None)
            fail(std::string("its loop '") + st.iters[id].name + "' is annotated (" +
                 annotation_name(st.iters[id].annotation) +
                 "); a TMA copy is issued by one thread: leave the stage's loops as they are");
    return stage_nest(i);
}

Stmt NestBuilder::stage_nest(int i) {
    const Stage& st = s_.stages()[i];
    size_t n = st.leaf.size();
    Stmt nest;
    if (st.tensorize_iter >= 0) {
        nest = tensorized_nest(i);
    } else if (bodies_[i][0].as<Reduce>() && is_cross_thread(st)) {
        size_t p = 0;
        while (p < n && st.iters[st.leaf[p]].kind != IterKind::Reduction) ++p;
        nest = loops(i, 0, p, false, cross_thread_nest(i, p));
    } else if (bodies_[i][0].as<Reduce>()) {
        size_t p = 0;
        while (p < n && st.iters[st.leaf[p]].kind != IterKind::Reduction) ++p;
        Stmt init = loops(i, p, n, true, guarded(i, true, init_stmt(i)));
        Stmt update = loops(i, p, n, false, guarded(i, false, update_stmt(i)));
        nest = loops(i, 0, p, false, Seq::make({init, update}));
    } else {
        std::vector<Stmt> stores;
        std::vector<Expr> idx = store_indices(i);
        for (size_t v = 0; v < bodies_[i].size(); ++v)
            stores.push_back(BufferStore::make(buffers_[i][v], lower_expr(i, bodies_[i][v]), idx));
        nest = loops(i, 0, n, false, guarded(i, false, Seq::make(stores)));
    }
    if (st.auto_unroll_max_step > 0)
        nest = AttrStmt::make("pragma_auto_unroll_max_step",
                              make_const(Int(32), st.auto_unroll_max_step), nest);
    return nest;
}

LoweredFunc NestBuilder::build(const std::string& name) {
    // The kernel computes every root stage but the pre-transformed ones; the pre-transform
    // function those alone.
    const bool want = part_ == SchedulePart::PreTransform;
    auto emitted = [&](const Stage& st) {
        return as_compute(st.op) && st.attach == AttachKind::Root && st.pre_transform == want;
    };
    std::vector<Stmt> nests;
    for (size_t i = 0; i < s_.stages().size(); ++i) {
        const Stage& st = s_.stages()[i];
        if (!emitted(st)) continue;
        nests.push_back(stage_nest(static_cast<int>(i)));
    }
    Stmt body = Seq::make(nests);
    // The root stages' buffers, and those of the whole tensors computed inside them
    // (reverse_compute_at) when they are not arguments.
    for (size_t i = s_.stages().size(); i-- > 0;) {
        const Stage& st = s_.stages()[i];
        if (emitted(st) || (whole_tensor(st) && !want)) body = allocate(static_cast<int>(i), body);
    }
    for (const Buffer& c : counters_)
        body = Allocate::make(c->data, c.dtype(), c.shape(), c->scope,
                              AttrStmt::make("zeroed_workspace", c->data, body));
    return LoweredFunc{name, arg_buffers_, body};
}

}  // namespace

namespace {

// A kernel whose warps run tensor intrinsics but whose stages bind no loop to threadIdx.x (its
// copies are TMA's, issued by one thread) still has 32 lanes a warp: a threadIdx.x loop of 32
// inside the innermost blockIdx loop, around the block's body.
class BindLanes : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const For* op) override {
        if (op->kind != ForKind::ThreadBound) return IRMutator::visit(op);
        if (op->thread_tag.rfind("threadIdx.", 0) == 0) {  // a block without blockIdx loops
            return needs_lanes(Stmt(op))
                       ? For::make(Var("lane", Int(32)), make_zero(Int(32)),
                                   make_const(Int(32), 32), ForKind::ThreadBound, op, "threadIdx.x")
                       : op;
        }
        if (op->thread_tag.rfind("blockIdx.", 0) != 0) return IRMutator::visit(op);
        bool inner_block = false;
        post_order_visit(op->body, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::For)
                inner_block = inner_block ||
                              static_cast<const For*>(n)->thread_tag.rfind("blockIdx.", 0) == 0;
        });
        if (inner_block) return IRMutator::visit(op);
        if (!needs_lanes(op->body)) return op;
        Stmt body = For::make(Var("lane", Int(32)), make_zero(Int(32)), make_const(Int(32), 32),
                              ForKind::ThreadBound, op->body, "threadIdx.x");
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    }

private:
    /// Whether the block's body runs tensor intrinsics and binds no loop to threadIdx.x.
    static bool needs_lanes(const Stmt& body) {
        bool lanes = false, warp = false;
        post_order_visit(body, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::For)
                lanes = lanes || static_cast<const For*>(n)->thread_tag == "threadIdx.x";
            else if (n->node_type == IRNodeType::Call)
                warp = warp || is_tensor_core_intrinsic(static_cast<const Call*>(n)->op);
        });
        return warp && !lanes;
    }
};

}  // namespace

LoweredFunc schedule_ops(const Schedule& s, const std::vector<Tensor>& args,
                         const std::string& name, std::vector<StageBounds> bounds,
                         SchedulePart part, bool skip_padding_taps) {
    if (bounds.empty()) bounds = infer_bounds(s);
    LoweredFunc f = NestBuilder(s, args, std::move(bounds), part, skip_padding_taps).build(name);
    f.body = BindLanes().mutate(f.body);
    return f;
}

}  // namespace tessel
