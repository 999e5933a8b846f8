// Apply-best: the fastest record of the exact target (whatever its spelling) first, else one of a
// target whose CPU features the build's target has (one warning), else the default schedule (one
// warning naming the workload); never a record of another DAG; build() of a schedule without
// steps and op::default_schedule() follow the context while it lives, and only then; records replay
// with the target's schedule limits, and one that does not replay is passed over with a warning.
#include <gtest/gtest.h>

#include "unit/ApplyBestTestUtil.h"

#include "tessel/auto_schedule/records/ApplyHistoryBest.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/driver/Build.h"
#include "tessel/driver/DefaultSchedule.h"

using namespace tessel;

namespace {

SearchTask matmul(int64_t n, const std::string& target) {
    return test::matmul_task(n, target);
}

TuningRecord record(const SearchTask& task, int factor, double cost) {
    return test::tiled_record(task, factor, cost);
}

using test::split_factor;

struct Collect {
    std::vector<std::string> messages;
    WarningSink sink() {
        return [this](const std::string& m) { messages.push_back(m); };
    }
};

}  // namespace

TEST(ApplyHistoryBest, FastestExactRecordAcrossTargetSpellings) {
    if (!has_llvm_backend())
        GTEST_SKIP()
            << "CPU names imply their features only with LLVM's tables (and builds need it)";
    SearchTask task = matmul(32, "llvm -mcpu=haswell -num-cores=2");
    Collect warnings;
    ApplyHistoryBest best({record(task, 4, 3e-3), record(task, 8, 1e-3), record(task, 16, 2e-3)},
                          warnings.sink());
    // Another spelling of the same target: AVX2 is implied by haswell; options in another order.
    Target spelled("llvm -num-cores=2 -mattr=+avx2 -mcpu=haswell");
    ASSERT_EQ(spelled, task.target());
    Schedule s = op::default_schedule(task.dag().outputs, spelled);
    EXPECT_EQ(split_factor(s), 8);
    EXPECT_TRUE(warnings.messages.empty());
}

TEST(ApplyHistoryBest, RecordOfACpuWithFewerFeaturesServesWithOneWarning) {
    SearchTask tuned = matmul(32, "llvm -mcpu=haswell -num-cores=2");
    Collect warnings;
    ApplyHistoryBest best({record(tuned, 8, 1e-3)}, warnings.sink());
    Target skylake("llvm -mcpu=skylake -num-cores=4");  // has all of haswell's features
    EXPECT_EQ(split_factor(op::default_schedule(tuned.dag().outputs, skylake)), 8);
    EXPECT_EQ(split_factor(op::default_schedule(tuned.dag().outputs, skylake)), 8);
    ASSERT_EQ(warnings.messages.size(), 1u);
    EXPECT_NE(warnings.messages[0].find(tuned.target().str()), std::string::npos);
    EXPECT_NE(warnings.messages[0].find(skylake.str()), std::string::npos);
}

TEST(ApplyHistoryBest, NoUsableRecordFallsBackToTheDefaultWithOneWarningNamingTheWorkload) {
    if (!has_llvm_backend())
        GTEST_SKIP()
            << "CPU names imply their features only with LLVM's tables (and builds need it)";
    SearchTask tuned = matmul(32, "llvm -mcpu=skylake-avx512 -num-cores=2");
    Collect warnings;
    ApplyHistoryBest best({record(tuned, 8, 1e-3)}, warnings.sink());
    Target haswell("llvm -mcpu=haswell -num-cores=2");  // lacks AVX-512: the record is refused
    Schedule s = op::default_schedule(tuned.dag().outputs, haswell);
    Schedule rules = op::default_schedule_rules(tuned.dag().outputs, haswell);
    EXPECT_EQ(s.to_json(), rules.to_json());
    op::default_schedule(tuned.dag().outputs, haswell);
    ASSERT_EQ(warnings.messages.size(), 1u);
    // With the task at hand, the registered workload is named even without any record of it.
    SearchTask other = matmul(24, "llvm -mcpu=haswell -num-cores=2");
    EXPECT_EQ(best.choose(other).to_json(),
              op::default_schedule_rules(other.dag().outputs, other.target()).to_json());
    ASSERT_EQ(warnings.messages.size(), 2u);
    EXPECT_NE(warnings.messages[1].find("[\"matmul\",24,24,24"), std::string::npos)
        << warnings.messages[1];
    EXPECT_NE(warnings.messages[0].find("[\"matmul\",32,32,32"), std::string::npos)
        << warnings.messages[0];
    EXPECT_NE(warnings.messages[0].find("default schedule"), std::string::npos);
}

TEST(ApplyHistoryBest, RecordOfAnotherDagIsNeverApplied) {
    SearchTask other = matmul(48, "llvm -mcpu=haswell -num-cores=2");
    SearchTask task = matmul(32, "llvm -mcpu=haswell -num-cores=2");
    TuningRecord forged = record(other, 8, 1e-9);
    forged.dag_hash = task.dag_hash_hex();  // claims this DAG, carries the other's schedule
    Collect warnings;
    ApplyHistoryBest best({record(other, 8, 1e-3), forged}, warnings.sink());
    Schedule s = op::default_schedule(task.dag().outputs, task.target());
    EXPECT_EQ(s.to_json(), op::default_schedule_rules(task.dag().outputs, task.target()).to_json());
    // One warning that the forged record does not replay, one for the default schedule.
    ASSERT_EQ(warnings.messages.size(), 2u);
    EXPECT_NE(warnings.messages[0].find("does not replay"), std::string::npos)
        << warnings.messages[0];
    EXPECT_NE(warnings.messages[1].find("default schedule"), std::string::npos)
        << warnings.messages[1];
    // A line with a mismatched schedule never even becomes a record.
    EXPECT_FALSE(record_from_json(record_to_json(forged)).has_value());
}

