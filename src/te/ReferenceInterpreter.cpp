// The reference interpreter: compiles each compute body once into closures over variable slots,
// then runs it over the operation's domain. The lane-wise semantics come from ir/ExprEval.h, so
// this file and the general evaluator cannot disagree on what a node means.
#include "tessel/te/ReferenceInterpreter.h"

#include <functional>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "tessel/ir/ExprEval.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

constexpr FloatMode kMode = FloatMode::Ideal;

/// The values of one operation's variables while it runs: axis, reduce, combiner and Let
/// variables each own a slot. Loop level L (0: the data-parallel axes, 1..R: the reduce axes,
/// R + 1: the combiner's operands) gets a fresh `stamp[L]` whenever its variables change, so a
/// cached subexpression that depends on levels <= L stays valid while stamp[L] does.
struct Frame {
    std::vector<Scalar> slots;
    std::vector<uint64_t> stamp;
    uint64_t clock = 0;
    void advance(size_t level) { stamp[level] = ++clock; }
};

using Thunk = std::function<Scalar(Frame&)>;

/// The arrays computed (or given) so far, by producing operation and output index.
using TensorStore = std::unordered_map<const OperationNode*, std::vector<HostArray>>;

Scalar read_element(const HostArray& a, int64_t flat) {
    Scalar s;
    if (a.dtype().is_float()) {
        s.f = a.get(flat);
    } else {
        s.i = a.get_int(flat);
    }
    return s;
}

void write_element(HostArray& a, int64_t flat, Scalar s) {
    if (a.dtype().is_float()) {
        a.set(flat, s.f);
    } else {
        a.set_int(flat, s.i);
    }
}

/// Compiles the expressions of one compute operation into closures.
class BodyCompiler {
public:
    BodyCompiler(std::string op_name, const TensorStore& store, const ExprEvaluator& constants)
        : op_name_(std::move(op_name)), store_(store), constants_(constants) {}

    /// The slot of `v`, allocated on first use.
    int slot_of(const Var& v) {
        auto it = slots_.find(v.get());
        if (it != slots_.end()) return it->second;
        int s = next_slot_++;
        slots_.emplace(v.get(), s);
        return s;
    }
    int num_slots() const { return next_slot_; }
    /// Declares the loop level of a variable (see Frame); `innermost` is the level at which the
    /// expressions about to be compiled are evaluated most often.
    void set_level(const Var& v, int level) { level_[v.get()] = level; }
    void set_innermost(int level) { innermost_ = level; }
    /// Counts how often each node occurs in `e` (shared subtrees are compiled once and cached).
    void count_uses(const Expr& e);

    /// Compiles `e`. A subexpression that occurs more than once, or that depends only on outer
    /// loop levels, is evaluated once per change of the levels it depends on (hoisting and CSE).
    Thunk compile(const Expr& e);

private:
    Thunk compile_uncached(const Expr& e);
    /// The deepest loop level of the variables `e` uses (-1 for none).
    int level_of(const Expr& e) const;
    [[noreturn]] void unsupported(const Expr& e, const char* why) const {
        TESSEL_THROW(RuntimeError)
            << "reference interpreter: compute '" << op_name_ << "' contains a "
            << node_type_name(e.node_type()) << " (" << why << ")";
    }
    Thunk compile_variable(const Variable* v);
    Thunk compile_binary(IRNodeType op, const Expr& a, const Expr& b);
    Thunk compile_call(const Call* c);
    Thunk compile_read(const TensorRead* r);
    Thunk compile_let(const Let* l);

    std::string op_name_;
    const TensorStore& store_;
    const ExprEvaluator& constants_;
    std::unordered_map<const Variable*, int> slots_;
    int next_slot_ = 0;
    std::unordered_map<const Variable*, int> level_;
    std::unordered_map<const IRNode*, int> uses_;
    std::unordered_map<const IRNode*, Thunk> memo_;
    int innermost_ = 0;
    int let_depth_ = 0;  ///< inside a Let body a node's meaning depends on the binding: no memo
};

