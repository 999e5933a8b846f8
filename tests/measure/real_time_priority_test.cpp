// The tuner's time limits under a real-time policy (runtime/RealTimePriority.h): a benchmark runs
// under `chrt -f`, where builds that compute on every core would starve the watcher of the same
// priority that abandons them. Skipped where this process may not use SCHED_FIFO.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <thread>

#include "measure/MeasureTestUtil.h"
#include "tessel/codegen/Build.h"
#include "runtime/RealTimePriority.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// The calling thread under SCHED_FIFO at the policy's lowest priority + `above` while it lives
// (ok() is false where that is not permitted), under SCHED_OTHER again afterwards.
class RealTimeThread {
public:
    explicit RealTimeThread(int above) {
        sched_param p{};
        p.sched_priority = sched_get_priority_min(SCHED_FIFO) + above;
        ok_ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
    }
    ~RealTimeThread() {
        sched_param p{};
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
    }
    bool ok() const { return ok_; }

private:
    bool ok_ = false;
};

std::pair<int, int> policy_of_this_thread() {
    int policy = 0;
    sched_param p{};
    pthread_getschedparam(pthread_self(), &policy, &p);
    return {policy, p.sched_priority};
}

}  // namespace

TEST(RealTimePriority, StepsOnePriorityDownThenToTheNormalPolicy) {
    EXPECT_FALSE(internal::step_below_real_time_priority());  // a normal thread stays as it is
    std::thread([] {
        RealTimeThread rt(1);
        if (!rt.ok()) return;
        int lowest = sched_get_priority_min(SCHED_FIFO);
        EXPECT_TRUE(internal::step_below_real_time_priority());
        EXPECT_EQ(policy_of_this_thread(), std::make_pair(int(SCHED_FIFO), lowest));
        EXPECT_TRUE(internal::step_below_real_time_priority());
        EXPECT_EQ(policy_of_this_thread().first, SCHED_OTHER);
        EXPECT_FALSE(internal::step_below_real_time_priority());
    }).join();
}

// As many candidates as there are build threads, each computing past the limit: the watcher
// (this thread, one priority above them) abandons them all on time. Before the builders stepped
// down, it woke only when the first of them finished (here after 4 x the limit + 0.5 s).
TEST(RealTimePriority, BuildTimeLimitHoldsWhenBuildsComputeOnEveryCore) {
    SearchTask task = small_matmul_task();
    MeasureOptions options = fast_options();
    options.allow_test_faults = true;
    options.build_timeout_seconds = 0.5;
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    options.build_threads = threads;
    Measurer measurer(options);
    std::vector<MeasureInput> inputs(
        static_cast<size_t>(threads),
        MeasureInput{good_schedule(task), CandidateOrigin::Random, TestFault::BuildHang});
    RealTimeThread rt(1);
    if (!rt.ok()) GTEST_SKIP() << "SCHED_FIFO is not permitted here";
    auto t0 = std::chrono::steady_clock::now();
    std::vector<MeasureResult> results = measurer.measure(task, inputs);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const MeasureResult& r : results) EXPECT_EQ(r.error, MeasureError::BuildTimeout);
    EXPECT_LT(seconds, 2.0) << "the watcher waited for the builds (they compute for 2.5 s)";
    // The abandoned builds compute on at real-time priority: let them end before the next test.
    std::this_thread::sleep_until(t0 + std::chrono::seconds(4));
}

// A candidate that hangs on every thread of the measurement worker: the client (this thread, one
// priority above the worker) stops it at the run time limit and measures the next candidate in
// a fresh worker. Before the worker stepped down, the client never ran again while it spun.
TEST(RealTimePriority, WorkerHungOnEveryCoreIsStoppedOnTime) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task();
    MeasureOptions options = fast_options();
    options.allow_test_faults = true;
    options.run_timeout_seconds = 1;
    Measurer measurer(options);
    std::vector<MeasureInput> inputs = {
        {good_schedule(task), CandidateOrigin::Random, TestFault::Hang},
        {good_schedule(task), CandidateOrigin::Random, TestFault::None}};
    RealTimeThread rt(1);
    if (!rt.ok()) GTEST_SKIP() << "SCHED_FIFO is not permitted here";
    auto t0 = std::chrono::steady_clock::now();
    std::vector<MeasureResult> results = measurer.measure(task, inputs);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0].error, MeasureError::RunTimeout) << results[0].error_message;
    EXPECT_TRUE(results[1].ok()) << results[1].error_message;
    EXPECT_LT(seconds, 10.0);
}
