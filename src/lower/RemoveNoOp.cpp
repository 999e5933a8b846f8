#include "tessel/lower/RemoveNoOp.h"

#include "PassUtil.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

using internal::is_noop_stmt;
using internal::make_noop_stmt;

namespace {

/// True if evaluating `e` has an effect (it calls an impure intrinsic).
bool has_effect(const Expr& e) {
    bool found = false;
    post_order_visit(e, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Call)
            found = found || !intrinsic_is_pure(static_cast<const Call*>(n)->op);
    });
    return found;
}

class NoOpRemover : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const For* op) override {
        std::optional<int64_t> n = as_const_int(op->extent);
        if (n && *n <= 0) return make_noop_stmt();
        Stmt body = mutate(op->body);
        if (is_noop_stmt(body)) return body;
        if (body.same_as(op->body)) return op;
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    }

    Stmt visit(const IfThenElse* op) override {
        if (std::optional<int64_t> c = as_const_int(op->condition)) {
            Stmt taken = *c ? op->then_case : op->else_case;
            return taken.defined() ? mutate(taken) : make_noop_stmt();
        }
        Stmt then_case = mutate(op->then_case), else_case = mutate(op->else_case);
        if (else_case.defined() && is_noop_stmt(else_case)) else_case = Stmt();
        if (is_noop_stmt(then_case)) {
            if (!else_case.defined()) return then_case;
            return IfThenElse::make(Not::make(op->condition), else_case);
        }
        if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return op;
        return IfThenElse::make(op->condition, then_case, else_case);
    }

    Stmt visit(const Evaluate* op) override {
        if (has_effect(op->value) || (is_zero(op->value) && op->value.type() == Int(32))) return op;
        return make_noop_stmt();
    }

    Stmt visit(const AssertStmt* op) override {
        if (is_one(op->condition)) return make_noop_stmt();
        return op;
    }

    Stmt visit(const Store* op) override {
        const auto* load = op->value.as<Load>();
        if (load && load->buffer_var.same_as(op->buffer_var) && !op->predicate.defined() &&
            !load->predicate.defined() && structural_equal(load->index, op->index))
            return make_noop_stmt();
        return op;
    }

    Stmt visit(const Seq* op) override {
        std::vector<Stmt> kept;
        for (const Stmt& s : op->stmts) {
            Stmt t = mutate(s);
            if (!is_noop_stmt(t)) kept.push_back(t);
        }
        if (kept.empty()) return make_noop_stmt();
        if (kept.size() == op->stmts.size()) {
            bool same = true;
            for (size_t k = 0; k < kept.size(); ++k) same = same && kept[k].same_as(op->stmts[k]);
            if (same) return op;
        }
        return Seq::make(std::move(kept));
    }

    Stmt visit(const LetStmt* op) override { return keep_unless_body_empty(op); }
    Stmt visit(const AttrStmt* op) override { return keep_unless_body_empty(op); }

    Stmt visit(const Allocate* op) override {
        Stmt body = mutate(op->body);
        if (is_noop_stmt(body) || !uses_var(body, op->buffer_var)) return body;
        if (body.same_as(op->body)) return op;
        return Allocate::make(op->buffer_var, op->dtype, op->extents, op->scope, body);
    }

private:
    template <typename T>
    Stmt keep_unless_body_empty(const T* op) {
        Stmt s = IRMutator::visit(op);
        const T* node = s.as<T>();
        if (node && is_noop_stmt(node->body)) return node->body;
        return s;
    }
};

}  // namespace

Stmt remove_no_op(const Stmt& s) {
    return NoOpRemover().mutate(s);
}

}  // namespace tessel
