// Statement simplification: loops of extent 0 or 1, constant conditions, trivial lets, asserts
// that hold, and sequences of no-ops. Loop variables are bound to their ranges in the body.
#include "ExprEqual.h"
#include "IntMath.h"
#include "Simplifier.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

bool is_no_op(const Stmt& s) {
    const auto* e = s.as<Evaluate>();
    return e && (const_bits(e->value) || as_const_float(e->value));
}

Stmt make_no_op() {
    return Evaluate::make(0);
}

Stmt Simplifier::visit(const For* op) {
    Expr min = mutate(op->min), extent = mutate(op->extent);
    auto n = as_const_int(extent);
    if (n && *n <= 0) return make_no_op();
    if (n && *n == 1 && op->kind != ForKind::ThreadBound) {
        return mutate(LetStmt::make(op->loop_var, min, op->body));
    }
    Interval range(min, mutate(Sub::make(Add::make(min, extent), make_one(extent.type()))));
    ConstInterval cmin = const_bounds(min), cmax = const_bounds(range.max);
    push_binding(op->loop_var, range, ConstInterval{cmin.min, cmax.max}, ModularSet::everything());
    Stmt body = mutate(op->body);
    pop_binding(op->loop_var);
    if (is_no_op(body)) return make_no_op();
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return op;
    return For::make(op->loop_var, min, extent, op->kind, body, op->thread_tag);
}

Stmt Simplifier::visit(const LetStmt* op) {
    Expr value = mutate(op->value);
    if (const_bits(value) || as_const_float(value) || value.as<Variable>()) {
        return mutate(substitute(op->body, VarMap{{op->var.get(), value}}));
    }
    push_binding(op->var, Interval::single_point(value), const_bounds(value), modular(value));
    Stmt body = mutate(op->body);
    pop_binding(op->var);
    if (!uses_var(body, op->var)) return body;
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return LetStmt::make(op->var, value, body);
}

Stmt Simplifier::visit(const IfThenElse* op) {
    Expr cond = mutate(op->condition);
    if (auto c = const_bits(cond)) {
        if (*c) return mutate(op->then_case);
        return op->else_case.defined() ? mutate(op->else_case) : make_no_op();
    }
    Stmt then_case = mutate(op->then_case);
    Stmt else_case = mutate(op->else_case);
    if (else_case.defined() && is_no_op(else_case)) else_case = Stmt();
    if (is_no_op(then_case) && !else_case.defined()) return make_no_op();
    if (cond.same_as(op->condition) && then_case.same_as(op->then_case) &&
        else_case.same_as(op->else_case))
        return op;
    return IfThenElse::make(cond, then_case, else_case);
}

Stmt Simplifier::visit(const Seq* op) {
    std::vector<Stmt> kept;
    bool changed = false;
    for (const Stmt& s : op->stmts) {
        Stmt r = mutate(s);
        changed = changed || !r.same_as(s);
        if (is_no_op(r)) {
            changed = true;
            continue;
        }
        kept.push_back(r);
    }
    if (!changed) return op;
    if (kept.empty()) return make_no_op();
    return Seq::make(std::move(kept));
}

Stmt Simplifier::visit(const AssertStmt* op) {
    Expr cond = mutate(op->condition);
    if (is_const_int(cond, 1)) return make_no_op();
    if (cond.same_as(op->condition)) return op;
    return AssertStmt::make(cond, op->message);
}

Stmt Simplifier::visit(const Allocate* op) {
    Stmt s = IRMutator::visit(op);
    const auto* a = s.as<Allocate>();
    return (a && is_no_op(a->body)) ? make_no_op() : s;
}

Stmt Simplifier::visit(const AttrStmt* op) {
    Stmt s = IRMutator::visit(op);
    const auto* a = s.as<AttrStmt>();
    return (a && is_no_op(a->body)) ? make_no_op() : s;
}

Stmt Simplifier::visit(const Evaluate* op) {
    const Call* c = op->value.as<Call>();
    const bool tiles = c && (is_tensor_core_intrinsic(c->op) || c->op == Intrinsic::dot_product);
    tile_operands_ += tiles ? 1 : 0;
    Expr v = mutate(op->value);
    tile_operands_ -= tiles ? 1 : 0;
    if (const_bits(v) && !is_zero(v)) return make_no_op();
    if (v.same_as(op->value)) return op;
    return Evaluate::make(v);
}

}  // namespace tessel::internal