void BodyCompiler::count_uses(const Expr& e) {
    if (!e.defined() || uses_[e.get()]++ > 0) return;
    struct Children : IRVisitor {
        BodyCompiler* self;
        using IRVisitor::visit;
        void visit(const Expr& c) override { self->count_uses(c); }
    } children;
    children.self = this;
    children.IRVisitor::visit(e);  // dispatches to the node's children, each through count_uses
}

int BodyCompiler::level_of(const Expr& e) const {
    int level = -1;
    post_order_visit(e, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Variable) return;
        auto it = level_.find(static_cast<const Variable*>(n));
        level = std::max(level, it == level_.end() ? -1 : it->second);
    });
    return level;
}

Thunk BodyCompiler::compile(const Expr& e) {
    IRNodeType t = e.node_type();
    if (t == IRNodeType::Variable || t == IRNodeType::IntImm || t == IRNodeType::UIntImm ||
        t == IRNodeType::FloatImm)
        return compile_uncached(e);
    if (let_depth_ == 0) {
        auto it = memo_.find(e.get());
        if (it != memo_.end()) return it->second;
    }
    Thunk inner = compile_uncached(e);
    const int level = std::max(level_of(e), 0);
    const bool shared = uses_[e.get()] > 1 && let_depth_ == 0;
    if (!shared && level >= innermost_) return inner;
    struct Cache {
        uint64_t stamp = 0;
        Scalar value{};
    };
    auto cache = std::make_shared<Cache>();
    Thunk cached = [inner, cache, level](Frame& f) {
        if (cache->stamp == f.stamp[level]) return cache->value;
        cache->value = inner(f);
        cache->stamp = f.stamp[level];
        return cache->value;
    };
    if (let_depth_ == 0) memo_.emplace(e.get(), cached);
    return cached;
}

Thunk BodyCompiler::compile_uncached(const Expr& e) {
    if (e.type().is_vector()) unsupported(e, "vector expressions only appear after scheduling");
    switch (e.node_type()) {
        case IRNodeType::IntImm:
        case IRNodeType::UIntImm:
        case IRNodeType::FloatImm: {
            Scalar s = evaluate_expr(e).lanes[0];
            return [s](Frame&) { return s; };
        }
        case IRNodeType::Variable: return compile_variable(e.as<Variable>());
        case IRNodeType::Cast: {
            Type to = e.type(), from = e.as<Cast>()->value.type();
            Thunk v = compile(e.as<Cast>()->value);
            return [=](Frame& f) { return eval_cast_lane(to, from, v(f), kMode); };
        }
#define TESSEL_COMPILE_BINARY(T) \
    case IRNodeType::T: return compile_binary(IRNodeType::T, e.as<T>()->a, e.as<T>()->b);
            TESSEL_COMPILE_BINARY(Add)
            TESSEL_COMPILE_BINARY(Sub)
            TESSEL_COMPILE_BINARY(Mul) TESSEL_COMPILE_BINARY(Div) TESSEL_COMPILE_BINARY(Mod)
                TESSEL_COMPILE_BINARY(FloorDiv) TESSEL_COMPILE_BINARY(FloorMod)
                    TESSEL_COMPILE_BINARY(Min) TESSEL_COMPILE_BINARY(Max) TESSEL_COMPILE_BINARY(EQ)
                        TESSEL_COMPILE_BINARY(NE) TESSEL_COMPILE_BINARY(LT)
                            TESSEL_COMPILE_BINARY(LE) TESSEL_COMPILE_BINARY(GT)
                                TESSEL_COMPILE_BINARY(GE) TESSEL_COMPILE_BINARY(And)
                                    TESSEL_COMPILE_BINARY(Or)
#undef TESSEL_COMPILE_BINARY
                                        case IRNodeType::Not : {
                Thunk a = compile(e.as<Not>()->a);
                return [=](Frame& f) { return Scalar{.i = a(f).i == 0}; };
            }
        case IRNodeType::Select: {
            const auto* s = e.as<Select>();
            Thunk c = compile(s->condition), t = compile(s->true_value),
                  fv = compile(s->false_value);
            return [=](Frame& f) {
                bool take = c(f).i != 0;
                Scalar a = t(f), b = fv(f);  // Select evaluates both operands
                return take ? a : b;
            };
        }
        case IRNodeType::Let: return compile_let(e.as<Let>());
        case IRNodeType::Call: return compile_call(e.as<Call>());
        case IRNodeType::TensorRead: return compile_read(e.as<TensorRead>());
        case IRNodeType::Reduce: unsupported(e, "a Reduce must be the whole body of a compute");
        case IRNodeType::Load:
        case IRNodeType::BufferLoad: unsupported(e, "loads only appear after lowering");
        default: unsupported(e, "not an expression of the tensor-expression DSL");
    }
}

