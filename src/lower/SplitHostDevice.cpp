// SplitHostDevice: workspaces and kernels of a lowered function (see the header).
#include "tessel/lower/SplitHostDevice.h"

#include <functional>
#include <unordered_set>

#include "lower/DeviceKernels.h"
#include "tessel/Error.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

using internal::kernel_stage;

// The statements a host-side construct wraps each kernel in its scope with, innermost last.
using Wrapper = std::function<Stmt(Stmt)>;

struct HostContext {
    std::vector<Wrapper> wrappers;
    VarMap lets;  // host LetStmt variables → their values (substituted into workspace sizes)
};

class Splitter {
public:
    Splitter(const LoweredFunc& f, const Target& target) : f_(f), target_(target) {
        for (const Buffer& b : f.args) global_.insert(b->data.get());
    }

    Stmt run();

private:
    void walk(const Stmt& s, const HostContext& ctx);
    void walk_seq(const Seq* op, const HostContext& ctx);
    void walk_evaluate(const Evaluate* op);
    void add_workspace(const Allocate* op, const HostContext& ctx);
    void add_kernel(const Stmt& s, const HostContext& ctx);
    void check_limits(const Stmt& kernel, size_t index);
    std::string kernel_name(size_t index) const;
    [[noreturn]] void loop_outside_kernels(const Stmt& s);

    const LoweredFunc& f_;
    const Target& target_;
    std::unordered_set<const Variable*> global_;
    std::vector<Stmt> kernels_;
    std::vector<const Allocate*> workspaces_;
    std::vector<std::vector<Expr>> workspace_extents_;
};

Stmt Splitter::run() {
    walk(f_.body, HostContext{});
    std::vector<Stmt> marked;
    for (size_t i = 0; i < kernels_.size(); ++i) {
        marked.push_back(AttrStmt::make(kDeviceKernelAttr,
                                        make_const(Int(32), static_cast<int64_t>(i)), kernels_[i]));
    }
    Stmt body = marked.empty()       ? Evaluate::make(make_const(Int(32), 0))
                : marked.size() == 1 ? marked[0]
                                     : Seq::make(marked);
    for (size_t i = workspaces_.size(); i-- > 0;) {
        const Allocate* a = workspaces_[i];
        body = Allocate::make(a->buffer_var, a->dtype, workspace_extents_[i], a->scope, body);
    }
    return body;
}

void Splitter::walk(const Stmt& s, const HostContext& ctx) {
    if (!s.defined()) return;
    if (internal::is_kernel_root(s)) return add_kernel(s, ctx);
    switch (s.node_type()) {
        case IRNodeType::Seq: return walk_seq(s.as<Seq>(), ctx);
        case IRNodeType::AttrStmt: {
            const AttrStmt* a = s.as<AttrStmt>();
            if (a->key == kDeviceKernelAttr) return add_kernel(a->body, ctx);  // already split
            return walk(a->body, ctx);
        }
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
        case IRNodeType::Evaluate: return walk_evaluate(s.as<Evaluate>());
        case IRNodeType::For: return loop_outside_kernels(s);
        default:
            TESSEL_THROW(CompileError)
                << "cuda: a " << node_type_name(s.node_type())
                << " statement outside every kernel in '" << f_.name << "' cannot run on the host";
    }
}

// An assert applies to the kernels that follow it in its sequence.
void Splitter::walk_seq(const Seq* op, const HostContext& ctx) {
    HostContext c = ctx;
    for (const Stmt& s : op->stmts) {
        if (s.as<AssertStmt>()) {
            Stmt check = s;
            c.wrappers.push_back([check](Stmt b) { return Seq::make({check, std::move(b)}); });
            continue;
        }
        walk(s, c);
    }
}

