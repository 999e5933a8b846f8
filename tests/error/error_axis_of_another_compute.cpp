// The index variable of one compute used in the body of another.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorAxisOfAnotherCompute, LeakedAxis) {
    Tensor A = placeholder({4}, Float(32), "A");
    Var leaked;
    compute({4}, [&](Var i) {
        leaked = i;
        return A(i);
    }, "B");
    expect_dsl_error([&] { compute({4}, [&](Var) { return A(leaked); }, "C"); },
                     {"compute 'C'", "axis 'i0'", "another compute"});
}
