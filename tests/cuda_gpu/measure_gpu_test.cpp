// GPU measurement (auto_schedule/measure/Measure.h) on a real GPU: candidates built with NVRTC run
// in a tessel-measure worker on a stream of its own, are checked against the reference interpreter
// and timed with CUDA events, with and without an L2 flush; a hanging candidate is killed and the
// worker replaced. Skipped, saying why, without a GPU.
#include <gtest/gtest.h>

#include "tessel/auto_schedule/measure/Measure.h"
#include "tessel/op/DefaultSchedule.h"
#include "tessel/runtime/CUDA.h"

using namespace tessel;

TEST(MeasureGpu, CandidatesAreCheckedAndTimedWithEvents) {
    if (!cuda_available()) GTEST_SKIP() << cuda_unavailable_reason();
    SearchTask task("matmul", {int64_t(128), int64_t(128), int64_t(128), Float(32)},
                    Target("cuda"));
    Schedule s = op::default_schedule_rules(task.dag().outputs, task.target());
    for (bool flush : {false, true}) {
        MeasureOptions options;
        options.min_repeat_ms = 20;
        options.repeat = 3;
        options.flush_cache = flush;
        options.allow_test_faults = true;
        options.run_timeout_seconds = 5;
        Measurer measurer(options);
        std::vector<MeasureResult> r =
            measurer.measure(task, {{s}, {s, CandidateOrigin::Manual, TestFault::Hang}, {s}});
        SCOPED_TRACE(flush ? "with L2 flush" : "without flush");
        ASSERT_TRUE(r[0].ok()) << r[0].error_message;
        ASSERT_EQ(r[0].costs.size(), 3u);
        for (double c : r[0].costs) EXPECT_GT(c, 0);
        EXPECT_EQ(r[1].error, MeasureError::RunTimeout) << r[1].error_message;
        EXPECT_TRUE(r[2].ok()) << r[2].error_message;
        EXPECT_EQ(measurer.stats().workers_started, 2);
    }
}
