// Measurement as plain data (auto_schedule/measure/MeasureRunner.h): requests and results survive
// JSON, the local runner measures a request rebuilt from its JSON alone, and a crashing or hanging
// candidate costs that candidate only; a request spread over several workers (one per GPU on GPU
// tasks) comes back in order, each candidate measured once.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/DaemonTestUtil.h"
#include "tessel/auto_schedule/measure/MeasureRunner.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/runtime/CUDA.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

MeasureOptions quick() {
    MeasureOptions o;
    o.min_repeat_ms = 1;
    o.build_threads = 1;
    o.run_timeout_seconds = 2;
    o.worker_path = TESSEL_MEASURE_TOOL;
    o.allow_test_faults = true;
    return o;
}

// `n` sampled states of `task` as measurement inputs (fewer when the sampler rejects some).
std::vector<MeasureInput> sampled_inputs(const SearchTask& task, int n, uint64_t seed) {
    std::vector<MeasureInput> inputs;
    for (const SearchState& s : SearchSpace(task).sample(n, seed).states)
        inputs.push_back({s.schedule});
    return inputs;
}

}  // namespace

TEST(MeasureRunner, RequestsAndResultsSurviveJson) {
    SearchTask task = small_task();
    MeasureRequest req = make_measure_request(
        task, {{task.initial_schedule(), CandidateOrigin::Random, TestFault::Hang}}, quick());
    MeasureRequest back = measure_request_from_json(measure_request_to_json(req));
    EXPECT_EQ(back.task_key, task.key());
    EXPECT_EQ(SearchTask::from_json(back.task_json).key(), task.key());
    ASSERT_EQ(back.candidates.size(), 1u);
    EXPECT_EQ(back.candidates[0].schedule_json, req.candidates[0].schedule_json);
    EXPECT_EQ(back.candidates[0].origin, CandidateOrigin::Random);
    EXPECT_EQ(back.candidates[0].test_fault, TestFault::Hang);
    EXPECT_EQ(measure_options_to_json(back.options), measure_options_to_json(req.options));
    MeasureOptions spread = quick();
    spread.device_id = 3;
    spread.workers = 2;
    MeasureOptions spread_back = measure_options_from_json(measure_options_to_json(spread));
    EXPECT_EQ(spread_back.device_id, 3);
    EXPECT_EQ(spread_back.workers, 2);
    EXPECT_THROW(measure_options_from_json(R"({"number": 3})"), RuntimeError);
    // array_offset travels; a request of a tessel before it keeps the default placement.
    MeasureOptions placed = quick();
    placed.array_offset = 0;
    EXPECT_EQ(measure_options_from_json(measure_options_to_json(placed)).array_offset, 0);
    auto older = nlohmann::json::parse(measure_options_to_json(placed));
    older.erase("array_offset");
    EXPECT_EQ(measure_options_from_json(older.dump()).array_offset, 16);

    MeasureResult r;
    r.error = MeasureError::RunTimeout;
    r.error_message = "slow";
    r.costs = {1e-3, 2e-3};
    r.build_seconds = 0.5;
    MeasureResult rb = measure_result_from_json(measure_result_to_json(r));
    EXPECT_EQ(rb.error, r.error);
    EXPECT_EQ(rb.error_message, "slow");
    EXPECT_EQ(rb.costs, r.costs);
    EXPECT_EQ(rb.build_seconds, 0.5);

    EXPECT_THROW(measure_request_from_json("[1]"), RuntimeError);
    EXPECT_THROW(measure_request_from_json(R"({"task_key": 1})"), RuntimeError);
    EXPECT_THROW(measure_result_from_json(R"({"error": "none", "error_message": "",
        "costs": [-1], "build_seconds": 0, "run_seconds": 0, "timestamp": 0})"),
                 RuntimeError);
    EXPECT_THROW(measure_result_from_json(R"({"error": "melted"})"), RuntimeError);
}

TEST(MeasureRunner, TheLocalRunnerMeasuresARequestFromItsJsonAndACrashCostsOneCandidate) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_task();
    std::vector<MeasureInput> inputs = sampled_inputs(task, 3, 11);
    ASSERT_EQ(inputs.size(), 3u);
    inputs[0].test_fault = TestFault::Segfault;
    inputs[1].test_fault = TestFault::Hang;
    LocalMeasureRunner runner(quick());
    MeasureRequest req = make_measure_request(task, inputs, runner.options());
    req.candidates.push_back({R"({"workload_key": "1234", "steps": []})"});  // another DAG
    std::vector<MeasureResult> r =
        runner.run(measure_request_from_json(measure_request_to_json(req)));
    ASSERT_EQ(r.size(), 4u);
    EXPECT_EQ(r[0].error, MeasureError::Crash) << r[0].error_message;
    EXPECT_EQ(r[1].error, MeasureError::RunTimeout) << r[1].error_message;
    EXPECT_EQ(r[2].error, MeasureError::None) << r[2].error_message;
    EXPECT_FALSE(r[2].costs.empty());
    EXPECT_EQ(r[3].error, MeasureError::InstantiationError);
    EXPECT_EQ(runner.stats().candidates, 3);
}

// Worker counts: the option when given; otherwise one on a CPU task and one per CUDA device (at
// least one) on a GPU task; never more than the candidates.
TEST(MeasureRunner, WorkerCountFollowsTheDevicesAndTheCandidates) {
    MeasureOptions o;
    SearchTask cpu = small_task();
    SearchTask gpu("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                   Target("cuda -arch=sm_90"));
    EXPECT_EQ(LocalMeasureRunner::worker_count(cpu, o, 64), 1);
    EXPECT_EQ(LocalMeasureRunner::worker_count(gpu, o, 64), std::max(1, cuda_device_count()));
    o.workers = 4;
    EXPECT_EQ(LocalMeasureRunner::worker_count(cpu, o, 64), 4);
    EXPECT_EQ(LocalMeasureRunner::worker_count(gpu, o, 3), 3);
    EXPECT_EQ(LocalMeasureRunner::worker_count(gpu, o, 0), 1);
}

// A request spread over two workers (a CPU task with workers = 2: the path a machine with two
// GPUs takes, without GPUs) measures every candidate once, in two worker processes at the same
// time, and gives the results back in the request's order: a crash stays with its candidate.
TEST(MeasureRunner, ARequestSpreadOverWorkersComesBackInOrder) {
    TESSEL_SKIP_UNLESS_TUNING_RUNS();
    SearchTask task = small_task();
    std::vector<MeasureInput> inputs = sampled_inputs(task, 5, 13);
    ASSERT_EQ(inputs.size(), 5u);
    inputs[3].test_fault = TestFault::Segfault;  // worker 1's second candidate
    MeasureOptions o = quick();
    o.workers = 2;
    LocalMeasureRunner runner(o);
    std::vector<MeasureResult> r = runner.run(make_measure_request(task, inputs, o));
    ASSERT_EQ(r.size(), 5u);
    for (size_t k = 0; k < r.size(); ++k) {
        if (k == 3) {
            EXPECT_EQ(r[k].error, MeasureError::Crash) << r[k].error_message;
        } else {
            EXPECT_EQ(r[k].error, MeasureError::None) << k << ": " << r[k].error_message;
            EXPECT_FALSE(r[k].costs.empty());
        }
    }
    MeasureStats s = runner.stats();
    EXPECT_EQ(s.candidates, 5);
    EXPECT_EQ(s.workers_started, 2);  // one each (a crashed one is replaced when next needed)
}
