// The tuner's time limits under a real-time policy (runtime/RealTimePriority.h): a tuner run
// under `chrt -f`, where builds that compute on every core would starve the watcher of the same
// priority that abandons them. Skipped where this process may not use SCHED_FIFO.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <thread>

#include "auto_schedule/measure/MeasureInternal.h"
#include "measure/MeasureTestUtil.h"
#include "runtime/RealTimePriority.h"
#include "tessel/driver/Build.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// The calling thread under SCHED_FIFO at the policy's lowest priority + `above` while it lives
// (ok() is false where that is not permitted), under SCHED_OTHER again afterwards. It is pinned
// to one CPU meanwhile, and so are the threads and processes it starts: the starvation the tests
// provoke stays on that CPU, and the machine's other tests run on the others.
class RealTimeThread {
public:
    explicit RealTimeThread(int above) {
        pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_);
        cpu_set_t one;
        CPU_ZERO(&one);
        int cpu = sched_getcpu();
        CPU_SET(cpu >= 0 ? cpu : 0, &one);
        pinned_ = pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
        sched_param p{};
        p.sched_priority = sched_get_priority_min(SCHED_FIFO) + above;
        ok_ = pinned_ && pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
    }
    ~RealTimeThread() {
        sched_param p{};
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
        if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
    }
    bool ok() const { return ok_; }

private:
    cpu_set_t saved_{};
    bool pinned_ = false;
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

// A candidate computing past the limit on the build thread, which shares its one CPU with the
// watcher (this thread, one priority above it): the watcher abandons it on time. Before the
// builders stepped down, it woke only when the build was over (4 x the limit + 0.5 s).
TEST(RealTimePriority, BuildTimeLimitHoldsWhenTheBuildComputesOnTheWatchersCpu) {
    SearchTask task = small_matmul_task();
    MeasureOptions options = fast_options();
    options.allow_test_faults = true;
    options.build_timeout_seconds = 0.2;
    options.build_threads = 1;
    Measurer measurer(options);
    std::vector<MeasureInput> inputs = {
        {good_schedule(task), CandidateOrigin::Random, TestFault::BuildHang}};
    RealTimeThread rt(1);
    if (!rt.ok()) GTEST_SKIP() << "SCHED_FIFO is not permitted here";
    auto t0 = std::chrono::steady_clock::now();
    std::vector<MeasureResult> results = measurer.measure(task, inputs);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const MeasureResult& r : results) EXPECT_EQ(r.error, MeasureError::BuildTimeout);
    EXPECT_LT(seconds, 1.0) << "the watcher waited for the build (it computes for 1.3 s)";
    // The abandoned build computes on (1.3 s, then the build itself, at idle priority): the
    // process must not end under it, its static destructors would pull LLVM from under it.
    EXPECT_TRUE(internal::wait_for_build_threads(120.0));
}

// A candidate that hangs in every thread of the measurement worker, which shares its one CPU with
// the client (this thread, one priority above it): the client stops it at the run time limit
// and measures the next candidate in a fresh worker. Before the worker stepped down, the client
// never ran again while it spun.
TEST(RealTimePriority, WorkerHungOnTheClientsCpuIsStoppedOnTime) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task();
    MeasureOptions options = fast_options();
    options.allow_test_faults = true;
    options.run_timeout_seconds = 0.5;
    Measurer measurer(options);
    std::vector<MeasureInput> inputs = {
        {good_schedule(task), CandidateOrigin::Random, TestFault::Hang},
        {good_schedule(task), CandidateOrigin::Random, TestFault::None}};
    RealTimeThread rt(1);
    if (!rt.ok()) GTEST_SKIP() << "SCHED_FIFO is not permitted here";
    auto t0 = std::chrono::steady_clock::now();
    std::vector<MeasureResult> results = measurer.measure(task, inputs);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0].error, MeasureError::RunTimeout) << results[0].error_message;
    EXPECT_TRUE(results[1].ok()) << results[1].error_message;
    EXPECT_LT(seconds, 10.0);
}
