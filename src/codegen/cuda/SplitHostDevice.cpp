// SplitHostDevice: kernels and workspaces of a lowered function (see the header).
#include "codegen/cuda/SplitHostDevice.h"

#include <functional>
#include <unordered_set>

#include "tessel/Error.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

int thread_tag_axis(const std::string& tag) {
    static const char* const tags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                       "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    for (int i = 0; i < 6; ++i)
        if (tag == tags[i]) return i % 3;
    return -1;
}

bool is_block_tag(const std::string& tag) {
    return tag.rfind("blockIdx.", 0) == 0;
}

namespace {

bool is_kernel_root(const Stmt& s) {
    const For* f = s.as<For>();
    return f && f->kind == ForKind::ThreadBound && thread_tag_axis(f->thread_tag) >= 0;
}

// The statements a host-side construct wraps each kernel in its scope with, innermost last.
using Wrapper = std::function<Stmt(Stmt)>;

struct HostContext {
    std::vector<Wrapper> wrappers;
    VarMap lets;  // host LetStmt variables → their values (substituted into launch extents)
};

class Splitter {
public:
    Splitter(const LoweredFunc& f, const std::vector<Var>& shape_vars)
        : f_(f), shape_vars_(shape_vars) {
        for (const Buffer& b : f.args) global_.insert(b->data.get());
    }

    HostDeviceSplit run() {
        walk(f_.body, HostContext{});
        return std::move(out_);
    }

private:
    void walk(const Stmt& s, const HostContext& ctx);
    void walk_seq(const Seq* op, const HostContext& ctx);
    void add_workspace(const Allocate* op, const HostContext& ctx);
    void add_kernel(const Stmt& s, const HostContext& ctx);
    void launch_geometry(DeviceKernel* k, const HostContext& ctx);
    void check_limits(const DeviceKernel& k);
    std::string stage_of(const Stmt& s) const;

