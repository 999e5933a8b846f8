// The simplifier's pattern language: rewrite rules written with the IR's own operators over
// wildcards, matched against expressions at run time.
//
//     rule(x + 0, x)
//     rule(min(x + c0, x + c1), x + fold(min(c0, c1)), no_overflow)
//     rule(floordiv(x, c0), 0, c0 > 0 && lower(x) >= 0 && upper(x) < c0)
//
// x, y, z, w match any expression (a repeated wildcard must match equal expressions); c0..c3
// match integer constants (scalars or Broadcasts). Integer literals match integer constants of
// any integer type. Commutative nodes (+, *, min, max, ==, !=, &&, ||) also match with their
// operands swapped. A predicate is an expression over the constant wildcards evaluated exactly
// (128-bit), plus queries on the match: lower(x)/upper(x) (constant bounds), mod_coeff(x) /
// mod_base(x) (modular analysis), prove(cond), no_overflow (the matched type is index
// arithmetic, see IntMath.h), type_max/type_min (of the matched operands' type).
#pragma once

#include <memory>
#include <source_location>
#include <vector>

#include "tessel/arith/Interval.h"
#include "tessel/arith/Modular.h"
#include "tessel/ir/IR.h"

namespace tessel::internal {

enum class PatOp : uint8_t {
    Wild,        ///< any expression, index = wildcard number
    ConstWild,   ///< an integer constant, index = wildcard number
    IntLit,      ///< an integer literal
    FloatLit,    ///< a float literal (value in fvalue; -0.0 and 0.0 differ)
    BoolLit,     ///< true / false
    Node,        ///< an IR node (node = its type) with operands a, b, c
    Fold,        ///< rhs only: build a and fold its constants
    Lower,       ///< predicate: constant lower bound of a wildcard
    Upper,       ///< predicate: constant upper bound of a wildcard
    ModCoeff,    ///< predicate: modular coefficient of a wildcard
    ModBase,     ///< predicate: modular base of a wildcard
    Prove,       ///< predicate: the analyzer proves the built condition a
    NoOverflow,  ///< predicate: the matched type is index arithmetic
    TypeMax,     ///< predicate: largest value of the matched type
    TypeMin,     ///< predicate: smallest value of the matched type
    IsInt,       ///< predicate: the wildcard's type is an integer or bool type
};

struct PatNode;

/// A pattern: a tree of PatNodes shared between rules.
class Pat {
public:
    Pat() = default;
    Pat(int v);      // NOLINT: integer literal
    Pat(int64_t v);  // NOLINT
    Pat(double v);   // NOLINT: float literal
    explicit Pat(std::shared_ptr<const PatNode> n) : node_(std::move(n)) {}
    const PatNode* get() const { return node_.get(); }
    const PatNode* operator->() const { return node_.get(); }
    bool defined() const { return node_ != nullptr; }

private:
    std::shared_ptr<const PatNode> node_;
};

struct PatNode {
    PatOp op = PatOp::IntLit;
    IRNodeType node = IRNodeType::IntImm;
    int index = 0;
    int64_t value = 0;
    double fvalue = 0;
    Pat a, b, c;
};

Pat make_pat(PatOp op, IRNodeType node = IRNodeType::IntImm, Pat a = {}, Pat b = {}, Pat c = {},
             int index = 0, int64_t value = 0);

namespace pattern {
/// Wildcards (any expression) and constant wildcards; rule files `using namespace pattern`.
extern const Pat x, y, z, w, c0, c1, c2, c3;
extern const Pat true_p, false_p, no_overflow, type_max, type_min;
}  // namespace pattern

// Node patterns.
Pat operator+(const Pat& a, const Pat& b);
Pat operator-(const Pat& a, const Pat& b);
Pat operator*(const Pat& a, const Pat& b);
Pat operator<(const Pat& a, const Pat& b);
Pat operator<=(const Pat& a, const Pat& b);
Pat operator>(const Pat& a, const Pat& b);
Pat operator>=(const Pat& a, const Pat& b);
Pat operator==(const Pat& a, const Pat& b);
Pat operator!=(const Pat& a, const Pat& b);
Pat operator&&(const Pat& a, const Pat& b);
Pat operator||(const Pat& a, const Pat& b);
Pat operator!(const Pat& a);
/// In predicates: truncating remainder (exact, on 128 bits); in patterns: Mod.
Pat operator%(const Pat& a, const Pat& b);
/// In predicates: truncating quotient; in patterns: Div.
Pat operator/(const Pat& a, const Pat& b);
Pat min(const Pat& a, const Pat& b);
Pat max(const Pat& a, const Pat& b);
Pat floordiv(const Pat& a, const Pat& b);
Pat floormod(const Pat& a, const Pat& b);
Pat truncdiv(const Pat& a, const Pat& b);
Pat truncmod(const Pat& a, const Pat& b);
Pat select(const Pat& c, const Pat& t, const Pat& f);
Pat ramp(const Pat& base, const Pat& stride);
Pat broadcast(const Pat& value);
// Replacement and predicate helpers.
Pat fold(const Pat& a);
Pat lower(const Pat& wild);
Pat upper(const Pat& wild);
Pat mod_coeff(const Pat& wild);
Pat mod_base(const Pat& wild);
Pat prove(const Pat& cond);
Pat is_int(const Pat& wild);

/// One rewrite rule: lhs → rhs when pred (if any) holds.
struct Rule {
    Pat lhs, rhs, pred;
    int line = 0;  ///< source line of the rule, for debugging
};

Rule rule(Pat lhs, Pat rhs, Pat pred = Pat(),
          std::source_location loc = std::source_location::current());

/// What the rules may ask about the expression being simplified.
class RuleContext {
public:
    virtual ~RuleContext() = default;
    virtual ConstInterval const_bounds(const Expr& e) = 0;
    virtual ModularSet modular(const Expr& e) = 0;
    virtual bool prove(const Expr& cond) = 0;
};

/// Bindings of one match.
struct MatchState {
    Expr wild[4];
    int64_t cval[4] = {0, 0, 0, 0};
    Type ctype[4];
    bool has_c[4] = {false, false, false, false};
    int lanes = 0;
    Type operand_type;  ///< type of the root node's operands
};

/// Tries `r` on `e`: the rewritten expression (not yet simplified), or undefined.
Expr apply_rule(const Rule& r, const Expr& e, RuleContext& ctx);

}  // namespace tessel::internal
