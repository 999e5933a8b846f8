// A tuning log holding records of another task is refused (each task has its own log): a
// RuntimeError naming the log and both tasks, before anything is measured or appended.
#include <cstdio>
#include <filesystem>

#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/tuner/Tuner.h"
#include "tessel/driver/DefaultSchedule.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(ErrorTune, LogOfAnotherTask) {
    if (!CostModel::available()) GTEST_SKIP() << "without XGBoost tune() refuses to start first";
    std::string log =
        (std::filesystem::temp_directory_path() / "tessel_tune_log_of_another_task.jsonl").string();
    std::remove(log.c_str());
    SearchTask other("matmul", {int64_t(32), int64_t(32), int64_t(32), Float(32)}, Target("llvm"));
    MeasureResult measured;
    measured.costs = {1e-3};
    {
        RecordWriter w(log);
        MeasureInput input{op::default_schedule(other.dag().outputs, other.target())};
        w.append({make_record(other, input, measured)});
    }
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)}, Target("llvm"));
    TuningOptions o;
    o.log_file = log;
    o.verbose = 0;
    expect_runtime_error([&] { tune(task, o); },
                         {"tune: the log '" + log + "' holds records of another task", other.key(),
                          task.key(), "give each task its own log_file"});
    EXPECT_EQ(read_records(log).records.size(), 1u);  // nothing appended
    std::remove(log.c_str());
}
