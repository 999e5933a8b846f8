// A constant index outside [0, extent) of a constant extent.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorConstantIndexOutOfRange, PastTheEnd) {
    Tensor A = placeholder({4, 8}, Float(32), "A");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return A(i, 8); }, "B"); },
                     {"compute 'B'", "tensor 'A'", "index 8", "[0, 8)", "dimension 1"});
}

TEST(ErrorConstantIndexOutOfRange, Negative) {
    Tensor A = placeholder({4}, Float(32), "A");
    expect_dsl_error([&] { A(-1); }, {"tensor 'A'", "index -1", "[0, 4)", "dimension 0"});
}
