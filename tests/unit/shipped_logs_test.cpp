// The shipped tuning logs: outside any apply-best context, build() of a schedule without steps and
// op::default_schedule() take their best record for the exact target or a compatible one; a
// user's context comes first; use_shipped_tuning_logs(false) and TESSEL_TUNING_LOGS=off turn them
// off; a DAG they hold nothing for gets the default rules without a warning. And the repository's
// own tuning_logs/ read without a skipped line and every record replays on its workload's DAG.
// (ctest runs each test in a process of its own, so the environment is read afresh.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "tessel/Error.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/records/ShippedLogs.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/driver/Build.h"
#include "tessel/driver/DefaultSchedule.h"
#include "unit/ApplyBestTestUtil.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

const char* kTarget = "llvm -mcpu=haswell -num-cores=2";

SearchTask matmul(int64_t n) {
    return test::matmul_task(n, kTarget);
}

TuningRecord record(const SearchTask& task, int factor, double cost) {
    return test::tiled_record(task, factor, cost);
}

using test::split_factor;

// A fresh folder holding one log of `records` (in a subfolder: the folder is read recursively).
std::string folder_with(const std::vector<TuningRecord>& records, const std::string& name) {
    fs::path dir = fs::temp_directory_path() / ("tessel_shipped_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir / "cpu");
    std::ofstream out(dir / "cpu" / "matmul.jsonl");
    for (const TuningRecord& r : records) out << record_to_json(r) << "\n";
    return dir.string();
}

bool uses_record(const SearchTask& task, int factor) {
    Target t(kTarget);
    return split_factor(op::default_schedule(task.dag().outputs, t)) == factor &&
           split_factor(schedule_for_build(create_schedule(task.dag().outputs), t)) == factor;
}

}  // namespace

TEST(ShippedLogs, BuildAndTheDefaultScheduleUseTheFastestRecord) {
    SearchTask task = matmul(32);
    set_shipped_tuning_logs_folder(
        folder_with({record(task, 4, 3e-3), record(task, 8, 1e-3)}, "fastest"));
    EXPECT_TRUE(uses_record(task, 8));
    ASSERT_NE(shipped_tuning_logs(), nullptr);
    EXPECT_EQ(shipped_tuning_logs()->records(), 2);
    EXPECT_TRUE(shipped_tuning_logs()->warnings().empty());
    // A schedule with steps is the caller's.
    Schedule mine = create_schedule(task.dag().outputs);
    mine.parallel(static_cast<int>(mine.stages().size()) - 1, 0);
    EXPECT_EQ(schedule_for_build(mine, Target(kTarget)).steps().size(), 1u);
    // A baseline asks for the loop nest as written.
    EXPECT_TRUE(schedule_for_build(create_schedule(task.dag().outputs), Target(kTarget), false)
                    .steps()
                    .empty());
}

TEST(ShippedLogs, BuildCompilesTheLoopNestAsWrittenWhenTheyHoldNoRecord) {
    SearchTask tuned = matmul(32), other = matmul(48);
    set_shipped_tuning_logs_folder(folder_with({record(tuned, 8, 1e-3)}, "asis"));
    EXPECT_TRUE(
        schedule_for_build(create_schedule(other.dag().outputs), Target(kTarget)).steps().empty());
    // The same DAG on a target the record's does not serve (fewer CPU features than haswell's;
    // CPU names imply their features only with LLVM's tables).
    if (has_llvm_backend()) {
        EXPECT_TRUE(schedule_for_build(create_schedule(tuned.dag().outputs),
                                       Target("llvm -mcpu=x86-64 -num-cores=2"))
                        .steps()
                        .empty());
    }
}

TEST(ShippedLogs, AUserContextComesFirst) {
    SearchTask task = matmul(32);
    set_shipped_tuning_logs_folder(folder_with({record(task, 8, 1e-3)}, "context"));
    {
        ApplyHistoryBest mine({record(task, 16, 5e-3)}, [](const std::string&) {});
        EXPECT_TRUE(uses_record(task, 16));
    }
    EXPECT_TRUE(uses_record(task, 8));
}

