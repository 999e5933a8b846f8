// Every operator is a registered workload "op.<name>", and the network presets build.
#include <gtest/gtest.h>

#include "op/OpTestUtil.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/op/Networks.h"

namespace tessel {
namespace {

using P = WorkloadParams;
using V = std::vector<int64_t>;
const Type f32 = Float(32);
using testing::const_shape;

TEST(OpWorkloads, EveryOperatorBuildsByName) {
    const std::vector<std::pair<std::string, P>> cases = {
        {"op.unary", P{V{3, 5}, std::string("gelu"), f32}},
        {"op.binary", P{V{3, 5}, V{5}, std::string("add"), f32}},
        {"op.cast", P{V{3, 5}, std::string("int32"), f32}},
        {"op.clip", P{V{3, 5}, 0.0, 1.0, f32}},
        {"op.where", P{V{3, 5}, f32}},
        {"op.transpose", P{V{3, 5, 2}, V{2, 0, 1}, f32}},
        {"op.reshape", P{V{3, 4}, V{2, -1}, f32}},
        {"op.concatenate", P{V{3, 4}, int64_t(2), int64_t(1), f32}},
        {"op.split", P{V{6, 4}, int64_t(3), int64_t(0), f32}},
        {"op.pad", P{V{3, 4}, V{1, 0}, V{0, 2}, 0.0, f32}},
        {"op.take", P{V{5, 4}, V{3}, int64_t(0), f32}},
        {"op.sum", P{V{3, 4, 5}, V{0, 2}, int64_t(1), f32}},
        {"op.argmax", P{V{3, 4}, V{1}, int64_t(0), f32}},
        {"op.matmul", P{int64_t(8), int64_t(9), int64_t(10), int64_t(0), int64_t(1), f32}},
        {"op.batch_matmul", P{int64_t(2), int64_t(8), int64_t(9), int64_t(10), f32}},
        {"op.dense", P{int64_t(8), int64_t(9), int64_t(10), int64_t(1), std::string("relu"), f32}},
        {"op.conv2d_nchw", P{int64_t(1), int64_t(6), int64_t(9), int64_t(9), int64_t(9), V{3}, V{2},
                             V{1}, V{1}, int64_t(3), f32}},
        {"op.conv2d_nhwc", P{int64_t(1), int64_t(4), int64_t(9), int64_t(9), int64_t(8), V{3, 3},
                             V{1, 1}, V{1, 1, 1, 1}, V{2, 2}, int64_t(1), f32}},
        {"op.conv2d_nchwc", P{int64_t(1), int64_t(6), int64_t(9), int64_t(9), int64_t(8), V{3},
                              V{2}, V{1}, V{1}, int64_t(3), int64_t(4), f32}},
        {"op.conv2d_nchwc_winograd", P{int64_t(1), int64_t(8), int64_t(9), int64_t(7), int64_t(8),
                                       V{3}, V{1}, V{1}, V{1}, int64_t(4), int64_t(4), f32}},
        {"op.depthwise_conv2d_nchw", P{int64_t(1), int64_t(4), int64_t(9), int64_t(9), int64_t(1),
                                       V{3}, V{1}, V{1}, V{1}, f32}},
        {"op.conv2d_transpose_nchw", P{int64_t(1), int64_t(4), int64_t(5), int64_t(5), int64_t(2),
                                       V{3}, V{2}, V{1}, V{1}, V{1}, f32}},
        {"op.pool2d", P{int64_t(1), int64_t(3), int64_t(9), int64_t(9), std::string("avg"), V{3},
                        V{2}, V{1}, int64_t(0), f32}},
        {"op.global_pool2d",
         P{int64_t(1), int64_t(3), int64_t(5), int64_t(5), std::string("max"), f32}},
        {"op.adaptive_avg_pool2d",
         P{int64_t(1), int64_t(3), int64_t(7), int64_t(7), int64_t(3), int64_t(3), f32}},
        {"op.softmax", P{V{4, 9}, int64_t(-1), f32}},
        {"op.log_softmax", P{V{4, 9}, int64_t(0), f32}},
        {"op.batch_norm", P{V{1, 3, 4, 4}, int64_t(1), f32}},
        {"op.layer_norm", P{V{4, 9}, f32}},
        {"op.rms_norm", P{V{4, 9}, f32}},
    };
    for (const auto& [name, params] : cases) {
        SCOPED_TRACE(name);
        TensorDAG dag = make_workload(name, params);
        EXPECT_FALSE(dag.outputs.empty());
        EXPECT_FALSE(workload_key(name, params).empty());
    }
}

TEST(OpWorkloads, OperatorNamesDoNotShadowTheFuzzerBuiltins) {
    std::vector<std::string> names = workload_names();
    int ops = 0;
    for (const std::string& n : names) ops += n.rfind("op.", 0) == 0 ? 1 : 0;
    EXPECT_GE(ops, 30);
    EXPECT_NE(std::find(names.begin(), names.end(), "matmul"), names.end());
}

TEST(OpWorkloads, NetworkPresetsBuild) {
    for (const std::string& preset : op::network_preset_names()) {
        int layers = 0;
        for (const op::PresetLayer& l : op::network_preset(preset)) {
            SCOPED_TRACE(preset + ": " + workload_key(l.workload, l.params));
            EXPECT_NO_THROW(make_workload(l.workload, l.params));
            layers += l.count;
        }
        EXPECT_GT(layers, 0);
    }
    int convs = 0;
    for (const op::PresetLayer& l : op::network_preset("resnet50"))
        convs += l.workload == "op.conv2d_nchw" ? l.count : 0;
    EXPECT_EQ(convs, 53);  // the stem, 16 bottlenecks of 3 and 4 projections
}

// The blocked workload's operands are the blocked layouts; blocks must divide the channels.
TEST(OpWorkloads, BlockedConvWorkload) {
    auto params = [](int64_t cb, int64_t kb) {
        return P{int64_t(1), int64_t(6), int64_t(9), int64_t(11), int64_t(8), V{3},
                 V{2},       V{1},       V{1},       cb,          kb,         f32};
    };
    TensorDAG dag = make_workload("op.conv2d_nchwc", params(3, 4));
    ASSERT_EQ(dag.inputs.size(), 2u);
    EXPECT_EQ(const_shape(dag.inputs[0]), (V{1, 2, 9, 11, 3}));
    EXPECT_EQ(const_shape(dag.inputs[1]), (V{2, 2, 3, 3, 3, 4}));
    EXPECT_EQ(const_shape(dag.outputs[0]), (V{1, 2, 5, 6, 4}));
    EXPECT_THROW(make_workload("op.conv2d_nchwc", params(4, 4)), DSLError);  // 4 ∤ 6
    EXPECT_THROW(make_workload("op.conv2d_nchwc", params(3, 3)), DSLError);  // 3 ∤ 8
    EXPECT_THROW(make_workload("op.conv2d_nchwc", params(0, 4)), DSLError);
}

// A preset on blocked activations: every ResNet-50 convolution becomes op.conv2d_nchwc (the RGB
// stem's input in one block of 3), the pools and the dense stay, and each layer builds.
TEST(OpWorkloads, BlockedNetworkPreset) {
    std::vector<op::PresetLayer> plain = op::network_preset("resnet50");
    std::vector<op::PresetLayer> blocked =
        op::blocked_layers(plain, op::activation_block("NCHW16c"));
    ASSERT_EQ(blocked.size(), plain.size());
    int convs = 0;
    for (size_t i = 0; i < blocked.size(); ++i) {
        SCOPED_TRACE(workload_key(blocked[i].workload, blocked[i].params));
        EXPECT_EQ(blocked[i].count, plain[i].count);
        EXPECT_EQ(blocked[i].weights, plain[i].weights);
        if (plain[i].workload != "op.conv2d_nchw") {
            EXPECT_EQ(blocked[i].workload, plain[i].workload);
            continue;
        }
        ASSERT_EQ(blocked[i].workload, "op.conv2d_nchwc");
        convs += blocked[i].count;
        TensorDAG dag = make_workload(blocked[i].workload, blocked[i].params);
        const V x = const_shape(dag.inputs[0]), y = const_shape(dag.outputs[0]);
        EXPECT_EQ(x[4], i == 0 ? 3 : 16);
        EXPECT_EQ(y[4], 16);
        EXPECT_EQ(y[1] * 16, std::get<int64_t>(plain[i].params[4]));
    }
    EXPECT_EQ(convs, 53);
    EXPECT_EQ(op::blocked_layers(plain, op::activation_block("NCHW")).front().workload,
              "op.conv2d_nchw");
    // With Winograd (constant weights): the 3 x 3 stride-1 convolutions, and only they, take
    // op.conv2d_nchwc_winograd, whose workload has conv2d_nchwc's parameters and output.
    std::vector<op::PresetLayer> winograd = op::blocked_layers(plain, 16, true);
    int by_winograd = 0;
    for (size_t i = 0; i < winograd.size(); ++i) {
        SCOPED_TRACE(workload_key(winograd[i].workload, winograd[i].params));
        EXPECT_EQ(winograd[i].params, blocked[i].params);
        if (blocked[i].workload != "op.conv2d_nchwc") continue;
        const auto& kernel = std::get<V>(blocked[i].params[5]);
        const auto& stride = std::get<V>(blocked[i].params[6]);
        const bool three = kernel == V{3, 3} && stride == V{1, 1};
        EXPECT_EQ(winograd[i].workload, three ? "op.conv2d_nchwc_winograd" : "op.conv2d_nchwc");
        if (!three) continue;
        by_winograd += winograd[i].count;
        EXPECT_EQ(const_shape(make_workload(winograd[i].workload, winograd[i].params).outputs[0]),
                  const_shape(make_workload(blocked[i].workload, blocked[i].params).outputs[0]));
    }
    EXPECT_EQ(by_winograd, 13);
    EXPECT_EQ(op::activation_block("NCHW8c"), 8);
    for (const char* bad : {"NHWC", "NCHW1c", "NCHW65c", "NCHWc", "NCHW16", "NCHW-4c", "NCHW016c"})
        EXPECT_THROW(op::activation_block(bad), DSLError) << bad;
}

}  // namespace
}  // namespace tessel
