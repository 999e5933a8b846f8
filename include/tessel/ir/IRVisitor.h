// Read-only traversal of the IR.
#pragma once

#include <functional>

#include "tessel/ir/IR.h"

namespace tessel {

/// Walks an IR tree. Each `visit(const T*)` visits the node's children by default; override the
/// ones you care about (add `using IRVisitor::visit;` so the other overloads stay visible).
/// Children visited: every Expr and Stmt field, Reduce axis domains, Allocate extents; not the
/// shapes of Buffers or Tensors, nor a CommReducer's combiner.
class IRVisitor {
public:
    virtual ~IRVisitor() = default;
    /// Dispatches on the node type; undefined handles are skipped.
    virtual void visit(const Expr& e);
    virtual void visit(const Stmt& s);

protected:
#define TESSEL_VISITOR_DECL(T) virtual void visit(const T* op);
    TESSEL_FOR_EACH_EXPR_NODE(TESSEL_VISITOR_DECL)
    TESSEL_FOR_EACH_STMT_NODE(TESSEL_VISITOR_DECL)
#undef TESSEL_VISITOR_DECL
};

/// Calls `fn` on every node of the tree, children before parents (the lambda helper for one-off
/// queries).
void post_order_visit(const Expr& e, const std::function<void(const IRNode*)>& fn);
void post_order_visit(const Stmt& s, const std::function<void(const IRNode*)>& fn);

/// True if `e` (or `s`) mentions variable `v` anywhere.
bool uses_var(const Expr& e, const Var& v);
bool uses_var(const Stmt& s, const Var& v);

}  // namespace tessel