Thunk BodyCompiler::compile_variable(const Variable* v) {
    auto it = slots_.find(v);
    if (it != slots_.end()) {
        int s = it->second;
        return [s](Frame& f) { return f.slots[s]; };
    }
    if (const Value* c = constants_.lookup(v)) {  // a shape variable bound from an input
        Scalar s = c->lanes[0];
        return [s](Frame&) { return s; };
    }
    std::string name = v->name, op = op_name_;
    return [name, op](Frame&) -> Scalar {
        TESSEL_THROW(RuntimeError)
            << "reference interpreter: compute '" << op << "' uses variable '" << name
            << "', which is neither one of its axes nor a shape "
            << "variable bound by an input";
    };
}

Thunk BodyCompiler::compile_binary(IRNodeType op, const Expr& a, const Expr& b) {
    Thunk ta = compile(a), tb = compile(b);
    Type t = a.type();
    // Fast paths for the arithmetic of every inner loop (same results as eval_binary_lane).
    if (t.is_float() && op == IRNodeType::Add)
        return [=](Frame& f) { return Scalar{.f = ta(f).f + tb(f).f}; };
    if (t.is_float() && op == IRNodeType::Mul)
        return [=](Frame& f) { return Scalar{.f = ta(f).f * tb(f).f}; };
    return [=](Frame& f) { return eval_binary_lane(op, t, ta(f), tb(f), kMode); };
}

Thunk BodyCompiler::compile_let(const Let* l) {
    Thunk value = compile(l->value);
    auto it = slots_.find(l->var.get());
    std::optional<int> shadowed;
    if (it != slots_.end()) shadowed = it->second;
    int s = next_slot_++;
    slots_[l->var.get()] = s;
    level_[l->var.get()] = std::max(level_of(l->value), 0);
    ++let_depth_;
    Thunk body = compile(l->body);
    --let_depth_;
    if (shadowed) {
        slots_[l->var.get()] = *shadowed;
    } else {
        slots_.erase(l->var.get());
    }
    return [=](Frame& f) {
        f.slots[s] = value(f);
        return body(f);
    };
}

Thunk BodyCompiler::compile_call(const Call* c) {
    if (!intrinsic_is_pure(c->op))
        TESSEL_THROW(RuntimeError) << "reference interpreter: compute '" << op_name_ << "' calls "
                                   << intrinsic_name(c->op) << "(), which is not an expression";
    std::vector<Thunk> args;
    for (const Expr& a : c->args) args.push_back(compile(a));
    if (c->op == Intrinsic::if_then_else) {  // lazy: only the taken branch runs
        return [cond = args[0], t = args[1], e = args[2]](Frame& f) {
            return cond(f).i != 0 ? t(f) : e(f);
        };
    }
    Intrinsic op = c->op;
    Type at = c->args[0].type();
    return [op, at, args](Frame& f) {
        Scalar v[3];
        for (size_t k = 0; k < args.size(); ++k) v[k] = args[k](f);
        return eval_intrinsic_lane(op, at, v, kMode);
    };
}

