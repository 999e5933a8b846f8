// A task whose recorded DAG hash does not match its DAG, and a task whose workload, registered
// in this process, now builds another computation: both refused, never replayed.
#include "error/ExpectScheduleError.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

namespace {

void register_scaled(float scale) {
    register_workload(
        "test_scaled_copy", {{"n", ParamKind::Int}},
        [scale](const WorkloadParams& p) {
            Tensor X = placeholder({std::get<int64_t>(p[0])}, Float(32), "X");
            Tensor Y = compute(
                {std::get<int64_t>(p[0])}, [&](Var i) { return X(i) * scale; }, "Y");
            return TensorDAG{{X}, {Y}};
        },
        /*replace=*/true);
}

}  // namespace

TEST(ErrorSearchTaskHashMismatch, EditedHash) {
    SearchTask task("matmul", {int64_t(8), int64_t(8), int64_t(8), Float(32)}, Target("llvm"));
    std::string text = task.to_json();
    std::string hash = "\"dag_hash\":\"" + task.dag_hash_hex() + "\"";
    ASSERT_NE(text.find(hash), std::string::npos);
    text.replace(text.find(hash), hash.size(), "\"dag_hash\":\"1234abcd\"");
    expect_schedule_error(
        [&] { SearchTask::from_json(text); },
        {"SearchTask.from_json", "hashes to " + task.dag_hash_hex(), "records 1234abcd"});
}

TEST(ErrorSearchTaskHashMismatch, RegisteredBuilderChanged) {
    register_scaled(2.0f);
    std::string text = SearchTask("test_scaled_copy", {int64_t(16)}, Target("llvm")).to_json();
    register_scaled(3.0f);  // the code that registers the workload changed
    expect_schedule_error([&] { SearchTask::from_json(text); },
                          {"SearchTask.from_json", "[\"test_scaled_copy\",16]",
                           "as registered in this process builds a DAG with hash",
                           "the code that registers the workload changed"});
    unregister_workload("test_scaled_copy");
    EXPECT_NO_THROW(SearchTask::from_json(text));  // the carried DAG, when nothing contradicts it
}

TEST(ErrorSearchTaskHashMismatch, RecordOfAnotherComputation) {
    SearchTask a("matmul", {int64_t(8), int64_t(8), int64_t(8), Float(32)}, Target("llvm"));
    SearchTask b("matmul", {int64_t(8), int64_t(8), int64_t(9), Float(32)}, Target("llvm"));
    Schedule s = b.initial_schedule();
    s.split(2, 0, 4);
    expect_schedule_error(
        [&] { a.apply_record(s.to_json()); },
        {"schedule_from_json", "recorded for workload " + b.dag_hash_hex(), "cannot be replayed"});
}