    const LoweredFunc& f_;
    const std::vector<Var>& shape_vars_;
    std::unordered_set<const Variable*> global_;
    HostDeviceSplit out_;
};

void Splitter::walk(const Stmt& s, const HostContext& ctx) {
    if (!s.defined()) return;
    if (is_kernel_root(s)) return add_kernel(s, ctx);
    switch (s.node_type()) {
        case IRNodeType::Seq: return walk_seq(s.as<Seq>(), ctx);
        case IRNodeType::AttrStmt: return walk(s.as<AttrStmt>()->body, ctx);
        case IRNodeType::Allocate: return add_workspace(s.as<Allocate>(), ctx);
        case IRNodeType::LetStmt: {
            const LetStmt* op = s.as<LetStmt>();
            HostContext inner = ctx;
            inner.wrappers.push_back(
                [op](Stmt body) { return LetStmt::make(op->var, op->value, std::move(body)); });
            inner.lets[op->var.get()] = substitute(op->value, ctx.lets);
            return walk(op->body, inner);
        }
        case IRNodeType::IfThenElse: {
            const IfThenElse* op = s.as<IfThenElse>();
            HostContext then_ctx = ctx, else_ctx = ctx;
            Expr c = op->condition;
            then_ctx.wrappers.push_back([c](Stmt b) { return IfThenElse::make(c, std::move(b)); });
            else_ctx.wrappers.push_back([c](Stmt b) { return IfThenElse::make(!c, std::move(b)); });
            walk(op->then_case, then_ctx);
            return walk(op->else_case, else_ctx);
        }
        case IRNodeType::Store: return add_kernel(s, ctx);  // a kernel of one thread
        case IRNodeType::Evaluate: {
            const Call* c = s.as<Evaluate>()->value.as<Call>();
            if (c && c->op == Intrinsic::thread_allreduce) {
                TESSEL_THROW(ScheduleError)
                    << "cuda: a cross-thread reduction outside every kernel in '" << f_.name
                    << "' (its reduction loops must be bound to threadIdx)";
            }
            return;  // a barrier between kernels, or a pure value: nothing to do
        }
        case IRNodeType::For: {
            const For* op = s.as<For>();
            TESSEL_THROW(ScheduleError)
                << "cuda: loop " << op->loop_var.name() << " of stage " << stage_of(s) << " in '"
                << f_.name << "' runs outside every GPU kernel: bind it (or an enclosing loop) to "
                << "blockIdx/threadIdx, e.g. s[" << stage_of(s) << "].bind(axis, \"blockIdx.x\")";
        }
        default:
            TESSEL_THROW(CompileError) << "cuda: a " << node_type_name(s.node_type())
                                       << " statement outside every kernel in '" << f_.name
                                       << "' cannot run on the host";
    }
}

// An assert applies to the kernels that follow it in its sequence.
void Splitter::walk_seq(const Seq* op, const HostContext& ctx) {
    HostContext c = ctx;
    for (const Stmt& s : op->stmts) {
        if (const AssertStmt* a = s.as<AssertStmt>()) {
            Stmt check = s;
            c.wrappers.push_back([check](Stmt b) { return Seq::make({check, std::move(b)}); });
            (void)a;
            continue;
        }
        walk(s, c);
    }
}

void Splitter::add_workspace(const Allocate* op, const HostContext& ctx) {
    if (op->scope != StorageScope::Global) {
        TESSEL_THROW(ScheduleError)
            << "cuda: " << scope_name(op->scope) << " buffer " << op->buffer_var.name()
            << " is allocated outside every kernel of '" << f_.name
            << "': compute it at a loop inside a kernel (e.g. compute_at a blockIdx loop)";
    }
    Expr elems = make_const(Int(64), int64_t(op->dtype.bytes()) * op->dtype.lanes);
    for (const Expr& e : op->extents) elems = elems * cast(Int(64), substitute(e, ctx.lets));
    std::string what = "the size of workspace " + op->buffer_var.name();
    out_.workspaces.push_back({op->buffer_var.name(), to_launch_expr(simplify(elems), shape_vars_,
                                                                     what)});
    out_.workspace_vars.push_back(op->buffer_var);
    out_.workspace_types.push_back(op->dtype.element_of());
    global_.insert(op->buffer_var.get());
    walk(op->body, ctx);
}

void Splitter::add_kernel(const Stmt& s, const HostContext& ctx) {
    DeviceKernel k;
    k.name = f_.name + "_kernel" + std::to_string(out_.kernels.size());
    k.stage = stage_of(s);
    k.body = s;
    for (auto it = ctx.wrappers.rbegin(); it != ctx.wrappers.rend(); ++it) k.body = (*it)(k.body);
    launch_geometry(&k, ctx);
    check_limits(k);
    out_.kernels.push_back(std::move(k));
}

// The extent of each axis: the largest of the loops bound to it (verify_thread_mapping makes them
// equal; a loop with a smaller extent is guarded by the code generator).
void Splitter::launch_geometry(DeviceKernel* k, const HostContext& ctx) {
    std::array<Expr, 6> dims;
    post_order_visit(k->body, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::For) return;
        const For* f = static_cast<const For*>(n);
        int axis = f->kind == ForKind::ThreadBound ? thread_tag_axis(f->thread_tag) : -1;
        if (axis < 0) return;
        int slot = axis + (is_block_tag(f->thread_tag) ? 0 : 3);
        Expr e = simplify(cast(Int(64), substitute(f->extent, ctx.lets)));
        dims[slot] = dims[slot].defined() ? simplify(max(dims[slot], e)) : e;
    });
    for (int i = 0; i < 3; ++i) {
        k->grid[i] = dims[i].defined() ? dims[i] : make_const(Int(64), 1);
        k->block[i] = dims[i + 3].defined() ? dims[i + 3] : make_const(Int(64), 1);
    }
}

