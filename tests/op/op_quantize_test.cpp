// Quantized operators (op/Quantize.h): requantize's rounding and saturation on chosen values,
// qlinear_dense, qlinear_matmul and qlinear_conv2d_nchw of every 8-bit operand pair under their
// default CPU and GPU schedules against the reference interpreter at odd shapes; their structure
// (the product is op::dense's / op::conv2d_nchw's plain reduction), and their workloads.
// The scales are small integers times powers of two, computed by stages: the requantization is
// then exact in float32 as in the reference interpreter's double, ties included, so the kernels
// must match it bit for bit. tests/python/test_quantize.py checks float32 multipliers against
// numpy.
#include "op/OpTestUtil.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/op/Matmul.h"
#include "tessel/op/Quantize.h"
#include "tessel/op/Reduce.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::testing {
namespace {

const Type i8 = Int(8), u8 = UInt(8), i32 = Int(32), f32 = Float(32);

// A float32 scale computed by a stage: one value (shape () or, `one_d`, (1,)) of `value`, or
// `channels` values (j % 5 + 1) * value.
Tensor scale(double value, int64_t channels = 0, bool one_d = false) {
    if (channels == 0 && !one_d)
        return compute(
            std::vector<Expr>{}, [=](const std::vector<Var>&) { return make_const(f32, value); },
            "scale");
    return compute(
        {make_const(Int(32), channels == 0 ? 1 : channels)},
        [=](Var j) { return cast(f32, floormod(j, 5) + 1) * make_const(f32, value); }, "scale");
}

// x (uint8: values in [0, 10]) by w (int8: [-10, 10]) gives accumulators of a few hundred;
// multipliers of k/16 saturate some results, leave most inside and meet ties.
op::QuantParams quant(Type t, double s, int64_t channels = 0, const char* name = "zp") {
    std::vector<Expr> shape;
    if (channels > 0) shape.push_back(make_const(Int(32), channels));
    return {scale(s, channels), placeholder(shape, t, name)};
}

// The stage of `y`'s DAG called `name`.
Tensor stage_named(const Tensor& y, const std::string& name) {
    for (const Operation& op : topo_order({y}))
        if (op->name == name) return op_output(op, 0);
    ADD_FAILURE() << "no stage " << name;
    return Tensor();
}

TEST(OpQuantize, RequantizeRoundsHalfToEvenAndSaturates) {
    Tensor x = placeholder({12}, i32, "x");
    Tensor zp = placeholder(std::vector<Expr>{}, i8, "zp");
    Tensor y = op::requantize(x, scale(0.5), zp);
    EXPECT_EQ(y.dtype(), i8);
    HostArray xs =
        HostArray::from_values(i32, {12}, {-5, -3, -1, 1, 3, 5, 6, 253, 254, 256, -258, -100000});
    HostArray zs = HostArray::from_values(i8, {}, {1});
    // x / 2 rounded half to even, plus 1, in [-128, 127].
    const std::vector<double> expected = {-1, -1, 1, 1, 3, 3, 4, 127, 127, 127, -128, -128};
    HostArray got = evaluate_reference({y}, {{x, xs}, {zp, zs}})[0];
    for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(got.get(i), expected[i]) << "x = " << xs.get(i);
    expect_default_schedules_match({y});
    Tensor zu = placeholder({1}, u8, "zu");
    EXPECT_EQ(op::requantize(x, scale(0.25, 0, true), zu).dtype(), u8);
}

TEST(OpQuantize, RequantizePerChannel) {
    Tensor x = placeholder({3, 7, 5}, i32, "x");
    for (int64_t axis : {1, -1}) {
        int64_t channels = axis == 1 ? 7 : 5;
        Tensor zp = placeholder({channels}, u8, "zp");
        expect_default_schedules_match({op::requantize(x, scale(2.0, channels), zp, axis)});
    }
    Tensor scalar = placeholder(std::vector<Expr>{}, i32, "s");
    expect_default_cpu_matches({op::requantize(scalar, scale(0.5), placeholder({1}, i8, "z"))});
}

TEST(OpQuantize, DenseOfEveryEightBitPair) {
    const std::pair<Type, Type> pairs[] = {{u8, i8}, {i8, i8}, {u8, u8}};
    for (auto [xt, wt] : pairs) {
        for (bool per_channel : {false, true}) {
            SCOPED_TRACE(xt.str() + " x " + wt.str() + (per_channel ? " per channel" : ""));
            Tensor x = placeholder({7, 37}, xt, "x"), w = placeholder({13, 37}, wt, "w");
            Tensor bias = per_channel ? placeholder({13}, i32, "B") : Tensor();
            op::QuantParams wq = quant(wt, 0.25, per_channel ? 13 : 0, "w_zp");
            Tensor y = op::qlinear_dense(x, quant(xt, 0.5, 0, "x_zp"), w, wq,
                                         quant(per_channel ? i8 : u8, 2.0, 0, "y_zp"), bias);
            EXPECT_EQ(y.dtype(), per_channel ? i8 : u8);
            expect_default_schedules_match({y}, 37);
        }
    }
}

TEST(OpQuantize, TheProductIsDensesPlainReduction) {
    Tensor x = placeholder({7, 37}, u8, "x"), w = placeholder({13, 37}, i8, "w");
    Tensor y = op::qlinear_dense(x, quant(u8, 0.5), w, quant(i8, 0.25, 13), quant(u8, 2.0));
    Tensor acc = stage_named(y, "qlinear_dense.acc");
    EXPECT_EQ(acc.dtype(), i32);
    EXPECT_EQ(dag_hash({acc}), dag_hash({op::dense(x, w)}));
    EXPECT_EQ(dag_hash({stage_named(y, "qlinear_dense.w_sum")}), dag_hash({op::sum(w, {1})}));
    EXPECT_EQ(dag_hash({stage_named(y, "qlinear_dense.x_sum")}), dag_hash({op::sum(x, {1})}));
}

TEST(OpQuantize, MatmulTakesBAsOnnxDoes) {
    Tensor a = placeholder({7, 37}, i8, "a"), b = placeholder({37, 13}, u8, "b");
    Tensor y = op::qlinear_matmul(a, quant(i8, 0.5), b, quant(u8, 0.25, 13), quant(i8, 2.0));
    EXPECT_EQ(dag_hash({stage_named(y, "qlinear_matmul.acc")}), dag_hash({op::matmul(a, b)}));
    expect_default_schedules_match({y}, 37);
}

TEST(OpQuantize, Conv2dPadsWithTheZeroPoint) {
    Tensor x = placeholder({2, 5, 9, 8}, u8, "x"), w = placeholder({6, 5, 3, 3}, i8, "w");
    for (bool per_channel : {false, true}) {
        SCOPED_TRACE(per_channel ? "per channel" : "per tensor");
        Tensor bias = per_channel ? Tensor() : placeholder({6}, i32, "B");
        Tensor y = op::qlinear_conv2d_nchw(x, quant(u8, 0.5, 0, "x_zp"), w,
                                           quant(i8, 0.125, per_channel ? 6 : 0, "w_zp"),
                                           quant(u8, 2.0, 0, "y_zp"), bias, op::conv_params(2, 1));
        EXPECT_EQ(y.dtype(), u8);
        expect_default_schedules_match({y}, 45);
    }
}

TEST(OpQuantize, Conv2dGroupsDilationAndNoPadding) {
    Tensor x = placeholder({1, 6, 11, 10}, i8, "x"), w = placeholder({9, 2, 3, 3}, i8, "w");
    op::Conv2DParams p = op::conv_params(1, 2, 2, 3);
    p.padding = {2, 1, 0, 2};
    Tensor y = op::qlinear_conv2d_nchw(x, quant(i8, 0.5), w, quant(i8, 0.25, 9), quant(i8, 2.0),
                                       placeholder({9}, i32, "B"), p);
    expect_default_schedules_match({y}, 18);
    // Without padding the product is conv2d_nchw's.
    Tensor plain = op::qlinear_conv2d_nchw(x, quant(i8, 0.5), w, quant(i8, 0.25), quant(u8, 2.0),
                                           Tensor(), op::conv_params(1, 0, 1, 3));
    EXPECT_EQ(dag_hash({stage_named(plain, "qlinear_conv2d_nchw.acc")}),
              dag_hash({op::conv2d_nchw(x, w, op::conv_params(1, 0, 1, 3))}));
    expect_default_cpu_matches({plain}, 18);
}

TEST(OpQuantize, WorkloadsBuildByName) {
    using V = WorkloadParams;
    TensorDAG dense = make_workload("op.qlinear_dense", V{int64_t(7), int64_t(13), int64_t(37),
                                                          int64_t(1), int64_t(1), u8, i8, u8});
    EXPECT_EQ(dense.inputs.size(), 9u);
    EXPECT_EQ(dense.outputs[0].dtype(), u8);
    EXPECT_EQ(dense.inputs[4].name(), "w_scale");
    EXPECT_EQ(const_shape(dense.inputs[4]), std::vector<int64_t>{13});
    TensorDAG conv =
        make_workload("op.qlinear_conv2d_nchw",
                      V{int64_t(1), int64_t(4), int64_t(7), int64_t(7), int64_t(6),
                        std::vector<int64_t>{3}, std::vector<int64_t>{2}, std::vector<int64_t>{1},
                        std::vector<int64_t>{1}, int64_t(2), int64_t(0), int64_t(0), i8, i8, i8});
    EXPECT_EQ(conv.inputs.size(), 8u);
    EXPECT_EQ(const_shape(conv.outputs[0]), (std::vector<int64_t>{1, 6, 4, 4}));
    EXPECT_EQ(conv.outputs[0].dtype(), i8);
}

}  // namespace
}  // namespace tessel::testing
