// Non-positive constant extents in placeholder and compute shapes.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorNonpositiveShape, ZeroExtentPlaceholder) {
    expect_dsl_error([] { placeholder({4, 0}, Float(32), "A"); },
                     {"placeholder 'A'", "dimension 1", "is 0", "positive"});
}

TEST(ErrorNonpositiveShape, NegativeExtentCompute) {
    expect_dsl_error([] { compute({3, -2}, [](Var i, Var) { return cast(Float(32), i); }, "B"); },
                     {"compute 'B'", "dimension 1", "is -2", "positive"});
}
