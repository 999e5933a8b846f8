// Search tasks (auto_schedule/task/SearchTask.h): a DAG that travels with its hash.
#include "tessel/auto_schedule/task/SearchTask.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "auto_schedule/task/HardwareJson.h"
#include "tessel/Error.h"
#include "tessel/te/Serialize.h"

namespace tessel {

using json = nlohmann::json;

namespace {

std::string hex(uint64_t v) {
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
}

using internal::FieldProblem;
using internal::kRequired;

const char* task_words(internal::JsonType t) {
    return t == internal::JsonType::Array ? "a list" : internal::json_type_words(t);
}

// A field of the task's own, absent or of the wrong type.
[[noreturn]] void bad_task_field(const FieldProblem& p) {
    if (p.kind == FieldProblem::Kind::Missing || p.kind == FieldProblem::Kind::WrongType)
        TESSEL_THROW(DSLError) << "SearchTask.from_json: field '" << p.key << "' is missing or not "
                               << task_words(p.expected);
    TESSEL_THROW(DSLError) << "SearchTask.from_json: " << internal::describe(p);
}

// A problem of the hardware parameters, in the default wording ("hardware.warp_size must be
// ...").
[[noreturn]] void bad_hardware(const FieldProblem& p) {
    TESSEL_THROW(DSLError) << "SearchTask.from_json: " << internal::describe(p);
}

// The DAG the registered workload builds in this process, when it is registered here: it must
// be the computation the task carries.
void check_registered_builder(const std::string& workload, const WorkloadParams& params,
                              const std::vector<std::string>& constant,
                              const std::string& recorded_hash) {
    std::vector<std::string> names = workload_names();
    if (std::find(names.begin(), names.end(), workload) == names.end()) return;
    std::string here = hex(dag_hash(
        mark_constant(make_workload(workload, params), constant, "SearchTask.from_json").outputs));
    if (here != recorded_hash)
        TESSEL_THROW(ScheduleError)
            << "SearchTask.from_json: workload '" << workload_key(workload, params)
            << "' as registered in this process builds a DAG with hash " << here
            << ", but the task was made for a DAG with hash " << recorded_hash
            << " (the code that registers the workload changed); its records do not apply to "
               "this computation";
}

}  // namespace

HardwareParams HardwareParams::from_target(const Target& target) {
    HardwareParams h;
    h.num_cores = target.num_cores();
    h.vector_unit_bytes = target.vector_lanes(Int(8));
    h.cache_line_bytes = target.cache_line_bytes();
    if (target.is_gpu()) {
        h.max_threads_per_block = target.max_threads_per_block();
        h.max_shared_memory_per_block = target.max_shared_memory_per_block();
        h.max_registers_per_block = target.max_registers_per_block();
        h.warp_size = target.warp_size();
        h.max_vthread_extent = target.max_vthread_extent();
    }
    return h;
}

ScheduleLimits schedule_limits_for(const Target& target) {
    ScheduleLimits limits;
    if (target.is_gpu()) limits.max_unroll = 1024;
    return limits;
}

SearchTask::SearchTask(TensorDAG dag, std::string workload, WorkloadParams params,
                       const Target& target, std::optional<HardwareParams> hardware) {
    check_tensor_dag(dag, "SearchTask");
    Schedule initial(dag.outputs, schedule_limits_for(target));
    HardwareParams hw = hardware ? *hardware : HardwareParams::from_target(target);
    state_ = std::make_shared<const State>(State{
        std::move(dag), std::move(workload), std::move(params), target, hw, std::move(initial)});
}

SearchTask::SearchTask(const std::string& workload, const WorkloadParams& params,
                       const Target& target, std::optional<HardwareParams> hardware,
                       const std::vector<std::string>& constant)
    : SearchTask(mark_constant(make_workload(workload, params), constant, "SearchTask"), workload,
                 params, target, hardware) {}

SearchTask::SearchTask(const TensorDAG& dag, const Target& target,
                       std::optional<HardwareParams> hardware)
    : SearchTask(dag, "", {}, target, hardware) {}

std::string SearchTask::dag_hash_hex() const {
    return hex(dag_hash());
}

std::string SearchTask::key() const {
    std::string workload = state_->workload.empty()
                               ? "[\"dag:" + dag_hash_hex() + "\"]"
                               : workload_key(state_->workload, state_->params);
    return workload + " " + state_->target.str() + " " + dag_hash_hex();
}

std::string SearchTask::to_json() const {
    json j;
    j["format_version"] = kSearchTaskFormatVersion;
    j["workload"] = state_->workload;
    j["params"] = json::parse(workload_params_to_json(state_->params));
    if (!constant().empty()) j["constant"] = constant();  // absent: none (older tasks too)
    j["dag"] = json::parse(dag_to_json(state_->dag));
    j["dag_hash"] = dag_hash_hex();
    j["target"] = state_->target.str();
    j["hardware"] = internal::hardware_to_json(state_->hardware);
    return j.dump();
}

SearchTask SearchTask::from_json(const std::string& text) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        TESSEL_THROW(DSLError) << "SearchTask.from_json: malformed JSON: " << e.what();
    }
    if (!j.is_object()) TESSEL_THROW(DSLError) << "SearchTask.from_json: not a JSON object";
    // bad_task_field throws: a read that returns has succeeded.
    internal::JsonFields f(j, "", bad_task_field);
    int64_t version = 0;
    f.integer("format_version", version, std::numeric_limits<int64_t>::min(),
              std::numeric_limits<int64_t>::max(), kRequired);
    if (version < 1 || version > kSearchTaskFormatVersion)
        TESSEL_THROW(DSLError) << "SearchTask.from_json: format version " << version
                               << " (this tessel reads 1 to " << kSearchTaskFormatVersion << ")";
    std::string workload, recorded, target_name;
    f.text("workload", workload, kRequired);
    WorkloadParams params = workload_params_from_json(f.array("params", kRequired)->dump());
    f.text("dag_hash", recorded, kRequired);
    TensorDAG dag = dag_from_json(f.object("dag", kRequired)->dump());
    std::string actual = hex(tessel::dag_hash(dag.outputs));
    if (actual != recorded)
        TESSEL_THROW(ScheduleError)
            << "SearchTask.from_json: the task's DAG hashes to " << actual
            << ", but the task records " << recorded
            << "; it was edited or written by a tessel that hashes differently, and its records "
               "cannot be trusted on this computation";
    std::vector<std::string> constant;  // the DAG says it too; the builder's check needs the names
    if (const json* c = f.array("constant")) {
        for (const json& name : *c) {
            if (!name.is_string())
                TESSEL_THROW(DSLError) << "SearchTask.from_json: 'constant' lists input names";
            constant.push_back(name.get<std::string>());
        }
    }
    if (!workload.empty()) check_registered_builder(workload, params, constant, recorded);
    f.text("target", target_name, kRequired);
    Target target(target_name);
    HardwareParams hw =
        internal::hardware_from_json(*f.object("hardware", kRequired), bad_hardware);
    return SearchTask(std::move(dag), workload, params, target, hw);
}

Schedule SearchTask::apply_record(const std::string& schedule_json) const {
    return schedule_from_json(state_->initial, schedule_json);
}

}  // namespace tessel