Thunk BodyCompiler::compile_read(const TensorRead* r) {
    auto it = store_.find(r->tensor.op().get());
    TESSEL_CHECK(it != store_.end()) << "compute '" << op_name_ << "' reads tensor '"
                                     << r->tensor.name() << "' before it is computed";
    const HostArray* array = &it->second.at(r->tensor.value_index());
    std::vector<Thunk> idx;
    std::vector<Type> idx_types;
    for (const Expr& i : r->indices) {
        idx.push_back(compile(i));
        idx_types.push_back(i.type());
    }
    std::string what = "tensor '" + r->tensor.name() + "' (read by compute '" + op_name_ + "')";
    return [array, idx, idx_types, what](Frame& f) {
        const auto& shape = array->shape();
        int64_t flat = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
            Scalar s = idx[d](f);
            // An unsigned index above INT64_MAX reads as negative: out of bounds either way.
            if (s.i < 0 || s.i >= shape[d]) {
                std::vector<int64_t> full;
                for (size_t k = 0; k < idx.size(); ++k) full.push_back(idx[k](f).i);
                array->offset_of(full, what);  // throws the RuntimeError with the whole index
            }
            flat = flat * shape[d] + s.i;
        }
        return read_element(*array, flat);
    };
}

/// A compute operation compiled for evaluation.
struct CompiledCompute {
    const ComputeOpNode* op = nullptr;
    std::vector<int> axis_slots;
    std::vector<int64_t> axis_min, shape;
    std::vector<Thunk> bodies;  // when the body is no Reduce
    // Reduce parts (shared by every output of the operation).
    const Reduce* reduce = nullptr;
    std::vector<int> reduce_slots, lhs_slots, rhs_slots;
    std::vector<Thunk> reduce_min, reduce_extent, sources, results, identities;
    Thunk condition;
    int num_slots = 0;
    int num_levels = 1;
    std::vector<Scalar> scratch;  // the sources of one reduction step
};

/// Evaluates a DAG operation by operation.
class Interpreter {
public:
    Interpreter(const std::vector<Tensor>& outputs,
                const std::vector<std::pair<Tensor, HostArray>>& inputs);
    std::vector<HostArray> run();

private:
    void bind_inputs();
    void check_input(const PlaceholderOpNode* ph, const HostArray& a);
    std::vector<int64_t> evaluate_shape(const std::string& what, const std::vector<Expr>& shape);
    CompiledCompute compile_compute(const ComputeOpNode* op);
    void run_compute(const ComputeOpNode* op);
    void run_reduce(CompiledCompute& c, Frame& f, std::vector<Scalar>& acc, size_t level);

    std::vector<Tensor> outputs_;
    const std::vector<std::pair<Tensor, HostArray>>& inputs_;
    std::vector<Operation> order_;
    TensorStore store_;
    ExprEvaluator shape_vars_{kMode};
};

Interpreter::Interpreter(const std::vector<Tensor>& outputs,
                         const std::vector<std::pair<Tensor, HostArray>>& inputs)
    : outputs_(outputs), inputs_(inputs), order_(topo_order(outputs)) {}

std::vector<HostArray> Interpreter::run() {
    bind_inputs();
    for (const Operation& op : order_)
        if (const ComputeOpNode* c = as_compute(op)) run_compute(c);
    std::vector<HostArray> result;
    for (const Tensor& t : outputs_) {
        const HostArray& a = store_.at(t.op().get()).at(t.value_index());
        result.push_back(a.storage() == ArrayStorage::Ideal ? a
                                                            : a.with_storage(ArrayStorage::Ideal));
    }
    return result;
}

