// Rewrite rules for integer and float arithmetic, min/max and vectors, one per line, grouped by
// node type. Rules here run after constant folding and before the built-in rewrites
// (SimplifyBuiltins.cpp: linear forms, division by constants, comparisons). A rule marked
// no_overflow assumes index arithmetic (signed int32/int64, see ir/IR.h); the others are exact
// under wrapping.
#include "Simplifier.h"

namespace tessel::internal {

using namespace pattern;

// clang-format off
const std::vector<Rule>& int_rules() {
    static const std::vector<Rule> rules = {
        // Add
        rule(x + 0, x),
        rule(ramp(x, y) + broadcast(z), ramp(x + z, y)),
        rule(ramp(x, y) + ramp(z, w), ramp(x + z, y + w)),
        rule(min(x, y) + max(x, y), x + y),
        rule(select(x, c0, c1) + c2, select(x, fold(c0 + c2), fold(c1 + c2))),
        // Sub
        rule(x - 0, x),
        rule(x - x, 0),
        rule(ramp(x, y) - broadcast(z), ramp(x - z, y)),
        rule(broadcast(x) - ramp(y, z), ramp(x - y, 0 - z)),
        rule(ramp(x, y) - ramp(z, w), ramp(x - z, y - w)),
        rule(min(x, y) - x, min(y - x, 0), no_overflow),
        rule(max(x, y) - x, max(y - x, 0), no_overflow),
        rule(x - min(x, y), max(x - y, 0), no_overflow),
        rule(x - max(x, y), min(x - y, 0), no_overflow),
        rule(min(x + c0, y) - x, min(y - x, c0), no_overflow),
        rule(max(x + c0, y) - x, max(y - x, c0), no_overflow),
        rule(min(x, y) - min(y, x), 0),
        rule(max(x, y) - max(y, x), 0),
        // Mul
        rule(x * 0, 0),
        rule(x * 1, x),
        rule(ramp(x, y) * broadcast(z), ramp(x * z, y * z)),
        rule(select(x, c0, c1) * c2, select(x, fold(c0 * c2), fold(c1 * c2))),
        // Div (truncating)
        rule(truncdiv(x, 0), 0),
        rule(truncdiv(x, 1), x),
        rule(truncdiv(x, -1), 0 - x),
        rule(truncdiv(x, y), floordiv(x, y), lower(x) >= 0 && lower(y) >= 0),
        // Mod (truncating)
        rule(truncmod(x, 0), 0),
        rule(truncmod(x, 1), 0),
        rule(truncmod(x, -1), 0),
        rule(truncmod(x, y), floormod(x, y), lower(x) >= 0 && lower(y) >= 0),
        // FloorDiv
        rule(floordiv(x, 0), 0),
        rule(floordiv(x, 1), x),
        rule(floordiv(x, -1), 0 - x),
        rule(floordiv(floordiv(x, c0), c1), floordiv(x, fold(c0 * c1)),
             c0 > 0 && c1 > 0 && c0 * c1 <= type_max),
        rule(floordiv(x * c0, c1), floordiv(x, fold(c1 / c0)),
             c0 > 0 && c1 > 0 && c1 % c0 == 0 && no_overflow),
        rule(floordiv(floormod(x, c0), c1), 0, c0 > 0 && c1 >= c0),
        // FloorMod
        rule(floormod(x, 0), 0),
        rule(floormod(x, 1), 0),
        rule(floormod(x, -1), 0),
        rule(floormod(x, c0), x, c0 > 0 && lower(x) >= 0 && upper(x) < c0),
        rule(floormod(floormod(x, c0), c1), floormod(x, c1), c0 > 0 && c1 > 0 && c0 % c1 == 0),
        rule(floormod(x * c0, c1), floormod(x, fold(c1 / c0)) * c0,
             c0 > 0 && c1 > 0 && c1 % c0 == 0 && no_overflow),
        // Min
        rule(min(x, x), x),
        rule(min(x, y), x, prove(x <= y)),
        rule(min(min(x, y), x), min(x, y)),
        rule(min(min(x, y), min(x, z)), min(min(x, y), z)),
        rule(min(max(x, y), x), x),
        rule(min(max(x, y), min(x, z)), min(x, z)),
        rule(min(min(x, c0), c1), min(x, fold(min(c0, c1)))),
        rule(min(max(x, c0), c1), c1, c0 >= c1),
        rule(min(x * c0, y * c0), min(x, y) * c0, c0 > 0 && no_overflow),
        rule(min(x * c0, y * c0), max(x, y) * c0, c0 < 0 && no_overflow),
        rule(min(x + z, y + z), min(x, y) + z, no_overflow),
        rule(min(x - z, y - z), min(x, y) - z, no_overflow),
        rule(min(z - x, z - y), z - max(x, y), no_overflow),
        rule(min(floordiv(x, c0), floordiv(y, c0)), floordiv(min(x, y), c0), c0 > 0),
        rule(min(ramp(x, c0), broadcast(y)), broadcast(y), prove(y <= x) && c0 >= 0 && no_overflow),
        // Max
        rule(max(x, x), x),
        rule(max(x, y), x, prove(y <= x)),
        rule(max(max(x, y), x), max(x, y)),
        rule(max(max(x, y), max(x, z)), max(max(x, y), z)),
        rule(max(min(x, y), x), x),
        rule(max(min(x, y), max(x, z)), max(x, z)),
        rule(max(max(x, c0), c1), max(x, fold(max(c0, c1)))),
        rule(max(min(x, c0), c1), c1, c0 <= c1),
        rule(max(x * c0, y * c0), max(x, y) * c0, c0 > 0 && no_overflow),
        rule(max(x * c0, y * c0), min(x, y) * c0, c0 < 0 && no_overflow),
        rule(max(x + z, y + z), max(x, y) + z, no_overflow),
        rule(max(x - z, y - z), max(x, y) - z, no_overflow),
        rule(max(z - x, z - y), z - min(x, y), no_overflow),
        rule(max(floordiv(x, c0), floordiv(y, c0)), floordiv(max(x, y), c0), c0 > 0),
        // Select
        rule(select(x, y, y), y),
        rule(select(!x, y, z), select(x, z, y)),
        rule(select(x, select(x, y, z), w), select(x, y, w)),
        rule(select(x, y, select(x, z, w)), select(x, y, w)),
        rule(select(x < y, x, y), min(x, y)),
        rule(select(x < y, y, x), max(x, y)),
        rule(select(x <= y, x, y), min(x, y)),
        rule(select(x <= y, y, x), max(x, y)),
        // Comparisons (more in SimplifyBuiltins.cpp: bounds, linear forms, modular facts)
        rule(x > y, y < x),
        rule(x >= y, y <= x),
        rule(x == x, true_p),
        rule(x != x, false_p),
        rule(x < x, false_p),
        rule(x <= x, true_p),
        rule(min(x, y) < x, y < x),
        rule(x < max(x, y), x < y),
        rule(max(x, y) <= x, y <= x),
        rule(x <= min(x, y), x <= y),
    };
    return rules;
}

const std::vector<Rule>& float_rules() {
    // Only exact identities: no reassociation, x + 0.0 and x - x stay (-0.0, NaN, inf).
    static const std::vector<Rule> rules = {
        rule(x + (-0.0), x),
        rule(x - 0.0, x),
        rule(x * 1.0, x),
        rule(x / 1.0, x),
        rule(min(x, x), x),
        rule(max(x, x), x),
        rule(select(x, y, y), y),
        rule(select(!x, y, z), select(x, z, y)),
        rule(x > y, y < x),
        rule(x >= y, y <= x),
        rule(x < x, false_p),
    };
    return rules;
}
// clang-format on

}  // namespace tessel::internal
