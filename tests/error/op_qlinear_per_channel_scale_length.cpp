// A per-channel weight scale of the wrong length says how many values it needs.
#include "error/ExpectDSLError.h"
#include "tessel/op/Quantize.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorOpQlinearPerChannelScaleLength, Throws) {
    Tensor x = placeholder({7, 8}, UInt(8), "x"), w = placeholder({13, 8}, Int(8), "w");
    Tensor s = placeholder(std::vector<Expr>{}, Float(32), "s");
    op::QuantParams xq{s, placeholder(std::vector<Expr>{}, UInt(8), "x_zp")};
    op::QuantParams wq{placeholder({5}, Float(32), "w_scale"),
                       placeholder(std::vector<Expr>{}, Int(8), "w_zp")};
    expect_dsl_error(
        [&] { op::qlinear_dense(x, xq, w, wq, xq); },
        {"qlinear_dense", "parameter 'w_scale'", "one per row of w (13,)", "got shape (5,)"});
}
