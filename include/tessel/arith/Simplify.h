// The simplifier: rewrites expressions and statements to simpler equivalent forms.
//
// Rewrites are rules as data (src/arith/SimplifyRules*.cpp, one rule per line, grouped by node
// type), plus constant folding of every node and a canonical linear form for integer sums
// (terms collected in order of first appearance, constant last: `(x*4 + y) + x*2` → `x*6 + y`).
// Rewriting runs to a fixed point under a step limit, so it never hangs.
//
// Soundness (see ir/IR.h): every rewrite is exact under IR.h's semantics, with one documented
// assumption: signed int32/int64 arithmetic ("index arithmetic") does not overflow, so rules like
// `floordiv(x*8 + y, 8)` → `x + floordiv(y, 8)` or `x + 3 < x + 5` → true apply to those types
// only. int8/int16 and unsigned arithmetic is simplified only by rewrites valid under wrapping.
// Floats are folded in their declared precision and rewritten only by exact identities (x*1 → x,
// x - 0 → x, never x + 0 → x nor x - x → 0).
//
// Statements: For with extent 1 becomes a LetStmt of the loop variable (then inlined when
// trivial); a statement that does nothing (For with extent <= 0, `if (false)` without else,
// `assert(true)`) becomes `Evaluate(0)`, and Evaluate(0) is dropped from Seqs.
#pragma once

#include "tessel/arith/Interval.h"
#include "tessel/arith/Modular.h"
#include "tessel/ir/IR.h"

namespace tessel {

/// What a simplification may do beyond the rewrites it always makes.
struct SimplifyOptions {
    /// swizzle(x + y) -> swizzle(x) + y (ir/IR.h) for every sum y of whole phase cycles (a
    /// pipelined loop's stage offset, a warp's block of rows) with x >= 0 and not constant: what
    /// changes with a loop stays outside the swizzle, and the CUDA compiler can hoist the rest.
    /// Lowering's last simplification only (after unroll_loops): a later substitution that made x
    /// constant would fold the swizzle call away, and a tensor-core tile operand needs its call.
    /// Without it only constant whole cycles move out.
    bool swizzle_cycles_out = false;
};

/// A simplification context: what is known about variables. Bind ranges, then simplify or prove.
///
///     Analyzer an;
///     an.bind(x, Range(0, 8));       // 0 <= x < 8
///     an.simplify(floordiv(x, 8));   // → 0
class Analyzer {
public:
    Analyzer() = default;
    /// v lies in the half-open range [r.min, r.min + r.extent); the ends may mention other
    /// variables (bind those first or leave them free).
    void bind(const Var& v, const Range& r);
    /// v lies in [min, max] (inclusive constant bounds).
    void bind(const Var& v, int64_t min, int64_t max);
    /// v lies in `bounds` (ends may be undefined or symbolic).
    void bind(const Var& v, const Interval& bounds);
    /// v ≡ m.base (mod m.coeff).
    void bind_modular(const Var& v, const ModularSet& m);
    /// Forgets what is known about v.
    void unbind(const Var& v);

    /// The simplified expression: equal to `e` for every value of the bound variables in their
    /// ranges.
    Expr simplify(const Expr& e, const SimplifyOptions& options = {}) const;
    /// The simplified statement (see the header comment for statement rewrites).
    Stmt simplify(const Stmt& s, const SimplifyOptions& options = {}) const;
    /// True if `cond` holds for all bound values; false means "not proven".
    bool can_prove(const Expr& cond) const;

    /// Constant bounds of an integer expression under the bindings.
    ConstInterval const_bounds(const Expr& e) const;
    /// Symbolic bounds of `e` under the bindings.
    Interval bounds(const Expr& e) const { return bounds_of(e, scope_); }
    /// Residue class of an integer expression under the modular bindings.
    ModularSet modular_set(const Expr& e) const { return modular_set_of(e, modular_); }

    const Scope& scope() const { return scope_; }
    const ModularScope& modular_scope() const { return modular_; }
    const std::unordered_map<const Variable*, ConstInterval>& const_scope() const { return const_; }

private:
    Scope scope_;
    ModularScope modular_;
    std::unordered_map<const Variable*, ConstInterval> const_;  ///< constant bounds of scope_
};

/// Simplifies `e` knowing nothing about its variables.
Expr simplify(const Expr& e);
/// Simplifies `s`; loop variables are known to lie within their loops' ranges inside the body.
Stmt simplify(const Stmt& s, const SimplifyOptions& options = {});

}  // namespace tessel
