// Shared by the tuner's tests: a small GEMM task, options that keep a tuning to seconds (a small
// population, few generations, short timing, a model that trains on 8 programs), and a fresh log
// path per test.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tessel/auto_schedule/tuner/Tuner.h"
#include "tessel/driver/Build.h"

namespace tessel::testing {

/// matmul n x n x n in float32 for this machine's 2-core target.
inline SearchTask small_gemm_task(int64_t n = 64) {
    return SearchTask("matmul", {n, n, n, Float(32)}, Target("llvm -num-cores=2"));
}

/// A log path in the test's temporary folder, removed first.
inline std::string fresh_log(const std::string& name) {
    const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessel_tune_tests";
    std::filesystem::create_directories(dir);
    std::string path =
        (dir / (std::string(t->test_suite_name()) + "." + t->name() + "." + name + ".jsonl"))
            .string();
    std::remove(path.c_str());
    return path;
}

/// Skips the test when tuning cannot run here: no LLVM backend for CPU candidates, or no XGBoost
/// for the cost model.
#define TESSEL_SKIP_UNLESS_TUNING_RUNS()                                                     \
    do {                                                                                     \
        if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";     \
        if (!CostModel::available()) GTEST_SKIP() << "the tuner's cost model needs XGBoost"; \
    } while (0)

/// `trials` trials in rounds of `per_round`, small and quick; the model trains after 8 successes.
/// The build limit is generous: these tests count on every candidate building (a build timeout
/// is a failed trial, and 7 successes leave the model untrained), and on a loaded machine (CI's
/// sanitizer leg beside another; a real-time benchmark) a 64^3 GEMM's build took 5 to over 10 s
/// where it takes 0.1 to 1 s alone.
inline TuningOptions small_options(const std::string& log, int64_t trials, int per_round = 8) {
    TuningOptions o;
    o.trials = trials;
    o.measurements_per_round = per_round;
    o.log_file = log;
    o.seed = 1;
    o.population = 128;
    o.generations = 2;
    o.verbose = 0;
    o.num_threads = 2;
    o.measure.min_repeat_ms = 5;
    o.measure.build_threads = 2;
    o.measure.build_timeout_seconds = 60;
    o.measure.run_timeout_seconds = 5;
    o.cost_model.min_programs = 8;
    o.cost_model.num_rounds = 50;
    return o;
}

}  // namespace tessel::testing
