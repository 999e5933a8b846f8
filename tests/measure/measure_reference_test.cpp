// The reference a task's candidates are checked against: the reference interpreter for small
// tasks, and for large ones the default schedule's output, trusted only once the interpreter
// agrees with it at sampled points.
#include <gtest/gtest.h>

#include "tessel/driver/Build.h"

#include "auto_schedule/measure/MeasureInternal.h"
#include "measure/MeasureTestUtil.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;
using namespace tessel::testing;

TEST(MeasureReference, LargeTasksUseACheckedDefaultScheduleBuild) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task(48);
    MeasureOptions options = fast_options();
    options.reference_flop_limit = 0;  // as a 1024^3 GEMM would
    options.allow_test_faults = true;
    Measurer measurer(options);
    std::vector<MeasureResult> r = measurer.measure(
        task, {{good_schedule(task)},
               {task.initial_schedule()},
               {good_schedule(task), CandidateOrigin::Manual, TestFault::WrongValues}});
    EXPECT_TRUE(r[0].ok()) << r[0].error_message;
    EXPECT_TRUE(r[1].ok()) << r[1].error_message;  // the naive loop nest computes the same
    EXPECT_EQ(r[2].error, MeasureError::WrongAnswer) << r[2].error_message;
    EXPECT_GT(measurer.stats().reference, 0);
}

TEST(MeasureReference, SampledCheckCatchesAWrongOutputAndPassesARightOne) {
    SearchTask task = small_matmul_task(32);
    const TensorDAG& dag = task.dag();
    std::vector<std::pair<Tensor, HostArray>> inputs;
    for (size_t i = 0; i < dag.inputs.size(); ++i)
        inputs.emplace_back(dag.inputs[i],
                            HostArray::random(dag.inputs[i]->dtype, {32, 32}, 5 + i));
    HostArray right = evaluate_reference(dag.outputs, inputs)[0].with_storage(ArrayStorage::Native);
    std::vector<Tolerance> tol = {tolerance_for(Float(32), 32)};
    auto ok = internal::check_at_samples(dag, inputs, {right}, tol, 16, 3);
    EXPECT_TRUE(ok.at(0).ok) << ok[0].message();
    HostArray wrong = right;
    for (int64_t i = 0; i < wrong.size(); ++i) wrong.set(i, wrong.get(i) + 0.5);
    auto bad = internal::check_at_samples(dag, inputs, {wrong}, tol, 16, 3);
    EXPECT_FALSE(bad.at(0).ok);
    EXPECT_EQ(bad[0].mismatches, 16);
}

TEST(MeasureReference, InputsAreRandomAndNeverZero) {
    SearchTask task = small_matmul_task(32);
    internal::WorkerProcess worker(default_measure_worker_path(), 0, false);
    internal::TaskData data = internal::prepare_task(task, fast_options(), worker);
    ASSERT_EQ(data.inputs.size(), 2u);
    for (const HostArray& a : data.inputs) {
        double sum = 0;
        for (int64_t i = 0; i < a.size(); ++i) {
            EXPECT_NE(a.get(i), 0.0);
            sum += std::abs(a.get(i));
        }
        EXPECT_GT(sum / static_cast<double>(a.size()), 0.3);  // uniform in [-1, 1]: ~0.5
    }
    EXPECT_NE(data.inputs[0].get(0), data.inputs[1].get(0));
    EXPECT_EQ(worker.starts(), 0);  // a small task's reference needs no worker
}

// The worker places each CPU argument array_offset bytes past a page: by default where malloc
// places NumPy's and std::vector's large arrays (16), 0 on request; other offsets are refused.
TEST(MeasureReference, TheWorkerPlacesArgumentsWhereUsersArraysLie) {
    SearchTask task = small_matmul_task(32);
    for (int64_t offset : {16, 0, 4080}) {
        MeasureOptions options = fast_options();
        if (offset != 16) options.array_offset = offset;
        internal::WorkerProcess worker(default_measure_worker_path(), 0, false);
        internal::TaskData data = internal::prepare_task(task, options, worker);
        internal::WorkerProcess::Outcome o = worker.request(data.setup, 30);
        ASSERT_EQ(o.error, MeasureError::None) << o.message;
        EXPECT_EQ(o.header.at("placement"), nlohmann::json::array({offset, offset, offset}));
    }
    for (int64_t bad : {8, 4096, -16}) {
        MeasureOptions options = fast_options();
        options.array_offset = bad;
        EXPECT_THROW(Measurer{options}, RuntimeError) << bad;
    }
}

// Float outputs are compared in the worker (docs/tuning.md, "Check"): the message names the
// one damaged element, as the client's comparison would.
TEST(MeasureReference, TheWorkerComparesFloatOutputsAndNamesTheWorstElement) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task(16);
    MeasureOptions options = fast_options();
    options.allow_test_faults = true;
    Measurer measurer(options);
    std::vector<MeasureResult> r = measurer.measure(
        task, {{good_schedule(task), CandidateOrigin::Manual, TestFault::WrongValues},
               {good_schedule(task)}});
    ASSERT_EQ(r[0].error, MeasureError::WrongAnswer) << r[0].error_message;
    EXPECT_NE(r[0].error_message.find("1 of 256 elements differ; worst at [0, 0]"),
              std::string::npos)
        << r[0].error_message;
    EXPECT_TRUE(r[1].ok()) << r[1].error_message;
}

// Layout rewrite: a task whose B is constant has candidates that pre-transform it. The worker
// runs the module's pre_transform once and checks and times the kernel alone; the check passes
// against the reference interpreter and against the trusted default build (itself a kernel and
// its transform), and a wrong kernel is still caught.
TEST(MeasureReference, CandidatesWithAPreTransformAreCheckedAndTimed) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    const WorkloadParams params = {int64_t(37), int64_t(41), int64_t(29), Float(32)};
    Target target("llvm -num-cores=2");
    const std::string b = SearchTask("matmul", params, target).dag().inputs[1].name();
    SearchTask task("matmul", params, target, std::nullopt, {b});
    Schedule good = good_schedule(task);
    ASSERT_TRUE(has_pre_transform(good)) << good.to_python();
    for (double flop_limit : {1e12, 0.0}) {
        SCOPED_TRACE(flop_limit);
        MeasureOptions options = fast_options();
        options.reference_flop_limit = flop_limit;
        options.allow_test_faults = true;
        Measurer measurer(options);
        std::vector<MeasureResult> r =
            measurer.measure(task, {{good},
                                    {task.initial_schedule()},
                                    {good, CandidateOrigin::Manual, TestFault::WrongValues}});
        EXPECT_TRUE(r[0].ok()) << r[0].error_message;
        EXPECT_TRUE(r[1].ok()) << r[1].error_message;
        EXPECT_EQ(r[2].error, MeasureError::WrongAnswer) << r[2].error_message;
    }
}
