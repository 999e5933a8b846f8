// Thread tags, kernel geometry and kernel stages (see the header).
#include "lower/DeviceKernels.h"

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

bool is_kernel_root(const Stmt& s) {
    const For* f = s.as<For>();
    return f && f->kind == ForKind::ThreadBound && thread_tag_axis(f->thread_tag) >= 0;
}

namespace {

// An assert wrapper: asserts, then the wrapped statement (Seq::make may flatten nested ones).
bool asserts_then_one(const Seq& q) {
    for (size_t i = 0; i + 1 < q.stmts.size(); ++i)
        if (!q.stmts[i].as<AssertStmt>()) return false;
    return q.stmts.size() >= 2;
}

// The kernel's root below the host wrappers, collecting the wrapping lets' values.
Stmt unwrap(Stmt s, VarMap* lets) {
    while (true) {
        if (const LetStmt* l = s.as<LetStmt>()) {
            (*lets)[l->var.get()] = substitute(l->value, *lets);
            s = l->body;
        } else if (const IfThenElse* i = s.as<IfThenElse>(); i && !i->else_case.defined()) {
            s = i->then_case;
        } else if (const Seq* q = s.as<Seq>(); q && asserts_then_one(*q)) {
            s = q->stmts.back();
        } else {
            return s;
        }
    }
}

}  // namespace

KernelGeometry kernel_geometry(const Stmt& kernel) {
    VarMap lets;
    Stmt root = unwrap(kernel, &lets);
    std::array<Expr, 6> dims;
    post_order_visit(root, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::For) return;
        const For* f = static_cast<const For*>(n);
        int axis = f->kind == ForKind::ThreadBound ? thread_tag_axis(f->thread_tag) : -1;
        if (axis < 0) return;
        int slot = axis + (is_block_tag(f->thread_tag) ? 0 : 3);
        Expr e = simplify(cast(Int(64), substitute(f->extent, lets)));
        dims[slot] = dims[slot].defined() ? simplify(max(dims[slot], e)) : e;
    });
    KernelGeometry g;
    for (int i = 0; i < 3; ++i) {
        g.grid[i] = dims[i].defined() ? dims[i] : make_const(Int(64), 1);
        g.block[i] = dims[i + 3].defined() ? dims[i + 3] : make_const(Int(64), 1);
    }
    return g;
}

std::string kernel_stage(const Stmt& s, const std::unordered_set<const Variable*>& global) {
    std::string in_global, any;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Store) return;
        const Variable* v = static_cast<const Store*>(n)->buffer_var.get();
        any = v->name;
        if (global.count(v)) in_global = v->name;
    });
    if (!in_global.empty()) return in_global;
    return any.empty() ? std::string("?") : any;
}

}  // namespace tessel::internal
