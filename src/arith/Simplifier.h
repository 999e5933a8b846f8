// The simplifier's engine (internal): a mutator that simplifies children first, then rewrites
// each node with constant folding, the rule tables (SimplifyRules*.cpp) and the built-in
// rewrites that need more than a pattern (SimplifyBuiltins.cpp: linear forms, division by
// constants, comparisons, casts, vectors). Statements: SimplifyStmt.cpp.
#pragma once

#include <vector>

#include "LinearForm.h"
#include "PatternMatch.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"

namespace tessel::internal {

/// Constant bounds of variables, by identity.
using ConstScope = std::unordered_map<const Variable*, ConstInterval>;

/// Constant bounds of an integer or bool expression given constant bounds of variables
/// (ConstBounds.cpp). Wrap-aware: a result that could wrap is the type's whole range.
/// `cache` (optional) memoizes results by node; it must be cleared when `scope` changes.
ConstInterval find_const_bounds(
    const Expr& e, const ConstScope& scope,
    std::unordered_map<const ExprNode*, ConstInterval>* cache = nullptr);

/// The rule tables, by the class of the node's operand type.
const std::vector<Rule>& int_rules();
const std::vector<Rule>& float_rules();
const std::vector<Rule>& bool_rules();

class Simplifier : public IRMutator, public RuleContext {
public:
    /// Rewrites per simplify() call before the simplifier stops rewriting (a cycle guard).
    static constexpr int kMaxSteps = 100000;

    explicit Simplifier(const Analyzer& analyzer, const SimplifyOptions& options = {});
    using IRMutator::mutate;
    Expr mutate(const Expr& e) override;

    ConstInterval const_bounds(const Expr& e) override;
    ModularSet modular(const Expr& e) override;
    bool prove(const Expr& cond) override;

    /// Constant bounds of a linear form (valid for index arithmetic).
    ConstInterval linear_bounds(const LinearForm& f);

protected:
    Expr visit(const Let* op) override;
    Stmt visit(const For* op) override;
    Stmt visit(const LetStmt* op) override;
    Stmt visit(const IfThenElse* op) override;
    Stmt visit(const Seq* op) override;
    Stmt visit(const AssertStmt* op) override;
    Stmt visit(const Allocate* op) override;
    Stmt visit(const AttrStmt* op) override;
    Stmt visit(const Evaluate* op) override;

private:
    Expr rewrite(const Expr& e);
    Expr apply_rules(const Expr& e);
    /// SimplifyBuiltins.cpp: returns the rewritten expression or undefined.
    Expr rewrite_builtin(const Expr& e);
    Expr rewrite_linear(const Expr& e);
    Expr rewrite_div_mod(const Expr& e);
    Expr rewrite_compare(const Expr& e);
    Expr rewrite_cast(const Cast* op);
    Expr rewrite_swizzle(const Call* op);
    /// Decides a comparison through symbolic bounds (when some bound is symbolic).
    std::optional<bool> symbolic_decide(const Expr& cond);
    Expr lift_broadcast(const Expr& e);

    /// Binds v to [lo, hi] (and its symbolic interval) while a scope is open; see Binding.
    void push_binding(const Var& v, const Interval& symbolic, const ConstInterval& c,
                      const ModularSet& m);
    void pop_binding(const Var& v);

    SimplifyOptions options_;
    ConstScope const_scope_;
    ModularScope modular_;
    Scope symbolic_;
    struct Saved {
        const Variable* var;
        bool had_const, had_modular, had_symbolic;
        ConstInterval c;
        ModularSet m;
        Interval s;
    };
    std::vector<Saved> saved_;
    int steps_ = 0;
    /// > 0 inside the operands of a tensor-core intrinsic: a swizzle of a constant stays a call
    /// there (a tile operand names its buffer's swizzle by it, ir/IR.h).
    int tile_operands_ = 0;
    /// Nodes already at their fixed point (kept alive so pointers stay unique). Returning such
    /// a node unchanged is always sound, whatever the bindings.
    std::unordered_map<const ExprNode*, Expr> done_;
    /// Constant bounds by node under the current bindings (cleared when they change).
    std::unordered_map<const ExprNode*, ConstInterval> bounds_cache_;
    std::vector<Expr> bounds_cache_keep_;
};

/// True if `s` does nothing (Evaluate of a constant).
bool is_no_op(const Stmt& s);
/// The canonical statement that does nothing: Evaluate(0).
Stmt make_no_op();

}  // namespace tessel::internal
