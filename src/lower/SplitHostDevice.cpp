// SplitHostDevice: workspaces and kernels of a lowered function (see the header).
#include "tessel/lower/SplitHostDevice.h"

#include <cstdlib>
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
    int id = 0;   // the same for two contexts only when their wrappers are the same
};

/// A kernel's root loop and the host context it runs in.
struct KernelRoot {
    Stmt root;
    HostContext ctx;
};

/// What a kernel reads and writes, for merging (merge_independent).
struct Accesses {
    std::unordered_set<const Variable*> reads, writes;
};

/// The launch grid of a kernel that may be merged with its neighbours: its root loop is the only
/// block loop, bound to blockIdx.x from 0, and its body synchronises nothing (every intrinsic it
/// calls is pure: no barrier, no asynchronous copy, no tensor core) and allocates nothing but
/// registers; its loads and stores go to `acc`. Undefined otherwise.
Expr mergeable_grid(const Stmt& root, Accesses* acc) {
    const For* f = root.as<For>();
    if (!f || f->kind != ForKind::ThreadBound || f->thread_tag != "blockIdx.x" || !is_zero(f->min))
        return Expr();
    bool simple = true;
    post_order_visit(f->body, [&](const IRNode* n) {
        switch (n->node_type) {
            case IRNodeType::For: {
                const auto* l = static_cast<const For*>(n);
                simple = simple && !(l->kind == ForKind::ThreadBound &&
                                     internal::is_block_tag(l->thread_tag));
                break;
            }
            case IRNodeType::Call:
                simple = simple && intrinsic_is_pure(static_cast<const Call*>(n)->op);
                break;
            case IRNodeType::Allocate:
                simple = simple && static_cast<const Allocate*>(n)->scope == StorageScope::Local;
                break;
            case IRNodeType::Load:
                acc->reads.insert(static_cast<const Load*>(n)->buffer_var.get());
                break;
            case IRNodeType::Store:
                acc->writes.insert(static_cast<const Store*>(n)->buffer_var.get());
                break;
            default: break;
        }
    });
    return simple ? f->extent : Expr();
}

bool disjoint(const std::unordered_set<const Variable*>& a,
              const std::unordered_set<const Variable*>& b) {
    for (const Variable* v : a)
        if (b.count(v)) return false;
    return true;
}

/// Whether independent kernels are merged (merge_independent): TESSEL_CUDA_MERGE_KERNELS=0 keeps
/// every kernel a launch of its own.
bool merge_kernels() {
    const char* v = std::getenv("TESSEL_CUDA_MERGE_KERNELS");
    return !(v && std::string(v) == "0");
}

class Splitter {
public:
    Splitter(const LoweredFunc& f, const Target& target) : f_(f), target_(target) {
        for (const Buffer& b : f.args) global_.insert(b->data.get());
        args_ = global_;
    }

    Stmt run();

private:
    void walk(const Stmt& s, const HostContext& ctx);
    void walk_seq(const Seq* op, const HostContext& ctx);
    void walk_evaluate(const Evaluate* op);
    void add_workspace(const Allocate* op, const HostContext& ctx);
    void add_kernel(const Stmt& s, const HostContext& ctx);
    HostContext wrapped(const HostContext& ctx, Wrapper w);
    void merge_independent();
    void check_limits(const Stmt& kernel, size_t index);
    std::string kernel_name(size_t index) const;
    [[noreturn]] void loop_outside_kernels(const Stmt& s);

    const LoweredFunc& f_;
    const Target& target_;
    std::unordered_set<const Variable*> global_;
    std::unordered_set<const Variable*> args_;
    std::unordered_set<const Variable*> zeroed_;  ///< workspaces that are zero between calls
    int contexts_ = 0;
    std::vector<KernelRoot> roots_;
    std::vector<Stmt> kernels_;
    std::vector<const Allocate*> workspaces_;
    std::vector<std::vector<Expr>> workspace_extents_;
};