void Splitter::walk_evaluate(const Evaluate* op) {
    const Call* c = op->value.as<Call>();
    if (c && c->op == Intrinsic::thread_allreduce) {
        TESSEL_THROW(ScheduleError) << "cuda: a cross-thread reduction outside every kernel in '"
                                    << f_.name << "' (its reduction loops must be bound to "
                                    << "threadIdx)";
    }
    if (c && is_tensor_core_intrinsic(c->op)) {
        TESSEL_THROW(ScheduleError) << "cuda: " << intrinsic_name(c->op)
                                    << " (a tensorized stage) outside every kernel in '" << f_.name
                                    << "' (tensor-core stages run in the warps of a kernel)";
    }
    // A barrier between kernels, or a pure value: nothing to do.
}

void Splitter::loop_outside_kernels(const Stmt& s) {
    const For* op = s.as<For>();
    std::string stage = kernel_stage(s, global_);
    TESSEL_THROW(ScheduleError)
        << "cuda: loop " << op->loop_var.name() << " of stage " << stage << " in '" << f_.name
        << "' runs outside every GPU kernel: bind it (or an enclosing loop) to "
        << "blockIdx/threadIdx, e.g. s[" << stage << "].bind(axis, \"blockIdx.x\")";
}

void Splitter::add_workspace(const Allocate* op, const HostContext& ctx) {
    if (op->scope != StorageScope::Global) {
        TESSEL_THROW(ScheduleError)
            << "cuda: " << scope_name(op->scope) << " buffer " << op->buffer_var.name()
            << " is allocated outside every kernel of '" << f_.name
            << "': compute it at a loop inside a kernel (e.g. compute_at a blockIdx loop)";
    }
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) extents.push_back(substitute(e, ctx.lets));
    workspaces_.push_back(op);
    workspace_extents_.push_back(std::move(extents));
    global_.insert(op->buffer_var.get());
    walk(op->body, ctx);
}

void Splitter::add_kernel(const Stmt& s, const HostContext& ctx) {
    Stmt body = s;
    for (auto it = ctx.wrappers.rbegin(); it != ctx.wrappers.rend(); ++it) body = (*it)(body);
    check_limits(body, kernels_.size());
    kernels_.push_back(body);
}

std::string Splitter::kernel_name(size_t index) const {
    return f_.name + "_kernel" + std::to_string(index);
}

void Splitter::check_limits(const Stmt& kernel, size_t index) {
    internal::KernelGeometry g = internal::kernel_geometry(kernel);
    std::string what =
        "cuda: kernel " + kernel_name(index) + " (stage " + kernel_stage(kernel, global_) + ")";
    int64_t threads = 1;
    bool constant = true;
    for (const Expr& e : g.block) {
        auto c = as_const_int(e);
        constant = constant && c.has_value();
        if (c) threads *= *c;
    }
    int64_t limit = target_.max_threads_per_block();
    if (constant && threads > limit) {
        TESSEL_THROW(ScheduleError)
            << what << " has a block of " << *as_const_int(g.block[0]) << " x "
            << *as_const_int(g.block[1]) << " x " << *as_const_int(g.block[2]) << " = " << threads
            << " threads, over the limit of " << limit << " threads per block of target '"
            << target_.str() << "' by " << threads - limit
            << ": split the threadIdx-bound loops further";
    }
    static const char* const names[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    for (int i = 0; i < 3; ++i) {
        auto c = as_const_int(g.grid[i]);
        int64_t max_grid = i == 0 ? 2147483647 : 65535;
        if (c && *c > max_grid) {
            TESSEL_THROW(ScheduleError)
                << what << " launches " << *c << " blocks along " << names[i]
                << ", over the limit of " << max_grid << " by " << *c - max_grid
                << ": bind a larger loop to blockIdx.x or split it across axes";
        }
    }
}

}  // namespace

LoweredFunc split_host_device(const LoweredFunc& f, const Target& target) {
    if (!target.is_gpu()) {
        TESSEL_THROW(CompileError)
            << "split_host_device: target '" << target.str() << "' is not a GPU target";
    }
    LoweredFunc out = f;
    out.body = Splitter(f, target).run();
    return out;
}

bool is_host_device_split(const LoweredFunc& f) {
    bool found = false;
    post_order_visit(f.body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::AttrStmt &&
            static_cast<const AttrStmt*>(n)->key == kDeviceKernelAttr)
            found = true;
    });
    return found;
}

}  // namespace tessel
