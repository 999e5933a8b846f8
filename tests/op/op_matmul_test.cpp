// matmul (every transpose), batch_matmul (batch broadcast) and dense (bias, fused activation)
// under their default CPU and GPU schedules, on prime sizes.
#include "op/OpTestUtil.h"
#include "tessel/op/Matmul.h"

namespace tessel::testing {
namespace {

TEST(OpMatmul, EveryTransposeOnPrimeSizes) {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            Tensor a = placeholder(ta ? std::vector<Expr>{11, 13} : std::vector<Expr>{13, 11});
            Tensor b = placeholder(tb ? std::vector<Expr>{17, 11} : std::vector<Expr>{11, 17});
            Tensor c = op::matmul(a, b, ta, tb);
            EXPECT_EQ(const_shape(c), (std::vector<int64_t>{13, 17}));
            expect_default_schedules_match({c}, 11);
        }
}

TEST(OpMatmul, BatchMatmulBroadcastsABatchOfOne) {
    Tensor a = placeholder({3, 7, 5}), b = placeholder({1, 5, 9});
    Tensor c = op::batch_matmul(a, b);
    EXPECT_EQ(const_shape(c), (std::vector<int64_t>{3, 7, 9}));
    expect_default_schedules_match({c}, 5);
    Tensor bt = placeholder({3, 9, 5});
    expect_default_cpu_matches({op::batch_matmul(a, bt, false, true)}, 5);
}

TEST(OpMatmul, DenseWithBiasAndActivations) {
    Tensor x = placeholder({6, 19}), w = placeholder({13, 19}), bias = placeholder({13});
    for (op::Activation act :
         {op::Activation::None, op::Activation::ReLU, op::Activation::GELU, op::Activation::SiLU}) {
        expect_default_schedules_match({op::dense(x, w, bias, act)}, 19);
    }
    expect_default_cpu_matches({op::dense(x, w)}, 19);
    // Rows in a multiple of the vector width: the CPU tile is vectorised along the rows.
    Tensor rows = placeholder({32, 19});
    expect_default_cpu_matches({op::dense(rows, w, bias, op::Activation::ReLU)}, 19);
    expect_default_cpu_matches({op::dense(rows, w)}, 19);
    expect_default_cpu_matches({op::dense(x, w, Tensor(), op::Activation::Tanh)}, 19);
}

// One row (a matrix-vector product, ResNet's classifier): no output axis is a good vector axis
// and the weight's rows are dense along K, so the CPU schedule vectorises the reduction along K
// (rfactor) instead of tiling with a gather of the weight.
TEST(OpMatmul, DenseOfOneRowIsAVectorisedReduction) {
    Tensor x = placeholder({1, 64}), w = placeholder({13, 64}), bias = placeholder({13});
    for (Tensor y : {op::dense(x, w), op::dense(x, w, bias, op::Activation::ReLU)}) {
        Schedule s = op::default_schedule({y}, Target("llvm"));
        EXPECT_NE(s.to_python().find(".rfactor("), std::string::npos) << s.to_python();
        expect_default_cpu_matches({y}, 64);
    }
}

TEST(OpMatmul, EpilogueIsComputedInsideTheProductTile) {
    Tensor x = placeholder({16, 8}), w = placeholder({32, 8}), bias = placeholder({32});
    Tensor y = op::dense(x, w, bias, op::Activation::ReLU);
    Schedule s = op::default_schedule({y}, Target("llvm"));
    int product = s.stage_of(op_inputs(y.op())[0]);  // dense.matmul
    EXPECT_EQ(s.stage(product).attach, AttachKind::At) << s.to_python();
    EXPECT_EQ(s.stage(product).attach_stage, s.stage_of(y));
}

}  // namespace
}  // namespace tessel::testing
