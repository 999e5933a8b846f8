// The input's scale is per-tensor: more than one value is refused.
#include "error/ExpectDSLError.h"
#include "tessel/op/Quantize.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpQlinearPerTensorScale, Throws) {
    Tensor a = placeholder({7, 8}, Int(8), "a"), b = placeholder({8, 3}, Int(8), "b");
    Tensor s = placeholder(std::vector<Expr>{}, Float(32), "s");
    Tensor zp = placeholder(std::vector<Expr>{}, Int(8), "zp");
    op::QuantParams aq{placeholder({3}, Float(32), "a_scale"), zp}, q{s, zp};
    expect_dsl_error([&] { op::qlinear_matmul(a, aq, b, q, q); },
                     {"qlinear_matmul", "parameter 'a_scale'",
                      "must hold one value (shape () or (1,))", "got shape (3,)"});
}
