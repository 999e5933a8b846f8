// Rewrite rules for bool-valued nodes (And, Or, Not, Select of bools, comparisons of bools), one
// per line, grouped by node type. Comparisons of integers are in SimplifyRulesArith.cpp.
#include "Simplifier.h"

namespace tessel::internal {

using namespace pattern;

// clang-format off
const std::vector<Rule>& bool_rules() {
    static const std::vector<Rule> rules = {
        // And
        rule(x && true_p, x),
        rule(x && false_p, false_p),
        rule(x && x, x),
        rule(x && !x, false_p),
        rule((x && y) && x, x && y),
        rule((x && y) && y, x && y),
        rule(x && (x || y), x),
        rule((x < c0) && (x < c1), x < fold(min(c0, c1))),
        rule((c0 < x) && (c1 < x), fold(max(c0, c1)) < x),
        rule((x <= c0) && (x <= c1), x <= fold(min(c0, c1))),
        rule((c0 <= x) && (c1 <= x), fold(max(c0, c1)) <= x),
        rule((x < c0) && (c1 < x), false_p, c0 <= c1 + 1),
        rule((x <= c0) && (c1 <= x), false_p, c0 < c1),
        rule((x == c0) && (x == c1), false_p, c0 != c1),
        rule((x < y) && (y < x), false_p),
        rule((x < y) && (y <= x), false_p),
        rule((x <= y) && (y <= x), x == y, is_int(x)),
        // Or
        rule(x || true_p, true_p),
        rule(x || false_p, x),
        rule(x || x, x),
        rule(x || !x, true_p),
        rule((x || y) || x, x || y),
        rule((x || y) || y, x || y),
        rule(x || (x && y), x),
        rule((x < c0) || (x < c1), x < fold(max(c0, c1))),
        rule((c0 < x) || (c1 < x), fold(min(c0, c1)) < x),
        rule((x <= c0) || (x <= c1), x <= fold(max(c0, c1))),
        rule((c0 <= x) || (c1 <= x), fold(min(c0, c1)) <= x),
        rule((x < y) || (y <= x), true_p, is_int(x)),
        rule((x < y) || (y < x), x != y, is_int(x)),
        // Not
        rule(!!x, x),
        rule(!(x == y), x != y),
        rule(!(x != y), x == y),
        rule(!(x < y), y <= x, is_int(x)),
        rule(!(x <= y), y < x, is_int(x)),
        rule(!(x > y), x <= y, is_int(x)),
        rule(!(x >= y), x < y, is_int(x)),
        // Select (bool values)
        rule(select(x, y, y), y),
        rule(select(!x, y, z), select(x, z, y)),
        rule(select(x, true_p, false_p), x),
        rule(select(x, false_p, true_p), !x),
        rule(select(x, y, false_p), x && y),
        rule(select(x, true_p, y), x || y),
        rule(select(x, false_p, y), !x && y),
        rule(select(x, y, true_p), !x || y),
        rule(select(x, select(x, y, z), w), select(x, y, w)),
        rule(select(x, y, select(x, z, w)), select(x, y, w)),
        // Comparisons of bools
        rule(x > y, y < x),
        rule(x >= y, y <= x),
        rule(x == x, true_p),
        rule(x != x, false_p),
        rule(x == true_p, x),
        rule(x == false_p, !x),
        rule(x != true_p, !x),
        rule(x != false_p, x),
    };
    return rules;
}
// clang-format on

}  // namespace tessel::internal