TEST(ApplyHistoryBest, BuildOfAScheduleWithoutStepsUsesTheContextOnlyWhileItLives) {
    if (!has_llvm_backend())
        GTEST_SKIP()
            << "CPU names imply their features only with LLVM's tables (and builds need it)";
    SearchTask task = matmul(32, Target::host().str());
    const std::vector<Tensor>& outs = task.dag().outputs;
    auto build_ll = [&] {
        return build(create_schedule(outs), task.dag().args(), task.target()).get_source("ll");
    };
    EXPECT_EQ(build_ll().find("tessel_parallel_for"), std::string::npos);
    {
        Collect warnings;
        ApplyHistoryBest best({record(task, 8, 1e-3)}, warnings.sink());
        EXPECT_NE(build_ll().find("tessel_parallel_for"), std::string::npos);
        // A schedule with steps is the caller's.
        Schedule mine = create_schedule(outs);
        mine.split(static_cast<int>(mine.stages().size()) - 1, 0, 4);
        EXPECT_EQ(build(mine, task.dag().args(), task.target())
                      .get_source("ll")
                      .find("tessel_parallel_for"),
                  std::string::npos);
        EXPECT_TRUE(warnings.messages.empty());
        EXPECT_EQ(current_apply_history_best(), &best);
    }
    EXPECT_EQ(current_apply_history_best(), nullptr);
    EXPECT_EQ(build_ll().find("tessel_parallel_for"), std::string::npos);
}

// A schedule is as fast as the median of its measurements: one timed lucky once and slower on
// re-measurement loses to one timed steadily.
TEST(ApplyHistoryBest, ChoosesByTheMedianOfReMeasurements) {
    if (!has_llvm_backend()) GTEST_SKIP() << "builds need the LLVM backend";
    SearchTask task = matmul(32, "llvm -num-cores=2");
    TuningRecord lucky = record(task, 4, 1e-3);
    TuningRecord again = record(task, 4, 3e-3);
    again.origin = CandidateOrigin::Remeasure;
    Collect warnings;
    ApplyHistoryBest best({lucky, record(task, 8, 2e-3), again, again}, warnings.sink());
    EXPECT_EQ(split_factor(op::default_schedule(task.dag().outputs, task.target())), 8);
    ApplyHistoryBest lucky_only({lucky, record(task, 8, 2e-3)}, warnings.sink());
    EXPECT_EQ(split_factor(op::default_schedule(task.dag().outputs, task.target())), 4);
}

namespace {

// A record of `task` that splits the output's second loop by `factor` and auto-unrolls up to
// `unroll` steps, made on a schedule with `limits` (the tuner's are the target's).
TuningRecord unrolled_record(const SearchTask& task, int factor, int64_t unroll, double cost,
                             ScheduleLimits limits) {
    Schedule s(task.dag().outputs, limits);
    int out = static_cast<int>(s.stages().size()) - 1;
    s.split(out, 1, factor);
    s.pragma_auto_unroll(out, unroll);
    MeasureResult r;
    r.costs = {cost};
    return make_record(task, {s}, r);
}

}  // namespace

// A GPU record may auto-unroll 1024 steps (the search's GPU choices include it; CPU code stops at
// 512): it is replayed with the target's limits, as the tuner measured it, not passed over for a
// slower record (build() of a GPU GEMM log used to get its fastest record with unroll <= 512).
TEST(ApplyHistoryBest, GpuRecordUnrollingMoreThanTheCpuLimitIsReplayed) {
    SearchTask task = matmul(32, "cuda -arch=sm_90");
    ScheduleLimits gpu = schedule_limits_for(task.target());
    ASSERT_EQ(gpu.max_unroll, 1024);
    Collect warnings;
    ApplyHistoryBest best(
        {unrolled_record(task, 4, 512, 2e-3, gpu), unrolled_record(task, 8, 1024, 1e-3, gpu)},
        warnings.sink());
    Schedule s = best.choose(task);
    EXPECT_EQ(split_factor(s), 8);
    EXPECT_EQ(s.limits().max_unroll, 1024);
    EXPECT_TRUE(warnings.messages.empty());
    // The printed script says which schedule it applies to.
    EXPECT_NE(s.to_python().find("ts.create_schedule(outputs, max_unroll=1024"), std::string::npos)
        << s.to_python();
}

// A record the target's schedule refuses is passed over for the next, with one warning naming the
// refused step (here a CPU record claiming an auto-unroll of 1024).
TEST(ApplyHistoryBest, RecordThatDoesNotReplayIsPassedOverWithOneWarning) {
    SearchTask task = matmul(32, "llvm -num-cores=2");
    ScheduleLimits loose;
    loose.max_unroll = 1024;
    Collect warnings;
    ApplyHistoryBest best({unrolled_record(task, 8, 1024, 1e-3, loose),
                           unrolled_record(task, 4, 512, 2e-3, schedule_limits_for(task.target()))},
                          warnings.sink());
    EXPECT_EQ(split_factor(best.choose(task)), 4);
    EXPECT_EQ(split_factor(best.choose(task)), 4);
    ASSERT_EQ(warnings.messages.size(), 1u);
    EXPECT_NE(warnings.messages[0].find("auto_unroll_max_step 1024"), std::string::npos)
        << warnings.messages[0];
    EXPECT_NE(warnings.messages[0].find("[\"matmul\",32,32,32"), std::string::npos)
        << warnings.messages[0];
}
