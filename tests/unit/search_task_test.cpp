// Search tasks: the key (workload, canonical target, DAG hash), the JSON that rebuilds the task
// without the code that registered it, the hash checks, records applied through the task, and the
// hardware parameters taken from the target.
#include <gtest/gtest.h>

#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

// A row sum scaled by `scale`, registered under `name` (scale changes the computation).
void register_scaled_row_sum(const std::string& name, float scale) {
    register_workload(
        name, {{"n", ParamKind::Int}, {"m", ParamKind::Int}},
        [scale](const WorkloadParams& p) {
            int64_t n = std::get<int64_t>(p[0]), m = std::get<int64_t>(p[1]);
            Tensor X = placeholder({n, m}, Float(32), "X");
            IterVar k = reduce_axis(Range(0, m), "k");
            Tensor S = compute(
                {n}, [&](Var i) { return sum(X(i, k.var()) * scale, {k}); }, "S");
            return TensorDAG{{X}, {S}};
        },
        /*replace=*/true);
}

std::string lowered(const SearchTask& task, const Schedule& s) {
    return to_string(lower(s, task.dag().args(), "main", LowerOptions{}));
}

}  // namespace

TEST(SearchTask, KeyNamesWorkloadTargetAndHash) {
    SearchTask task("matmul", {int64_t(64), int64_t(48), int64_t(32), Float(32)}, Target("llvm"));
    EXPECT_EQ(task.workload_name(), "matmul");
    EXPECT_EQ(task.dag_hash(), dag_hash(task.dag().outputs));
    EXPECT_EQ(task.key(), workload_key("matmul", task.params()) + " " + Target("llvm").str() + " " +
                              task.dag_hash_hex());
    SearchTask from_dag(task.dag(), Target("llvm"));
    EXPECT_EQ(from_dag.workload_name(), "");
    EXPECT_EQ(from_dag.key().rfind("[\"dag:" + task.dag_hash_hex() + "\"]", 0), 0u)
        << from_dag.key();
    // Another target is another task of the same computation.
    SearchTask gpu("matmul", task.params(), Target("cuda -arch=sm_80"));
    EXPECT_EQ(gpu.dag_hash(), task.dag_hash());
    EXPECT_NE(gpu.key(), task.key());
}

TEST(SearchTask, JsonRebuildsTheTaskWithoutItsRegistration) {
    register_scaled_row_sum("test_scaled_row_sum", 2.0f);
    SearchTask task("test_scaled_row_sum", {int64_t(12), int64_t(10)}, Target("llvm"));
    Schedule s = task.initial_schedule();
    s.split(1, 0, 4);
    s.vectorize(1, 1);
    std::string record = s.to_json(), text = task.to_json();
    ASSERT_TRUE(unregister_workload("test_scaled_row_sum"));
    SearchTask again = SearchTask::from_json(text);
    EXPECT_EQ(again.key(), task.key());
    EXPECT_EQ(again.hardware(), task.hardware());
    EXPECT_EQ(again.to_json(), text);
    EXPECT_EQ(lowered(again, again.apply_record(record)), lowered(task, s));
}

TEST(SearchTask, ReplayStartsFromTheSharedInitialSchedule) {
    SearchTask task("softmax", {int64_t(5), int64_t(13), Float(32)}, Target("llvm"));
    Schedule a = replay(task.initial_schedule(), {ComputeInlineStep{2}});
    EXPECT_EQ(a.workload_key(), task.dag_hash());
    EXPECT_TRUE(task.initial_schedule().steps().empty());
    EXPECT_THROW(replay(a, {}), ScheduleError);  // the base must be a fresh schedule
}

TEST(SearchTask, HardwareParamsComeFromTheTarget) {
    HardwareParams cpu = HardwareParams::from_target(Target("llvm -mcpu=skylake-avx512"));
    EXPECT_EQ(cpu.vector_unit_bytes, 64);
    EXPECT_EQ(cpu.cache_line_bytes, 64);
    EXPECT_EQ(cpu.max_threads_per_block, 0);
    HardwareParams gpu = HardwareParams::from_target(Target("cuda -arch=sm_80"));
    EXPECT_EQ(gpu.max_threads_per_block, 1024);
    EXPECT_EQ(gpu.warp_size, 32);
    EXPECT_EQ(gpu.max_shared_memory_per_block, 48 * 1024);
    HardwareParams mine = cpu;
    mine.num_cores = 1;
    SearchTask task("matmul", {int64_t(8), int64_t(8), int64_t(8), Float(32)}, Target("llvm"),
                    mine);
    EXPECT_EQ(SearchTask::from_json(task.to_json()).hardware().num_cores, 1);
}
