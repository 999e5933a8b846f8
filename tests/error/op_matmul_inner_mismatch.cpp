// matmul operands with different inner extents name `b`.
#include "error/ExpectDSLError.h"
#include "tessel/op/Matmul.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpMatmulInnerMismatch, Throws) {
    Tensor a = placeholder({3, 4}), b = placeholder({5, 6});
    expect_dsl_error([&] { op::matmul(a, b); },
                     {"matmul", "parameter 'b'", "inner extent 5", "a has 4"});
}
