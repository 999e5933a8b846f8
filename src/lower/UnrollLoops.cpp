#include "tessel/lower/UnrollLoops.h"

#include "PassUtil.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

/// True if `s` contains a For.
bool has_loop(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) { found = found || n->node_type == IRNodeType::For; });
    return found;
}

/// The number of leaf statements (stores, evaluates, asserts) of a loop-free statement.
int64_t leaf_steps(const Stmt& s) {
    int64_t steps = 0;
    post_order_visit(s, [&](const IRNode* n) {
        switch (n->node_type) {
            case IRNodeType::Store:
            case IRNodeType::BufferStore:
            case IRNodeType::Evaluate:
            case IRNodeType::AssertStmt: ++steps; break;
            default: break;
        }
    });
    return steps;
}

/// n simplified copies of `body`, copy k with `var` = min + k.
Stmt unroll(const Var& var, const Expr& min, int64_t n, const Stmt& body) {
    if (n <= 0) return internal::make_noop_stmt();
    std::vector<Stmt> copies;
    copies.reserve(n);
    for (int64_t k = 0; k < n; ++k) {
        Expr value = internal::fold_add(min, make_const(min.type(), k));
        copies.push_back(simplify(substitute(body, var, value)));
    }
    return Seq::make(std::move(copies));
}

class LoopUnroller : public IRMutator {
public:
    using IRMutator::visit;
    explicit LoopUnroller(int max_unroll) : max_unroll_(max_unroll) {}

protected:
    Stmt visit(const AttrStmt* op) override {
        if (op->key != kAutoUnrollMaxStep) return IRMutator::visit(op);
        std::optional<int64_t> n = as_const_int(op->value);
        TESSEL_CHECK(n.has_value()) << kAutoUnrollMaxStep << " of a non-constant " << op->value;
        int64_t saved = auto_max_step_;
        auto_max_step_ = *n;
        Stmt body = mutate(op->body);
        auto_max_step_ = saved;
        return body;
    }

    Stmt visit(const For* op) override {
        Stmt body = mutate(op->body);
        std::optional<int64_t> n = as_const_int(op->extent);
        if (op->kind == ForKind::Unrolled) {
            if (!n) return For::make(op->loop_var, op->min, op->extent, ForKind::Serial, body);
            TESSEL_CHECK(*n <= max_unroll_)
                << "unrolled loop " << op->loop_var.name() << " of extent " << *n
                << " exceeds the cap of " << max_unroll_ << ":\n"
                << Stmt(op);
            return unroll(op->loop_var, op->min, *n, body);
        }
        if (op->kind == ForKind::Serial && n && auto_max_step_ > 0 && !has_loop(body) &&
            *n * leaf_steps(body) <= auto_max_step_) {
            return unroll(op->loop_var, op->min, *n, body);
        }
        if (body.same_as(op->body)) return op;
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    }

private:
    int max_unroll_;
    int64_t auto_max_step_ = 0;
};

}  // namespace

Stmt unroll_loops(const Stmt& s, int max_unroll) {
    return LoopUnroller(max_unroll).mutate(s);
}

}  // namespace tessel