void Interpreter::bind_inputs() {
    std::unordered_map<const OperationNode*, const HostArray*> given;
    for (const auto& [t, a] : inputs_) {
        if (!t.defined())
            TESSEL_THROW(RuntimeError) << "evaluate_reference: an input for an undefined tensor";
        if (!as_placeholder(t.op()))
            TESSEL_THROW(RuntimeError) << "evaluate_reference: input given for tensor '" << t.name()
                                       << "', which is computed, not a placeholder";
        if (!given.emplace(t.op().get(), &a).second)
            TESSEL_THROW(RuntimeError)
                << "evaluate_reference: two inputs given for placeholder '" << t.name() << "'";
    }
    std::vector<std::pair<const PlaceholderOpNode*, const HostArray*>> used;
    for (const Operation& op : order_) {
        const PlaceholderOpNode* ph = as_placeholder(op);
        if (!ph) continue;
        auto it = given.find(op.get());
        if (it == given.end())
            TESSEL_THROW(RuntimeError)
                << "evaluate_reference: no input given for placeholder '" << ph->name << "'";
        used.emplace_back(ph, it->second);
        // Plain-variable extents take the array's extent (checked against the rank below).
        for (size_t d = 0; d < ph->shape.size() && d < it->second->ndim(); ++d) {
            const auto* v = ph->shape[d].as<Variable>();
            if (v && !shape_vars_.lookup(v))
                shape_vars_.bind(Var(v), Value::make_int(v->type, it->second->shape()[d]));
        }
    }
    for (const auto& [ph, a] : used) {
        check_input(ph, *a);
        store_[ph].push_back(*a);
    }
}

void Interpreter::check_input(const PlaceholderOpNode* ph, const HostArray& a) {
    if (a.dtype() != ph->dtype)
        TESSEL_THROW(RuntimeError) << "evaluate_reference: the input for placeholder '" << ph->name
                                   << "' has dtype " << a.dtype() << ", expected " << ph->dtype;
    std::vector<int64_t> expected = evaluate_shape("placeholder '" + ph->name + "'", ph->shape);
    if (a.shape() != expected)
        TESSEL_THROW(RuntimeError)
            << "evaluate_reference: the input for placeholder '" << ph->name << "' has shape "
            << format_index(a.shape()) << ", expected " << format_index(expected);
}

std::vector<int64_t> Interpreter::evaluate_shape(const std::string& what,
                                                 const std::vector<Expr>& shape) {
    std::vector<int64_t> out;
    for (const Expr& e : shape) {
        int64_t v;
        try {
            v = shape_vars_.eval(e).as_int();
        } catch (const RuntimeError& err) {
            TESSEL_THROW(RuntimeError) << "evaluate_reference: cannot determine the shape of "
                                       << what << ": " << err.what();
        }
        if (v <= 0)
            TESSEL_THROW(RuntimeError) << "evaluate_reference: " << what << " has extent " << v;
        out.push_back(v);
    }
    return out;
}

CompiledCompute Interpreter::compile_compute(const ComputeOpNode* op) {
    CompiledCompute c;
    c.op = op;
    BodyCompiler bc(op->name, store_, shape_vars_);
    std::vector<Expr> extents;
    for (const IterVar& iv : op->axis) {
        c.axis_slots.push_back(bc.slot_of(iv.var()));
        c.axis_min.push_back(shape_vars_.eval(iv.dom().min).as_int());
        extents.push_back(iv.dom().extent);
    }
    c.shape = evaluate_shape("compute '" + op->name + "'", extents);
    c.reduce = op->body.at(0).as<Reduce>();
    for (const IterVar& iv : op->axis) bc.set_level(iv.var(), 0);
    if (!c.reduce) {
        for (const Expr& b : op->body) bc.count_uses(b);
        for (const Expr& b : op->body) c.bodies.push_back(bc.compile(b));
        c.num_levels = 1;
        c.num_slots = bc.num_slots();
        return c;
    }
    const CommReducerNode& comb = *c.reduce->combiner;
    const int num_reduce = static_cast<int>(c.reduce->axis.size());
    for (int k = 0; k < num_reduce; ++k) bc.set_level(c.reduce->axis[k].var(), k + 1);
    for (const IterVar& iv : c.reduce->axis) {
        bc.set_innermost(static_cast<int>(c.reduce_slots.size()));
        c.reduce_slots.push_back(bc.slot_of(iv.var()));
        c.reduce_min.push_back(bc.compile(iv.dom().min));
        c.reduce_extent.push_back(bc.compile(iv.dom().extent));
    }
    for (size_t j = 0; j < comb.result.size(); ++j) {
        c.lhs_slots.push_back(bc.slot_of(comb.lhs[j]));
        c.rhs_slots.push_back(bc.slot_of(comb.rhs[j]));
        bc.set_level(comb.lhs[j], num_reduce + 1);
        bc.set_level(comb.rhs[j], num_reduce + 1);
        bc.count_uses(c.reduce->source[j]);
        bc.count_uses(comb.result[j]);
    }
    bc.count_uses(c.reduce->condition);
    bc.set_innermost(num_reduce);
    for (size_t j = 0; j < comb.result.size(); ++j)
        c.sources.push_back(bc.compile(c.reduce->source[j]));
    c.condition = bc.compile(c.reduce->condition);
    bc.set_innermost(num_reduce + 1);
    for (size_t j = 0; j < comb.result.size(); ++j) {
        c.results.push_back(bc.compile(comb.result[j]));
        c.identities.push_back(bc.compile(comb.identity[j]));
    }
    c.num_slots = bc.num_slots();
    c.num_levels = num_reduce + 2;
    return c;
}

