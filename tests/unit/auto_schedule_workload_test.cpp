// The workload registry: built-in workloads, parameters and their JSON, keys, registration
// (auto_schedule/task/Workload.h).
#include <gtest/gtest.h>

#include <cmath>

#include "SerializeTestUtil.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::constant_shape;
using tessel::testing::expect_round_trip;

namespace {

// Small parameters for every built-in workload.
const std::vector<std::pair<std::string, WorkloadParams>>& builtin_instances() {
    const Type f32 = Float(32);
    static const std::vector<std::pair<std::string, WorkloadParams>> instances = {
        {"elementwise_broadcast", {int64_t(5), int64_t(6), f32}},
        {"matmul", {int64_t(8), int64_t(6), int64_t(4), f32}},
        {"batch_matmul", {int64_t(2), int64_t(3), int64_t(4), int64_t(5), f32}},
        {"conv2d",
         {int64_t(1), int64_t(2), int64_t(7), int64_t(6), int64_t(3), int64_t(3), int64_t(1),
          int64_t(1), f32}},
        {"depthwise_conv", {int64_t(1), int64_t(2), int64_t(5), int64_t(4), int64_t(3), f32}},
        {"max_pool", {int64_t(1), int64_t(2), int64_t(7), int64_t(5), int64_t(3), int64_t(2), f32}},
        {"softmax", {int64_t(3), int64_t(7), f32}},
        {"layer_norm", {int64_t(3), int64_t(5), f32}},
        {"reduce_middle_axis", {int64_t(3), int64_t(4), int64_t(5), f32}},
        {"transpose", {int64_t(2), int64_t(3), int64_t(4), f32}},
        {"argmax", {int64_t(3), int64_t(9), f32}},
    };
    return instances;
}

}  // namespace

TEST(Workload, BuiltinsAreRegistered) {
    std::vector<std::string> names = workload_names();
    for (const auto& [name, params] : builtin_instances()) {
        EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
        EXPECT_EQ(workload_param_specs(name).size(), params.size()) << name;
    }
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Workload, EveryBuiltinBuildsAndRoundTripsThroughJson) {
    for (const auto& [name, params] : builtin_instances()) {
        SCOPED_TRACE(name);
        TensorDAG dag = make_workload(name, params);
        check_tensor_dag(dag, name);
        // Split the last stage's outermost axis: schedulable and lowerable the same way.
        expect_round_trip(
            dag, [](Schedule& s) { s.split(static_cast<int>(s.stages().size()) - 1, 0, 2); });
    }
}

TEST(Workload, MatmulHasItsParametersShapes) {
    TensorDAG dag = make_workload("matmul", {int64_t(8), int64_t(6), int64_t(4), Float(64)});
    ASSERT_EQ(dag.inputs.size(), 2u);
    EXPECT_EQ(constant_shape(dag.inputs[0]), (std::vector<int64_t>{8, 4}));
    EXPECT_EQ(constant_shape(dag.inputs[1]), (std::vector<int64_t>{4, 6}));
    EXPECT_EQ(constant_shape(dag.outputs[0]), (std::vector<int64_t>{8, 6}));
    EXPECT_EQ(dag.outputs[0].dtype(), Float(64));
    EXPECT_EQ(flop_count(dag.outputs), 2.0 * 8 * 6 * 4);
}

TEST(Workload, DtypeNamesAndIntsAreConverted) {
    TensorDAG a = make_workload("softmax", {int64_t(3), int64_t(4), std::string("float64")});
    EXPECT_EQ(a.outputs[0].dtype(), Float(64));
    register_workload("test_scale", {{"n", ParamKind::Int}, {"factor", ParamKind::Float}},
                      [](const WorkloadParams& p) {
                          Tensor X = placeholder({Expr(std::get<int64_t>(p[0]))}, Float(32), "X");
                          double f = std::get<double>(p[1]);
                          Tensor Y = compute(
                              {Expr(std::get<int64_t>(p[0]))},
                              [&](Var i) { return X(i) * make_const(Float(32), f); }, "Y");
                          return TensorDAG{{X}, {Y}};
                      });
    TensorDAG b = make_workload("test_scale", {int64_t(4), int64_t(3)});  // 3 → 3.0
    EXPECT_EQ(dag_to_string(b.outputs),
              dag_to_string(make_workload("test_scale", {int64_t(4), 3.0}).outputs));
    EXPECT_TRUE(unregister_workload("test_scale"));
    EXPECT_FALSE(unregister_workload("test_scale"));
}

TEST(Workload, RegisterReplaceAndUnregister) {
    auto builder = [](int64_t n) {
        return [n](const WorkloadParams&) {
            Tensor X = placeholder({Expr(n)}, Float(32), "X");
            Tensor Y = compute(
                {Expr(n)}, [&](Var i) { return X(i) + 1.0f; }, "Y");
            return TensorDAG{{X}, {Y}};
        };
    };
    register_workload("test_plus_one", {}, builder(3));
    EXPECT_EQ(constant_shape(make_workload("test_plus_one", {}).outputs[0])[0], 3);
    register_workload("test_plus_one", {}, builder(5), /*replace=*/true);
    EXPECT_EQ(constant_shape(make_workload("test_plus_one", {}).outputs[0])[0], 5);
    EXPECT_TRUE(unregister_workload("test_plus_one"));
}

TEST(Workload, ParamsRoundTripThroughJson) {
    WorkloadParams params = {int64_t(-3),
                             2.5,
                             3.0,
                             std::numeric_limits<double>::infinity(),
                             std::string("NCHW"),
                             Float(16),
                             std::vector<int64_t>{3, 3},
                             std::vector<int64_t>{},
                             std::numeric_limits<int64_t>::min()};
    std::string text = workload_params_to_json(params);
    EXPECT_EQ(text,
              "[-3,2.5,3.0,{\"float\":\"inf\"},\"NCHW\",{\"dtype\":\"float16\"},[3,3],[],"
              "-9223372036854775808]");
    WorkloadParams back = workload_params_from_json(text);
    ASSERT_EQ(back.size(), params.size());
    for (size_t i = 0; i < params.size(); ++i) {
        EXPECT_EQ(back[i].index(), params[i].index()) << i;
        EXPECT_EQ(param_to_string(back[i]), param_to_string(params[i])) << i;
    }
    WorkloadParams nan = workload_params_from_json("[{\"float\": \"nan\"}]");
    EXPECT_TRUE(std::isnan(std::get<double>(nan[0])));
}

TEST(Workload, KeyNamesTheWorkloadAndItsParameters) {
    WorkloadParams params = {int64_t(512), int64_t(512), int64_t(256), Float(32)};
    std::string key = workload_key("matmul", params);
    EXPECT_EQ(key, "[\"matmul\",512,512,256,{\"dtype\":\"float32\"}]");
    auto [name, back] = parse_workload_key(key);
    EXPECT_EQ(name, "matmul");
    EXPECT_EQ(workload_key(name, back), key);
}