TEST(ShippedLogs, TurnedOffForTheProcess) {
    SearchTask task = matmul(32);
    set_shipped_tuning_logs_folder(folder_with({record(task, 8, 1e-3)}, "off"));
    use_shipped_tuning_logs(false);
    EXPECT_FALSE(shipped_tuning_logs_enabled());
    EXPECT_EQ(shipped_tuning_logs(), nullptr);
    EXPECT_FALSE(uses_record(task, 8));
    Target t(kTarget);
    EXPECT_EQ(op::default_schedule(task.dag().outputs, t).to_json(),
              op::default_schedule_rules(task.dag().outputs, t).to_json());
    use_shipped_tuning_logs(true);
    EXPECT_TRUE(uses_record(task, 8));
}

TEST(ShippedLogs, TheEnvironmentNamesTheFolderOrTurnsThemOff) {
    SearchTask task = matmul(32);
    std::string folder = folder_with({record(task, 8, 1e-3)}, "env");
    ASSERT_EQ(setenv("TESSEL_TUNING_LOGS", folder.c_str(), 1), 0);
    set_shipped_tuning_logs_folder("");  // none given: the environment's, read at the next use
    EXPECT_EQ(shipped_tuning_logs_folder(), folder);
    EXPECT_TRUE(uses_record(task, 8));
    ASSERT_EQ(setenv("TESSEL_TUNING_LOGS", "off", 1), 0);
    set_default_shipped_tuning_logs_folder("");
    EXPECT_EQ(shipped_tuning_logs_folder(), "");
    EXPECT_EQ(shipped_tuning_logs(), nullptr);
    EXPECT_FALSE(uses_record(task, 8));
    unsetenv("TESSEL_TUNING_LOGS");
    set_shipped_tuning_logs_folder("");
}

TEST(ShippedLogs, SilentForAComputationTheyHoldNothingFor) {
    SearchTask tuned = matmul(32), other = matmul(48);
    set_shipped_tuning_logs_folder(folder_with({record(tuned, 8, 1e-3)}, "silent"));
    Target t(kTarget);
    EXPECT_EQ(op::default_schedule(other.dag().outputs, t).to_json(),
              op::default_schedule_rules(other.dag().outputs, t).to_json());
    ASSERT_NE(shipped_tuning_logs(), nullptr);
    EXPECT_TRUE(shipped_tuning_logs()->warnings().empty());
}

TEST(ShippedLogs, ANameThatIsNotAFolderIsARuntimeError) {
    EXPECT_THROW(set_shipped_tuning_logs_folder("/nonexistent/tessel/tuning_logs"), RuntimeError);
}

// The repository's logs: every line a record, one best schedule per task (distilled), and each
// replays on its workload's DAG (its constant inputs marked as the record says), as build() would
// replay it.
TEST(ShippedLogs, TheRepositoryLogsReadAndReplay) {
    unsetenv("TESSEL_TUNING_LOGS");
    set_shipped_tuning_logs_folder("");
    std::string folder = shipped_tuning_logs_folder();
    ASSERT_FALSE(folder.empty()) << "this build finds no tuning_logs/ folder";
    int files = 0;
    std::set<std::string> tasks;
    for (const auto& e : fs::recursive_directory_iterator(folder)) {
        if (e.path().extension() != ".jsonl") continue;
        ++files;
        RecordLog log = read_records(e.path().string());
        EXPECT_EQ(log.skipped, 0) << e.path();
        EXPECT_FALSE(log.records.empty()) << e.path();
        std::map<std::string, std::set<std::string>> schedules;  // task -> distinct schedules
        for (const TuningRecord& r : log.records) {
            ASSERT_TRUE(r.ok()) << e.path() << ": " << r.error_message;
            schedules[r.task_key()].insert(r.schedule_json);
            if (!tasks.insert(r.task_key()).second) continue;
            SearchTask task(r.workload, workload_params_from_json(r.params_json), Target(r.target),
                            std::nullopt, r.constant);
            EXPECT_EQ(task.dag_hash_hex(), r.dag_hash) << r.task_key();
            EXPECT_NO_THROW(schedule_from_json(task.initial_schedule(), r.schedule_json))
                << r.task_key();
        }
        for (const auto& [key, distinct] : schedules)
            EXPECT_EQ(distinct.size(), 1u) << e.path() << ": " << key << " is not distilled";
    }
    EXPECT_GE(files, 1);
    EXPECT_GE(tasks.size(), 24u);  // at least ResNet-50's layers
}
