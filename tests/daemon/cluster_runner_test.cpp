// Measurement on a cluster, the parts that need no Ray (docs/distributed.md): the simulated
// worker's costs and times, simulate_ms in the protocol's options, and ClusterMeasureRunner's
// fallback when its driver cannot run (tests/python/test_distributed.py runs a real cluster).
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "tessel/Error.h"
#include "tessel/auto_schedule/measure/ClusterMeasureRunner.h"
#include "tessel/auto_schedule/space/SearchSpace.h"

using namespace tessel;

namespace {

SearchTask small_task() {
    return SearchTask("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                      Target("llvm -num-cores=2"));
}

std::vector<MeasureInput> sampled_inputs(const SearchTask& task, int n) {
    std::vector<MeasureInput> inputs;
    for (const SearchState& s : SearchSpace(task).sample(n, 7).states)
        inputs.push_back({s.schedule});
    return inputs;
}

MeasureOptions simulated(double ms) {
    MeasureOptions o;
    o.simulate_ms = ms;
    o.worker_path = "/nonexistent/tessel-measure";  // never started: nothing is run
    return o;
}

}  // namespace

TEST(ClusterRunner, TheSimulatedWorkerCostsAreTheStepsHashAndItsTimeIsSlept) {
    SearchTask task = small_task();
    std::vector<MeasureInput> inputs = sampled_inputs(task, 4);
    ASSERT_GE(inputs.size(), 2u);
    Measurer m(simulated(20));
    auto t0 = std::chrono::steady_clock::now();
    std::vector<MeasureResult> r = m.measure(task, inputs);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(r.size(), inputs.size());
    EXPECT_GE(elapsed, 0.02 * static_cast<double>(inputs.size()));
    for (size_t i = 0; i < r.size(); ++i) {
        ASSERT_TRUE(r[i].ok()) << r[i].error_message;
        ASSERT_EQ(r[i].costs.size(), 1u);
        EXPECT_EQ(r[i].costs[0], simulated_cost(inputs[i].schedule));
        EXPECT_GE(r[i].costs[0], 1e-3);
        EXPECT_LT(r[i].costs[0], 2e-3);
        EXPECT_EQ(r[i].run_seconds, 0.02);
        EXPECT_EQ(r[i].build_seconds, 0.0);
    }
    EXPECT_EQ(m.stats().workers_started, 0);
    // Another Measurer (another process, another machine) gives the same costs.
    Measurer again(simulated(1));
    EXPECT_EQ(again.measure(task, inputs)[1].costs, r[1].costs);
    EXPECT_NE(simulated_cost(inputs[0].schedule), simulated_cost(inputs[1].schedule));
}

TEST(ClusterRunner, SimulateMsTravelsInTheProtocolAndDefaultsToZero) {
    MeasureOptions o = simulated(500);
    EXPECT_EQ(measure_options_from_json(measure_options_to_json(o)).simulate_ms, 500);
    // A request of a tessel before the field: measured for real.
    auto j = nlohmann::json::parse(measure_options_to_json(MeasureOptions{}));
    j.erase("simulate_ms");
    EXPECT_EQ(measure_options_from_json(j.dump()).simulate_ms, 0);
    j["simulate_ms"] = -1;
    EXPECT_THROW(measure_options_from_json(j.dump()), RuntimeError);
}

TEST(ClusterRunner, ALostDriverFallsBackToThisMachineOrFailsAsConfigured) {
    SearchTask task = small_task();
    std::vector<MeasureInput> inputs = sampled_inputs(task, 3);
    MeasureRequest request = make_measure_request(task, inputs, simulated(1));
    ClusterOptions o;
    o.address = "127.0.0.1:1";
    o.python = "/nonexistent/python3";  // the driver cannot even start
    o.fallback = ClusterFallback::Local;
    ClusterMeasureRunner local(o);
    nlohmann::json status = nlohmann::json::parse(local.status_json());
    EXPECT_EQ(status["state"], "local");
    EXPECT_NE(status["message"].get<std::string>().find("status 127"), std::string::npos)
        << status.dump();
    std::vector<MeasureResult> r = local.run(request);
    ASSERT_EQ(r.size(), inputs.size());
    for (size_t i = 0; i < r.size(); ++i)
        EXPECT_EQ(r[i].costs, std::vector<double>{simulated_cost(inputs[i].schedule)});
    EXPECT_EQ(local.stats().candidates, static_cast<int64_t>(inputs.size()));

    o.fallback = ClusterFallback::Fail;
    try {
        ClusterMeasureRunner fail(o);
        FAIL() << "a lost cluster with fallback fail must throw";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("127.0.0.1:1 is lost"), std::string::npos) << e.what();
    }
    o.address = "";
    EXPECT_THROW(ClusterMeasureRunner none(o), RuntimeError);
}

TEST(ClusterRunner, FallbackNamesRoundTrip) {
    for (ClusterFallback f : {ClusterFallback::Local, ClusterFallback::Wait, ClusterFallback::Fail})
        EXPECT_EQ(cluster_fallback_from_name(cluster_fallback_name(f)), f);
    EXPECT_FALSE(cluster_fallback_from_name("sometimes"));
}