void Splitter::check_limits(const DeviceKernel& k) {
    int64_t threads = 1;
    bool constant = true;
    for (const Expr& e : k.block) {
        auto c = as_const_int(e);
        constant = constant && c.has_value();
        if (c) threads *= *c;
    }
    if (constant && threads > 1024) {
        TESSEL_THROW(ScheduleError)
            << "cuda: kernel " << k.name << " (stage " << k.stage << ") has a block of "
            << *as_const_int(k.block[0]) << " x " << *as_const_int(k.block[1]) << " x "
            << *as_const_int(k.block[2]) << " = " << threads
            << " threads, over the limit of 1024 threads per block by " << threads - 1024
            << ": split the threadIdx-bound loops further";
    }
    static const char* const names[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    for (int i = 0; i < 3; ++i) {
        auto c = as_const_int(k.grid[i]);
        int64_t limit = i == 0 ? 2147483647 : 65535;
        if (c && *c > limit) {
            TESSEL_THROW(ScheduleError)
                << "cuda: kernel " << k.name << " (stage " << k.stage << ") launches " << *c
                << " blocks along " << names[i] << ", over the limit of " << limit << " by "
                << *c - limit << ": bind a larger loop to blockIdx.x or split it across axes";
        }
    }
}

// The buffer the statement's root stage stores to: the last store to a global buffer (the
// stages computed inside a kernel come before its root's store), else the last store at all.
std::string Splitter::stage_of(const Stmt& s) const {
    std::string global, any;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Store) return;
        const Variable* v = static_cast<const Store*>(n)->buffer_var.get();
        any = v->name;
        if (global_.count(v)) global = v->name;
    });
    if (!global.empty()) return global;
    return any.empty() ? std::string("?") : any;
}

void postfix(const Expr& e, const std::vector<Var>& shape_vars, const std::string& what,
             LaunchExpr* out) {
    using Op = LaunchExpr::Op;
    if (auto c = as_const_int(e)) {
        out->terms.push_back({Op::Const, *c});
        return;
    }
    if (const Variable* v = e.as<Variable>()) {
        for (size_t i = 0; i < shape_vars.size(); ++i) {
            if (shape_vars[i].get() == v) {
                out->terms.push_back({Op::ShapeVar, int64_t(i)});
                return;
            }
        }
        TESSEL_THROW(CompileError) << "cuda: " << what << " depends on " << v->name
                                   << ", which is not a shape variable of the kernel's arguments";
    }
    if (const Cast* c = e.as<Cast>(); c && c->value.type().is_int_or_uint()) {
        return postfix(c->value, shape_vars, what, out);
    }
    auto binary = [&](const Expr& a, const Expr& b, Op op) {
        postfix(a, shape_vars, what, out);
        postfix(b, shape_vars, what, out);
        out->terms.push_back({op, 0});
    };
    // clang-format off
    if (const Add* op = e.as<Add>()) return binary(op->a, op->b, Op::Add);
    if (const Sub* op = e.as<Sub>()) return binary(op->a, op->b, Op::Sub);
    if (const Mul* op = e.as<Mul>()) return binary(op->a, op->b, Op::Mul);
    if (const FloorDiv* op = e.as<FloorDiv>()) return binary(op->a, op->b, Op::FloorDiv);
    if (const FloorMod* op = e.as<FloorMod>()) return binary(op->a, op->b, Op::FloorMod);
    if (const Min* op = e.as<Min>()) return binary(op->a, op->b, Op::Min);
    if (const Max* op = e.as<Max>()) return binary(op->a, op->b, Op::Max);
    // clang-format on
    TESSEL_THROW(CompileError) << "cuda: " << what << " is an expression the launch plan cannot "
                               << "evaluate (a " << node_type_name(e.node_type())
                               << "); launch sizes may use +, -, *, floordiv, floormod, min, max "
                               << "of constants and shape variables";
}

}  // namespace

LaunchExpr to_launch_expr(const Expr& e, const std::vector<Var>& shape_vars,
                          const std::string& what) {
    LaunchExpr out;
    postfix(e, shape_vars, what, &out);
    return out;
}

HostDeviceSplit split_host_device(const LoweredFunc& f, const std::vector<Var>& shape_vars) {
    return Splitter(f, shape_vars).run();
}

}  // namespace tessel::internal
