// Symbolic interval analysis: bounds of an expression given bounds of its variables.
//
// An Interval's ends are expressions; an undefined end means unbounded (-inf for min, +inf for
// max). The scope maps variables to Intervals whose ends may mention other (outer) variables, so
// the bounds of `io*32 + ii` with ii in [0, 31] come out as [io*32, io*32 + 31]. Results are
// simplified. Index arithmetic (signed int32/int64) is assumed not to overflow (see ir/IR.h);
// for other integer types an end that could wrap makes the result the whole range of the type.
#pragma once

#include <unordered_map>

#include "tessel/ir/IR.h"

namespace tessel {

/// The closed interval [min, max]; an undefined end is unbounded.
struct Interval {
    Expr min;  ///< lower bound (inclusive), undefined: -infinity
    Expr max;  ///< upper bound (inclusive), undefined: +infinity

    Interval() = default;
    Interval(Expr min_, Expr max_) : min(std::move(min_)), max(std::move(max_)) {}
    /// The interval containing every value.
    static Interval everything() { return Interval(); }
    /// The interval [e, e].
    static Interval single_point(const Expr& e) { return Interval(e, e); }
    /// [r.min, r.min + r.extent - 1] of a half-open Range (simplified).
    static Interval from_range(const Range& r);

    bool has_lower_bound() const { return min.defined(); }
    bool has_upper_bound() const { return max.defined(); }
    /// Both ends are defined.
    bool is_bounded() const { return min.defined() && max.defined(); }
    /// Both ends are the same expression object (or structurally the same constant).
    bool is_single_point() const;
    /// Neither end is defined.
    bool is_everything() const { return !min.defined() && !max.defined(); }
};

/// Variable (by identity) → its interval.
using Scope = std::unordered_map<const Variable*, Interval>;

/// The smallest interval containing both (ends combined with simplified min/max).
Interval interval_union(const Interval& a, const Interval& b);
/// The intersection of both (ends combined with simplified max/min); may be empty.
Interval interval_intersect(const Interval& a, const Interval& b);

/// Bounds of `e` (scalar or vector: over all lanes) given the bounds of the variables in `scope`;
/// variables not in scope stand for themselves. Loads, tensor reads and unknown calls are bounded
/// by their type's range (integers) or unbounded.
Interval bounds_of(const Expr& e, const Scope& scope);

/// True if `cond` (a bool expression) holds for every value of the scope's variables within their
/// intervals. False means "could not prove", not "false".
bool can_prove(const Expr& cond, const Scope& scope);

/// Constant bounds of an integer expression, as int64 (unbounded ends are nullopt).
struct ConstInterval {
    std::optional<int64_t> min, max;
};

/// The constant bounds of the ends of `bounds_of(e, scope)` (each end's own constant bound).
ConstInterval const_bounds_of(const Expr& e, const Scope& scope);

}  // namespace tessel
