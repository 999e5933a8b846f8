// A batch whose candidates segfault, abort, hang, write out of bounds, return wrong values, run
// out of memory or never finish building (planted through MeasureInput::test_fault) finishes with
// each recorded under its error code, and the worker pool intact: the good candidates around them
// are measured, and crashed workers were replaced.
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessel/driver/Build.h"

#include "auto_schedule/measure/MeasureInternal.h"
#include "measure/MeasureTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

MeasureInput planted(const SearchTask& task, TestFault fault) {
    return {good_schedule(task), CandidateOrigin::Random, fault};
}

}  // namespace

TEST(MeasureFaults, BadCandidatesGetTheirErrorCodesAndTheTunerGoesOn) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task();
    MeasureOptions options = fast_options();
    options.allow_test_faults = true;
    options.run_timeout_seconds = 4;
#ifndef TESSEL_SANITIZED_BUILD
    options.worker_memory_limit_bytes = int64_t(384) << 20;  // quick to fill
#endif
    options.build_timeout_seconds = 1;
    Measurer measurer(options);
    std::vector<std::pair<TestFault, MeasureError>> cases = {
        {TestFault::None, MeasureError::None},
        {TestFault::Segfault, MeasureError::Crash},
        {TestFault::None, MeasureError::None},
        {TestFault::Abort, MeasureError::Crash},
        {TestFault::Hang, MeasureError::RunTimeout},
        {TestFault::OutOfBoundsWrite, MeasureError::OutOfBoundsWrite},
        {TestFault::WrongValues, MeasureError::WrongAnswer},
#ifndef TESSEL_SANITIZED_BUILD
        {TestFault::OutOfMemory, MeasureError::OutOfMemory},
#endif
        {TestFault::BuildHang, MeasureError::BuildTimeout},
        {TestFault::None, MeasureError::None},
        {TestFault::HangWhileTiming, MeasureError::RunTimeout},
        {TestFault::None, MeasureError::None},
        {TestFault::MalformedReply, MeasureError::WorkerError},
        {TestFault::None, MeasureError::None},
    };
    std::vector<MeasureInput> inputs;
    for (const auto& c : cases) inputs.push_back(planted(task, c.first));
    std::vector<MeasureResult> results = measurer.measure(task, inputs);
    ASSERT_EQ(results.size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE("candidate " + std::to_string(i) + ": " + results[i].error_message);
        EXPECT_EQ(std::string(measure_error_name(results[i].error)),
                  std::string(measure_error_name(cases[i].second)));
        EXPECT_EQ(results[i].ok(), !results[i].costs.empty());
        if (results[i].ok()) {
            EXPECT_GT(results[i].costs[0], 0);
        } else {
            EXPECT_FALSE(results[i].error_message.empty());
        }
        EXPECT_GT(results[i].timestamp, 1.6e9);
    }
#ifndef TESSEL_SANITIZED_BUILD  // a sanitizer reports the SEGV itself and exits
    EXPECT_NE(results[1].error_message.find("SIGSEGV"), std::string::npos);
    EXPECT_NE(results[3].error_message.find("SIGABRT"), std::string::npos);
#endif
    EXPECT_NE(results[5].error_message.find("past its end"), std::string::npos);
    EXPECT_NE(results[6].error_message.find("output 'C'"), std::string::npos)
        << results[6].error_message;
    // The first worker, one after the segfault, the abort, the hang and the hang while timing.
    EXPECT_EQ(measurer.stats().workers_started, 5);
    // The pool still works for the next batch.
    std::vector<MeasureResult> again = measurer.measure(task, {planted(task, TestFault::None)});
    EXPECT_TRUE(again[0].ok()) << again[0].error_message;
    EXPECT_TRUE(internal::wait_for_build_threads(120.0));  // the abandoned build, before exit
}

#if defined(__linux__)
namespace {

// The threads of this process at scheduling policy `policy` (field 41 of /proc/self/task/*/stat).
int threads_at_policy(int policy) {
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream in(entry.path() / "stat");
        std::string line;
        std::getline(in, line);
        size_t paren = line.rfind(')');  // the thread's name may hold spaces
        if (paren == std::string::npos) continue;
        std::istringstream fields(line.substr(paren + 2));
        std::string field;
        for (int k = 3; k <= 41 && fields >> field; ++k)
            if (k == 41 && std::stoi(field) == policy) ++n;
    }
    return n;
}

}  // namespace

// A build abandoned past its time limit goes on computing until it returns; it does so at
// SCHED_IDLE, so that it does not take a core from the candidates timed meanwhile.
TEST(MeasureFaults, AnAbandonedBuildFinishesAtIdlePriority) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task();
    MeasureOptions options = fast_options();
    options.allow_test_faults = true;
    options.build_timeout_seconds = 0.5;  // the planted build spins 4 x 0.5 + 0.5 s
    Measurer measurer(options);
    int before = threads_at_policy(SCHED_IDLE);
    std::vector<MeasureResult> r = measurer.measure(task, {planted(task, TestFault::BuildHang)});
    ASSERT_EQ(r[0].error, MeasureError::BuildTimeout);
    EXPECT_EQ(threads_at_policy(SCHED_IDLE), before + 1);  // still spinning, out of the way
    EXPECT_TRUE(internal::wait_for_build_threads(120.0));  // not ending the process under it
}

// A GPU candidate's abandoned build keeps its priority: NVRTC compiles under a process-wide
// mutex, which a starved SCHED_IDLE holder would keep from every later build. (The planted
// build spins before it lowers, so no CUDA backend is needed to see where it runs.)
TEST(MeasureFaults, AnAbandonedGpuBuildKeepsItsPriority) {
    SearchTask task(
        "op.matmul",
        {int64_t(64), int64_t(64), int64_t(64), int64_t(0), int64_t(0), std::string("float32")},
        Target("cuda -arch=sm_90"));
    int idle = threads_at_policy(SCHED_IDLE);
    MeasureInput hang{task.initial_schedule(), CandidateOrigin::Random, TestFault::BuildHang};
    std::vector<internal::BuiltCandidate> built = internal::build_candidates(task, {hang}, 2, 0.25);
    ASSERT_EQ(built[0].error, MeasureError::BuildTimeout);
    EXPECT_EQ(threads_at_policy(SCHED_IDLE), idle);  // still spinning, at normal priority
    EXPECT_TRUE(internal::wait_for_build_threads(120.0));
}
#endif

TEST(MeasureFaults, FaultsAreRefusedUnlessTestsAllowThem) {
    SearchTask task = small_matmul_task(16);
    Measurer measurer(fast_options());
    EXPECT_THROW(measurer.measure(task, {planted(task, TestFault::Segfault)}), RuntimeError);
}

TEST(MeasureFaults, ScheduleOfAnotherComputationIsAnInstantiationError) {
    SearchTask task = small_matmul_task(16);
    SearchTask other = small_matmul_task(32);
    Measurer measurer(fast_options());
    std::vector<MeasureResult> r = measurer.measure(task, {{good_schedule(other)}});
    EXPECT_EQ(r[0].error, MeasureError::InstantiationError) << r[0].error_message;
}
