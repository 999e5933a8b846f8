#include "tessel/ir/IRVisitor.h"

namespace tessel {

void IRVisitor::visit(const Expr& e) {
    if (!e.defined()) return;
    switch (e.node_type()) {
#define TESSEL_DISPATCH(T) \
    case IRNodeType::T: visit(static_cast<const T*>(e.get())); return;
        TESSEL_FOR_EACH_EXPR_NODE(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
        default: TESSEL_CHECK(false) << "statement node in an Expr handle";
    }
}

void IRVisitor::visit(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.node_type()) {
#define TESSEL_DISPATCH(T) \
    case IRNodeType::T: visit(static_cast<const T*>(s.get())); return;
        TESSEL_FOR_EACH_STMT_NODE(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
        default: TESSEL_CHECK(false) << "expression node in a Stmt handle";
    }
}

void IRVisitor::visit(const IntImm*) {}
void IRVisitor::visit(const UIntImm*) {}
void IRVisitor::visit(const FloatImm*) {}
void IRVisitor::visit(const Variable*) {}
void IRVisitor::visit(const Cast* op) {
    visit(op->value);
}

#define TESSEL_VISIT_BINARY(T)           \
    void IRVisitor::visit(const T* op) { \
        visit(op->a);                    \
        visit(op->b);                    \
    }
TESSEL_VISIT_BINARY(Add)
TESSEL_VISIT_BINARY(Sub)
TESSEL_VISIT_BINARY(Mul)
TESSEL_VISIT_BINARY(Div)
TESSEL_VISIT_BINARY(Mod)
TESSEL_VISIT_BINARY(FloorDiv)
TESSEL_VISIT_BINARY(FloorMod)
TESSEL_VISIT_BINARY(Min)
TESSEL_VISIT_BINARY(Max)
TESSEL_VISIT_BINARY(EQ)
TESSEL_VISIT_BINARY(NE)
TESSEL_VISIT_BINARY(LT)
TESSEL_VISIT_BINARY(LE)
TESSEL_VISIT_BINARY(GT)
TESSEL_VISIT_BINARY(GE)
TESSEL_VISIT_BINARY(And)
TESSEL_VISIT_BINARY(Or)
#undef TESSEL_VISIT_BINARY

void IRVisitor::visit(const Not* op) {
    visit(op->a);
}
void IRVisitor::visit(const Select* op) {
    visit(op->condition);
    visit(op->true_value);
    visit(op->false_value);
}
void IRVisitor::visit(const Ramp* op) {
    visit(op->base);
    visit(op->stride);
}
void IRVisitor::visit(const Broadcast* op) {
    visit(op->value);
}
void IRVisitor::visit(const Let* op) {
    visit(op->value);
    visit(op->body);
}
void IRVisitor::visit(const Call* op) {
    for (const Expr& a : op->args) visit(a);
}
void IRVisitor::visit(const TensorRead* op) {
    for (const Expr& i : op->indices) visit(i);
}
void IRVisitor::visit(const Reduce* op) {
    for (const IterVar& iv : op->axis) {
        visit(iv.dom().min);
        visit(iv.dom().extent);
    }
    for (const Expr& s : op->source) visit(s);
    visit(op->condition);
}
void IRVisitor::visit(const Load* op) {
    visit(op->index);
    visit(op->predicate);
}
void IRVisitor::visit(const BufferLoad* op) {
    for (const Expr& i : op->indices) visit(i);
}

void IRVisitor::visit(const LetStmt* op) {
    visit(op->value);
    visit(op->body);
}
void IRVisitor::visit(const AttrStmt* op) {
    visit(op->value);
    visit(op->body);
}
void IRVisitor::visit(const AssertStmt* op) {
    visit(op->condition);
}
void IRVisitor::visit(const For* op) {
    visit(op->min);
    visit(op->extent);
    visit(op->body);
}
void IRVisitor::visit(const Store* op) {
    visit(op->value);
    visit(op->index);
    visit(op->predicate);
}
void IRVisitor::visit(const BufferStore* op) {
    visit(op->value);
    for (const Expr& i : op->indices) visit(i);
}
void IRVisitor::visit(const Allocate* op) {
    for (const Expr& e : op->extents) visit(e);
    visit(op->body);
}
void IRVisitor::visit(const Seq* op) {
    for (const Stmt& s : op->stmts) visit(s);
}
void IRVisitor::visit(const IfThenElse* op) {
    visit(op->condition);
    visit(op->then_case);
    visit(op->else_case);
}
void IRVisitor::visit(const Evaluate* op) {
    visit(op->value);
}

namespace {
class PostOrder : public IRVisitor {
public:
    explicit PostOrder(const std::function<void(const IRNode*)>& fn) : fn_(fn) {}
    void visit(const Expr& e) override {
        if (!e.defined()) return;
        IRVisitor::visit(e);
        fn_(e.get());
    }
    void visit(const Stmt& s) override {
        if (!s.defined()) return;
        IRVisitor::visit(s);
        fn_(s.get());
    }

private:
    const std::function<void(const IRNode*)>& fn_;
};
}  // namespace

void post_order_visit(const Expr& e, const std::function<void(const IRNode*)>& fn) {
    PostOrder(fn).visit(e);
}
void post_order_visit(const Stmt& s, const std::function<void(const IRNode*)>& fn) {
    PostOrder(fn).visit(s);
}

namespace {
template <typename Node>
bool uses_var_impl(const Node& n, const Var& v) {
    bool found = false;
    const Variable* target = v.get();
    post_order_visit(n, [&](const IRNode* node) {
        if (node == target) found = true;
        // Flat memory accesses name their buffer variable outside the expression fields.
        if (node->node_type == IRNodeType::Load &&
            static_cast<const Load*>(node)->buffer_var.get() == target)
            found = true;
        if (node->node_type == IRNodeType::Store &&
            static_cast<const Store*>(node)->buffer_var.get() == target)
            found = true;
        if (node->node_type == IRNodeType::For &&
            static_cast<const For*>(node)->loop_var.get() == target)
            found = true;
    });
    return found;
}
}  // namespace

bool uses_var(const Expr& e, const Var& v) {
    return uses_var_impl(e, v);
}
bool uses_var(const Stmt& s, const Var& v) {
    return uses_var_impl(s, v);
}

}  // namespace tessel