void Interpreter::run_reduce(CompiledCompute& c, Frame& f, std::vector<Scalar>& acc, size_t level) {
    if (level == c.reduce_slots.size()) {
        if (c.condition(f).i == 0) return;
        const size_t n = acc.size();
        std::vector<Scalar>& src = c.scratch;
        for (size_t j = 0; j < n; ++j) src[j] = c.sources[j](f);
        for (size_t j = 0; j < n; ++j) {
            f.slots[c.lhs_slots[j]] = acc[j];
            f.slots[c.rhs_slots[j]] = src[j];
        }
        f.advance(c.reduce_slots.size() + 1);
        for (size_t j = 0; j < n; ++j) acc[j] = c.results[j](f);
        return;
    }
    const int64_t lo = c.reduce_min[level](f).i, extent = c.reduce_extent[level](f).i;
    const int slot = c.reduce_slots[level];
    for (int64_t k = lo; k < lo + extent; ++k) {
        f.slots[slot].i = k;
        f.advance(level + 1);
        run_reduce(c, f, acc, level + 1);
    }
}

void Interpreter::run_compute(const ComputeOpNode* op) {
    CompiledCompute c = compile_compute(op);
    std::vector<HostArray>& outs = store_[op];
    for (const Expr& b : op->body) outs.emplace_back(b.type(), c.shape, ArrayStorage::Ideal);
    Frame f;
    f.slots.assign(std::max(c.num_slots, 1), Scalar{.i = 0});
    f.stamp.assign(c.num_levels, 0);
    c.scratch.resize(c.sources.size());
    const int64_t total = outs.empty() ? 0 : outs[0].size();
    std::vector<int64_t> point(c.shape.size(), 0);
    std::vector<Scalar> acc(c.identities.size());
    for (int64_t flat = 0; flat < total; ++flat) {
        for (size_t d = 0; d < point.size(); ++d)
            f.slots[c.axis_slots[d]].i = c.axis_min[d] + point[d];
        f.advance(0);
        if (!c.reduce) {
            for (size_t v = 0; v < outs.size(); ++v) write_element(outs[v], flat, c.bodies[v](f));
        } else {
            for (size_t j = 0; j < acc.size(); ++j) acc[j] = c.identities[j](f);
            run_reduce(c, f, acc, 0);
            for (size_t v = 0; v < outs.size(); ++v)
                write_element(outs[v], flat, acc[op->body[v].as<Reduce>()->value_index]);
        }
        for (size_t d = point.size(); d-- > 0;) {  // row-major odometer
            if (++point[d] < c.shape[d]) break;
            point[d] = 0;
        }
    }
}

}  // namespace

std::vector<HostArray> evaluate_reference(const std::vector<Tensor>& outputs,
                                          const std::vector<std::pair<Tensor, HostArray>>& inputs) {
    return Interpreter(outputs, inputs).run();
}

}  // namespace tessel
