// Search tasks: what the auto-scheduler tunes.
//
//   SearchTask task("matmul", {int64_t(1024), int64_t(1024), int64_t(1024)}, Target("llvm"));
//   Schedule s = replay(task.initial_schedule(), steps);     // every candidate starts here
//   std::string line = task.to_json();                       // any process rebuilds the task
//   SearchTask again = SearchTask::from_json(line);           // ... without the workload's code
//
// A task is a tensor-expression DAG, with the registered workload's name and parameters when it
// came from one (auto_schedule/task/Workload.h), a Target, and the hardware parameters the search
// respects. The task carries its DAG serialised (te/Serialize.h) with the DAG's structural hash,
// so the daemon and measurement workers rebuild it from the JSON alone. Anything keyed on a task
// (a tuning record, a log) names the hash, and a hash that does not match the DAG is refused
// with a ScheduleError instead of being replayed onto another computation: the failure TVM's
// users hit when its workload hashes changed between versions.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "tessel/Options.h"
#include "tessel/Target.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/TensorDAG.h"

namespace tessel {

/// The machine limits the search respects (Ansor's HardwareParams), from the target by default.
struct HardwareParams {
    int num_cores = 1;                        ///< cores a CPU candidate may use; SMs on a GPU
    int vector_unit_bytes = 16;               ///< bytes of the widest vector register
    int cache_line_bytes = 64;                ///< bytes of a cache line
    int max_threads_per_block = 0;            ///< GPU only (0 on CPUs)
    int64_t max_shared_memory_per_block = 0;  ///< GPU only: bytes, without opting in
    int max_registers_per_block = 0;          ///< GPU only: 32-bit registers
    int warp_size = 0;                        ///< GPU only
    int max_vthread_extent = 0;               ///< GPU only: the largest vthread extent proposed
    bool operator==(const HardwareParams&) const = default;

    /// The target's own numbers (Target's queries).
    static HardwareParams from_target(const Target& target);

    /// The fields, described once (tessel/Options.h): the JSON of search tasks and of tuning
    /// records (auto_schedule/task/HardwareJson.h) follows from it.
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        constexpr int64_t kInt = std::numeric_limits<int>::max();
        v.integer("num_cores", s.num_cores, 0, kInt, kProtocolOnly, "cores (SMs on a GPU)");
        v.integer("vector_unit_bytes", s.vector_unit_bytes, 0, kInt, kProtocolOnly,
                  "bytes of the widest vector register");
        v.integer("cache_line_bytes", s.cache_line_bytes, 0, kInt, kProtocolOnly,
                  "bytes of a cache line");
        v.integer("max_threads_per_block", s.max_threads_per_block, 0, kInt, kProtocolOnly,
                  "GPU: threads of a block");
        v.integer("max_shared_memory_per_block", s.max_shared_memory_per_block, 0,
                  std::numeric_limits<int64_t>::max(), kProtocolOnly,
                  "GPU: shared memory of a block, bytes");
        v.integer("max_registers_per_block", s.max_registers_per_block, 0, kInt, kProtocolOnly,
                  "GPU: 32-bit registers of a block");
        v.integer("warp_size", s.warp_size, 0, kInt, kProtocolOnly, "GPU: threads of a warp");
        v.integer("max_vthread_extent", s.max_vthread_extent, 0, kInt, kProtocolOnly,
                  "GPU: the largest vthread extent proposed");
    }
};

/// The schedule limits of code for `target`: GPU kernels unroll up to 1024 steps (the search's
/// auto-unroll choices on GPUs include 1024), CPU code up to 512. Every schedule the search or a
/// log's reader replays for `target` is made with these limits, so a record replays alike in the
/// tuner, in its measurement worker and in build() under ApplyHistoryBest.
ScheduleLimits schedule_limits_for(const Target& target);

/// A tuning task (see the file comment). Cheap to copy: copies share the DAG and its schedule.
class SearchTask {
public:
    /// The registered workload `workload` built with `params` (DSLError for an unknown name or
    /// bad parameters), for `target`; the hardware parameters default to the target's. The
    /// inputs named in `constant` are marked constant (weights, te/TensorDAG.h mark_constant):
    /// the search may then lay them out once, outside the kernel (Schedule::pre_transform); the
    /// DAG, and so the task's key, differ from the workload's without them.
    SearchTask(const std::string& workload, const WorkloadParams& params, const Target& target,
               std::optional<HardwareParams> hardware = std::nullopt,
               const std::vector<std::string>& constant = {});
    /// A DAG that is not a registered workload (its key names the DAG hash instead).
    SearchTask(const TensorDAG& dag, const Target& target,
               std::optional<HardwareParams> hardware = std::nullopt);

    /// The computation: inputs and outputs (args() is what a built kernel takes).
    const TensorDAG& dag() const { return state_->dag; }
    /// The registered workload's name, or "" for a task made from a DAG.
    const std::string& workload_name() const { return state_->workload; }
    /// The workload's parameters (empty for a task made from a DAG).
    const WorkloadParams& params() const { return state_->params; }
    const Target& target() const { return state_->target; }
    const HardwareParams& hardware() const { return state_->hardware; }
    /// The names of the DAG's constant inputs (the layout-rewrite option; empty: off).
    std::vector<std::string> constant() const { return constant_inputs(state_->dag); }
    /// The DAG's structural hash (the schedule's workload key; ignores names).
    uint64_t dag_hash() const { return state_->initial.workload_key(); }
    /// The DAG's hash in hex without leading zeros (1 to 16 digits), as records write it.
    std::string dag_hash_hex() const;
    /// What records and logs key on: `<workload key> <target> <dag hash>`, e.g.
    /// `["matmul",64,64,64] llvm -mcpu=znver4 -num-cores=2 3f2a...`; a task made from a DAG has
    /// `["dag:<hash>"]` as its workload key.
    std::string key() const;
    /// The DAG's schedule with no steps: the state every candidate is replayed from
    /// (replay(task.initial_schedule(), steps) walks and hashes nothing again).
    const Schedule& initial_schedule() const { return state_->initial; }

    /// The task as one JSON object: format version, workload and parameters, the constant
    /// inputs ("constant", only when there are some), the DAG (as dag_to_json writes it) and its
    /// hash, the canonical target, the hardware parameters.
    std::string to_json() const;
    /// Rebuilds a task from to_json's output in any process: the DAG from the JSON, checked
    /// against the recorded hash; when the workload is registered in this process, its builder
    /// must make the same computation (ScheduleError naming both hashes otherwise: the code
    /// that registered it changed). DSLError for malformed JSON; CompileError for a bad target.
    static SearchTask from_json(const std::string& json);

    /// Replays a schedule record (Schedule::to_json) on this task's DAG: ScheduleError when it
    /// was recorded for another computation (its workload key is not this task's DAG hash) or a
    /// step does not apply.
    Schedule apply_record(const std::string& schedule_json) const;

private:
    struct State {
        TensorDAG dag;
        std::string workload;
        WorkloadParams params;
        Target target;
        HardwareParams hardware;
        Schedule initial;
    };
    SearchTask(TensorDAG dag, std::string workload, WorkloadParams params, const Target& target,
               std::optional<HardwareParams> hardware);
    std::shared_ptr<const State> state_;
};

/// The version of the task JSON format this tessel writes (and the newest it reads).
constexpr int kSearchTaskFormatVersion = 1;

}  // namespace tessel