Stmt Splitter::run() {
    walk(f_.body, HostContext{});
    if (merge_kernels()) merge_independent();
    for (const KernelRoot& k : roots_) {
        Stmt body = k.root;
        for (auto it = k.ctx.wrappers.rbegin(); it != k.ctx.wrappers.rend(); ++it)
            body = (*it)(body);
        check_limits(body, kernels_.size());
        kernels_.push_back(body);
    }
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
        if (zeroed_.count(a->buffer_var.get()))
            body = AttrStmt::make("zeroed_workspace", a->buffer_var, body);
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
            if (a->key == "zeroed_workspace")  // tile_arrive's counters (ir/IR.h)
                if (const Variable* v = a->value.as<Variable>()) zeroed_.insert(v);
            return walk(a->body, ctx);
        }
        case IRNodeType::Allocate: return add_workspace(s.as<Allocate>(), ctx);
        case IRNodeType::LetStmt: {
            const LetStmt* op = s.as<LetStmt>();
            HostContext inner = wrapped(ctx, [op](Stmt body) {
                return LetStmt::make(op->var, op->value, std::move(body));
            });
            inner.lets[op->var.get()] = substitute(op->value, ctx.lets);
            return walk(op->body, inner);
        }
        case IRNodeType::IfThenElse: {
            const IfThenElse* op = s.as<IfThenElse>();
            Expr c = op->condition;
            HostContext then_ctx =
                wrapped(ctx, [c](Stmt b) { return IfThenElse::make(c, std::move(b)); });
            HostContext else_ctx =
                wrapped(ctx, [c](Stmt b) { return IfThenElse::make(!c, std::move(b)); });
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
            c = wrapped(c, [check](Stmt b) { return Seq::make({check, std::move(b)}); });
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
    roots_.push_back({s, ctx});
}

HostContext Splitter::wrapped(const HostContext& ctx, Wrapper w) {
    HostContext inner = ctx;
    inner.wrappers.push_back(std::move(w));
    inner.id = ++contexts_;
    return inner;
}

// Consecutive kernels that depend on each other in no way become one launch: a kernel that
// neither reads nor writes what the ones before it in the group write, nor writes what they read,
// runs in the blocks after theirs (blockIdx.x offset by their grids). Only small kernels qualify
// (mergeable_grid: one blockIdx.x loop, nothing synchronised, no shared memory) that write no
// argument (a workspace cannot alias another buffer) and run in the same host context. What it
// saves is a launch: the padded copies of a product's two operands (docs/cuda.md, "Padded
// copies") are one kernel, not two.
void Splitter::merge_independent() {
    std::vector<KernelRoot> out;
    Accesses group;                 // of the kernels merged into out.back()
    std::vector<const For*> parts;  // their root loops, in order
    auto close = [&]() {
        if (parts.size() < 2) return;
        Var b("merged_block", parts[0]->loop_var.type());
        // Each part in the blocks after the ones before it: if b < end_0 ... else if b < end_1 ...
        std::vector<Expr> begins{make_zero(b.type())};
        for (const For* f : parts) begins.push_back(simplify(begins.back() + f->extent));
        Stmt body;
        for (size_t k = parts.size(); k-- > 0;) {
            Stmt part = substitute(parts[k]->body,
                                   VarMap{{parts[k]->loop_var.get(), simplify(b - begins[k])}});
            body = body.defined() ? IfThenElse::make(b < begins[k + 1], part, body) : part;
        }
        out.back().root = For::make(b, make_zero(b.type()), begins.back(), ForKind::ThreadBound,
                                    body, "blockIdx.x");
    };
    for (const KernelRoot& k : roots_) {
        Accesses acc;
        const bool mergeable =
            mergeable_grid(k.root, &acc).defined() && disjoint(acc.writes, args_);
        const For* f = k.root.as<For>();
        if (mergeable && !parts.empty() && out.back().ctx.id == k.ctx.id &&
            f->loop_var.type() == parts[0]->loop_var.type() && disjoint(group.writes, acc.reads) &&
            disjoint(group.writes, acc.writes) && disjoint(acc.writes, group.reads)) {
            group.reads.insert(acc.reads.begin(), acc.reads.end());
            group.writes.insert(acc.writes.begin(), acc.writes.end());
            parts.push_back(f);
            continue;
        }
        close();
        out.push_back(k);
        parts.clear();
        group = mergeable ? std::move(acc) : Accesses{};
        if (mergeable) parts.push_back(f);
    }
    close();
    roots_ = std::move(out);
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
