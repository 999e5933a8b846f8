// The loop-IR interpreter: statements, and the entry points run_lowered and run_stmt.
#include "tessel/lower/LoopInterpreter.h"

#include <optional>
#include <sstream>

#include "LoopInterpreterImpl.h"
#include "tessel/ir/IRPrinter.h"

namespace tessel {

namespace internal {

namespace {

/// Binds a variable for the lifetime of the object and restores what was there before (loops and
/// lets may reuse a variable that an outer scope binds).
class ScopedBinding {
public:
    ScopedBinding(ExprEvaluator& ev, const Var& v) : ev_(ev), var_(v) {
        if (const Value* old = ev.lookup(v.get())) saved_ = *old;
    }
    ~ScopedBinding() {
        if (saved_) {
            ev_.bind(var_, std::move(*saved_));
        } else {
            ev_.unbind(var_);
        }
    }
    ScopedBinding(const ScopedBinding&) = delete;
    ScopedBinding& operator=(const ScopedBinding&) = delete;

private:
    ExprEvaluator& ev_;
    const Var& var_;
    std::optional<Value> saved_;
};

/// Allocations larger than this many elements are refused (a broken extent, not a real kernel).
constexpr int64_t kMaxAllocationElements = int64_t(1) << 31;

}  // namespace

LoopInterpreter::LoopInterpreter(const LoopInterpreterOptions& options)
    : options_(options), eval_(FloatMode::Exact) {
    ExprEvalCallbacks& cb = eval_.callbacks();
    cb.load = [this](const Load* op, const Value& index, const Value& mask) {
        return load(op, index, mask);
    };
    cb.buffer_load = [this](const BufferLoad* op, const std::vector<Value>& idx, const Value& m) {
        return buffer_load(op, idx, m);
    };
}

int64_t LoopInterpreter::eval_int(const Expr& e, const char* what) {
    Value v = eval_.eval(e);
    if (v.lane_count() != 1 || !(v.type.is_int_or_uint() || v.type.is_bool()))
        TESSEL_THROW(RuntimeError)
            << what << " is a " << v.type << ", not a scalar integer" << loop_context();
    return v.as_int();
}

void LoopInterpreter::count_step() {
    if (++steps_ > options_.max_steps)
        TESSEL_THROW(RuntimeError) << "loop interpreter: step budget exceeded ("
                                   << options_.max_steps << " statements)" << loop_context();
}

void LoopInterpreter::exec(const Stmt& s) {
    count_step();
    switch (s.node_type()) {
        case IRNodeType::LetStmt: return exec_let(s.as<LetStmt>());
        case IRNodeType::AttrStmt: return exec(s.as<AttrStmt>()->body);
        case IRNodeType::AssertStmt: return exec_assert(s.as<AssertStmt>());
        case IRNodeType::For: return exec_for(s.as<For>());
        case IRNodeType::Store: return exec_store(s.as<Store>());
        case IRNodeType::BufferStore: return exec_buffer_store(s.as<BufferStore>());
        case IRNodeType::Allocate: return exec_allocate(s.as<Allocate>());
        case IRNodeType::Seq:
            for (const Stmt& c : s.as<Seq>()->stmts) exec(c);
            return;
        case IRNodeType::IfThenElse: return exec_if(s.as<IfThenElse>());
        case IRNodeType::Evaluate: return exec_evaluate(s.as<Evaluate>());
        default: break;
    }
    TESSEL_CHECK(false) << "loop interpreter: " << node_type_name(s.node_type())
                        << " is not a statement";
}

void LoopInterpreter::exec_for(const For* op) {
    const int64_t min = eval_int(op->min, "loop minimum");
    const int64_t extent = eval_int(op->extent, "loop extent");
    switch (op->kind) {
        case ForKind::Parallel:
            if (options_.check_parallel_races) return exec_parallel(op, min, extent);
            return exec_serial(op, min, extent, nullptr);
        case ForKind::ThreadBound: return exec_thread_bound(op, min, extent);
        default: return exec_serial(op, min, extent, nullptr);
    }
}

void LoopInterpreter::exec_serial(const For* op, int64_t min, int64_t extent, ParallelFrame* par) {
    if (extent <= 0) return;
    ScopedBinding scope(eval_, op->loop_var);
    const Type t = op->loop_var.type();
    loops_.push_back({op->loop_var.get(), min});
    Value v = Value::make_int(t, min);
    for (int64_t k = 0; k < extent; ++k) {
        const int64_t x = wrap_to_int_type(min + k, t);
        loops_.back().value = x;
        if (par) par->iteration = k;
        v.lanes[0].i = x;
        eval_.bind(op->loop_var, v);
        exec(op->body);
    }
    loops_.pop_back();
}

void LoopInterpreter::exec_parallel(const For* op, int64_t min, int64_t extent) {
    auto frame = std::make_unique<ParallelFrame>();
    frame->loop = op;
    frame->first_private_serial = next_serial_;
    ParallelFrame* par = frame.get();
    parallel_.push_back(std::move(frame));
    exec_serial(op, min, extent, par);
    parallel_.pop_back();
}

void LoopInterpreter::exec_let(const LetStmt* op) {
    Value v = eval_.eval(op->value);
    ScopedBinding scope(eval_, op->var);
    eval_.bind(op->var, std::move(v));
    exec(op->body);
}

void LoopInterpreter::exec_assert(const AssertStmt* op) {
    if (eval_int(op->condition, "assert condition") == 0)
        TESSEL_THROW(RuntimeError) << op->message << loop_context();
}

void LoopInterpreter::exec_if(const IfThenElse* op) {
    if (eval_int(op->condition, "if condition") != 0) {
        exec(op->then_case);
    } else if (op->else_case.defined()) {
        exec(op->else_case);
    }
}

void LoopInterpreter::exec_evaluate(const Evaluate* op) {
    const Call* c = op->value.as<Call>();
    if (c && c->op == Intrinsic::thread_barrier) return exec_barrier();
    if (c && c->op == Intrinsic::thread_allreduce) return exec_allreduce(c);
    if (c && c->op == Intrinsic::tile_arrive) return exec_tile_arrive(c);
    if (c && c->op == Intrinsic::cp_async) return exec_cp_async(c);
    if (c && (c->op == Intrinsic::mbarrier_init || c->op == Intrinsic::mbarrier_expect_tx ||
              c->op == Intrinsic::mbarrier_wait || c->op == Intrinsic::mbarrier_arrive))
        return exec_mbarrier(c);
    if (c && c->op == Intrinsic::setmaxnreg) return;  // registers are not modelled
    if (c && c->op == Intrinsic::tma_load) return exec_tma_load(c);
    if (c && c->op == Intrinsic::tma_store) return exec_tma_store(c);
    if (c && c->op == Intrinsic::tma_store_wait) return exec_tma_store_wait();
    if (c && c->op == Intrinsic::cp_async_commit) {
        committed_copies_.push_back(std::move(open_copies_));
        open_copies_.clear();
        return;
    }
    if (c && c->op == Intrinsic::cp_async_wait)
        return exec_cp_async_wait(as_const_int(c->args[0]).value());
    if (c && is_tensor_core_intrinsic(c->op)) return exec_tensor_core(c);
    if (c && c->op == Intrinsic::dot_product) return exec_dot_product(c);
    if (c && c->op == Intrinsic::fence_proxy_async) {  // this thread's stores: visible to wgmma
        if (spmd_ && spmd_->wgmma->active) {
            auto& unfenced = spmd_->wgmma->unfenced;
            for (uint64_t key : unfenced_mine_)
                if (auto it = unfenced.find(key); it != unfenced.end() && it->second == spmd_)
                    unfenced.erase(it);
        }
        unfenced_mine_.clear();
        return;
    }
    eval_.eval(op->value);
}

void LoopInterpreter::exec_allocate(const Allocate* op) {
    const AttrStmt* z = op->body.as<AttrStmt>();
    const bool zeroed = z && z->key == "zeroed_workspace" && z->value.same_as(op->buffer_var);
    const std::string& name = op->buffer_var.name();
    int64_t size = op->dtype.lanes;
    for (size_t d = 0; d < op->extents.size(); ++d) {
        const int64_t n = eval_int(op->extents[d], "allocation extent");
        if (n <= 0)
            TESSEL_THROW(RuntimeError) << "allocate " << name << ": extent " << d << " is " << n
                                       << ", must be positive" << loop_context();
        if (n > kMaxAllocationElements / size)
            TESSEL_THROW(RuntimeError) << "allocate " << name << ": more than "
                                       << kMaxAllocationElements << " elements" << loop_context();
        size *= n;
    }
    std::unique_ptr<InterpStorage> storage;
    InterpStorage* mine = nullptr;
    if (spmd_ && op->scope == StorageScope::Shared) {
        mine = shared_storage(op, size);
    } else {
        if (op->scope == StorageScope::Warp) {  // each lane holds 1/32 (ir/Fragment.h)
            if (size % 32)
                TESSEL_THROW(RuntimeError)
                    << "allocate " << name << ": a warp buffer of " << size
                    << " elements (a multiple of 32 expected)" << loop_context();
            size /= 32;
        }
        storage = std::make_unique<InterpStorage>();
        storage->owned = std::make_unique<HostArray>(op->dtype.element_of(), std::vector{size});
        storage->array = storage->owned.get();
        storage->name = name;
        storage->serial = next_serial_++;
        storage->warp = op->scope == StorageScope::Warp;
        if (zeroed)
            for (int64_t i = 0; i < size; ++i) storage->array->set(i, 0.0);
        mine = storage.get();
    }
    BufferSlot& slot = slot_of(op->buffer_var.get());
    InterpStorage* outer = slot.storage;
    slot.storage = mine;
    exec(op->body);
    slot.storage = outer;
    // tile_arrive's counters end at zero: a tile whose counter did not had fewer arrivals than
    // counted, and nothing computed it.
    for (int64_t i = 0; zeroed && storage && i < size; ++i)
        if (storage->array->get(i) != 0)
            TESSEL_THROW(RuntimeError)
                << "tile_arrive's counter " << name << " of tile " << i << " ends at "
                << storage->array->get(i) << ", not zero: the tile had fewer arrivals than counted"
                << loop_context();
}

void LoopInterpreter::exec_store(const Store* op) {
    const Value value = eval_.eval(op->value);
    const Value index = eval_.eval(op->index);
    std::optional<Value> pred;
    if (op->predicate.defined()) pred = eval_.eval(op->predicate);
    const Type elem = value.type.element_of();
    InterpStorage& s = storage_for(op->buffer_var.get(), elem, "store to");
    const int lanes = value.lane_count();
    const int64_t size = s.array->size();
    for (int l = 0; l < lanes; ++l) {
        if (pred && pred->lanes[l].i == 0) continue;
        const int64_t i = index.lanes[l].i;
        if (i < 0 || i >= size) flat_out_of_bounds("store to", s, i, l, lanes);
        write_element(s, elem, i, value.lanes[l]);
    }
}

void LoopInterpreter::exec_buffer_store(const BufferStore* op) {
    const Value value = eval_.eval(op->value);
    std::vector<Value> idx;
    idx.reserve(op->indices.size());
    for (const Expr& i : op->indices) idx.push_back(eval_.eval(i));
    const BufferNode* b = op->buffer.get();
    const Type elem = b->dtype.element_of();
    InterpStorage& s = storage_for(b->data.get(), elem, "store to");
    for (int l = 0; l < value.lane_count(); ++l)
        write_element(s, elem, buffer_offset(b, s, idx, l, "store to"), value.lanes[l]);
}

}  // namespace internal

namespace {

/// "float32[64, n]": what a buffer argument expects (extents that are not constants printed as
/// expressions, so that an unbound variable cannot fail the message itself).
std::string describe_buffer(const Buffer& b) {
    std::ostringstream os;
    os << b.dtype() << "[";
    for (size_t d = 0; d < b.shape().size(); ++d) os << (d ? ", " : "") << b.shape()[d];
    os << "]";
    return os.str();
}

/// Checks the arguments of run_lowered against the function's buffers (see the header) and
/// binds plain-variable extents to the arrays' extents.
void check_and_bind_args(const LoweredFunc& f, const std::vector<HostArray*>& args,
                         internal::LoopInterpreter& interp) {
    if (args.size() != f.args.size())
        TESSEL_THROW(RuntimeError) << "run_lowered '" << f.name << "': expected " << f.args.size()
                                   << " arguments, got " << args.size();
    for (size_t k = 0; k < args.size(); ++k) {
        const Buffer& b = f.args[k];
        std::ostringstream what;
        what << "run_lowered '" << f.name << "': argument " << k << " ('" << b.name() << "')";
        HostArray* a = args[k];
        if (!a) TESSEL_THROW(RuntimeError) << what.str() << " is null";
        if (a->storage() != ArrayStorage::Native)
            TESSEL_THROW(RuntimeError)
                << what.str() << " must be a Native array, got " << a->describe();
        bool ok = a->dtype() == b.dtype() && a->ndim() == b.shape().size();
        for (size_t d = 0; ok && d < b.shape().size(); ++d) {
            const Expr& e = b.shape()[d];
            const Variable* v = e.as<Variable>();
            if (v && !interp.evaluator().lookup(v)) {
                interp.bind_scalar(Var(v), Value::make_int(v->type, a->shape()[d]));
                continue;
            }
            ok = interp.eval_int(e, "buffer extent") == a->shape()[d];
        }
        if (!ok)
            TESSEL_THROW(RuntimeError)
                << what.str() << ": expected " << describe_buffer(b) << ", got " << a->describe();
        interp.bind_buffer(b->data, a, b.name());
    }
}

}  // namespace

void run_lowered(const LoweredFunc& f, const std::vector<HostArray*>& args,
                 const LoopInterpreterOptions& options) {
    internal::LoopInterpreter interp(options);
    check_and_bind_args(f, args, interp);
    TESSEL_CHECK(f.body.defined()) << "run_lowered '" << f.name << "': no body";
    interp.run(f.body);
}

void run_stmt(const Stmt& stmt, const std::vector<std::pair<Var, HostArray*>>& buffers,
              const std::vector<std::pair<Var, Value>>& scalars,
              const LoopInterpreterOptions& options) {
    internal::LoopInterpreter interp(options);
    for (const auto& [v, a] : buffers) {
        if (!a || a->storage() != ArrayStorage::Native)
            TESSEL_THROW(RuntimeError)
                << "run_stmt: buffer " << v.name() << " must be bound to a Native array";
        interp.bind_buffer(v, a, v.name());
    }
    for (const auto& [v, value] : scalars) interp.bind_scalar(v, value);
    interp.run(stmt);
}

}  // namespace tessel
