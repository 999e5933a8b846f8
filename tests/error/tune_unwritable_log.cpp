// A tuning log that cannot be opened for appending is a RuntimeError naming it, before anything
// is measured.
#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(ErrorTune, UnwritableLog) {
    if (!CostModel::available()) GTEST_SKIP() << "without XGBoost tune() refuses to start first";
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)}, Target("llvm"));
    TuningOptions o;
    o.log_file = "/nonexistent-folder/tuning.jsonl";
    o.verbose = 0;
    expect_runtime_error([&] { tune(task, o); },
                         {"/nonexistent-folder/tuning.jsonl", "cannot open"});
}
