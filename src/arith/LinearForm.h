// Linear forms of integer expressions: sum of coefficient * term plus a constant, with
// coefficients modulo 2^bits (so the form is exact under wrapping arithmetic too).
#pragma once

#include <vector>

#include "tessel/ir/IR.h"

namespace tessel::internal {

struct LinearTerm {
    Expr term;      ///< a non-linear expression (variable, load, product of two terms ...)
    int64_t coeff;  ///< wrapped to the type's width, read as signed
};

/// sum(terms) + constant, terms in order of first appearance, none with coefficient 0.
struct LinearForm {
    Type type;
    std::vector<LinearTerm> terms;
    int64_t constant = 0;  ///< wrapped to the type's width, read as signed
    /// True if some coefficient or the constant wrapped: the form is then exact modulo 2^bits
    /// only, not as a mathematical sum (so it cannot decide comparisons).
    bool wrapped = false;

    /// Adds `scale * e`, flattening +, -, and * by constants.
    void add(const Expr& e, int64_t scale);
    /// Adds `coeff * term` for one opaque term.
    void add_term(const Expr& term, int64_t coeff);
    /// Adds `scale * other`.
    void add_form(const LinearForm& other, int64_t scale);
    /// Drops zero coefficients.
    void prune();
    bool is_constant() const { return terms.empty(); }
    /// gcd of all coefficients (0 if there are none).
    int64_t coeff_gcd() const;
};

/// The linear form of an integer expression (scalar or vector).
LinearForm linear_form(const Expr& e);
/// The linear form of a - b.
LinearForm linear_difference(const Expr& a, const Expr& b);
/// Merges `y - floordiv(y, c)*c` into `floormod(y, c)` and `floordiv(y, c)*c + floormod(y, c)`
/// into `y` (c a positive constant) where y's terms are all present; returns true if it did.
bool merge_div_mod(LinearForm* form);
/// Rebuilds an expression: positive terms first, then subtracted ones, then the constant.
Expr linear_to_expr(const LinearForm& form);

/// Wraps v to `bits` bits and reads it as signed.
int64_t wrap_signed(int64_t v, int bits);

}  // namespace tessel::internal
