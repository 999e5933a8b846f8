// Tuning jobs (auto_schedule/tuner/Job.h): the job file read and checked field by field, every
// problem collected before any is reported, so that an operator fixes a job in one go.
#include "tessel/auto_schedule/tuner/Job.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/JsonDepth.h"
#include "support/JsonFields.h"
#include "tessel/auto_schedule/measure/ClusterMeasureRunner.h"
#include "tessel/op/Networks.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Serialize.h"
#include "tessel/te/TensorDAG.h"

namespace tessel {

namespace {

using json = nlohmann::json;

// A job nests 4 deep (tasks, params, a list parameter), and a DAG task's expressions as deep as
// dag_from_json reads them.
constexpr int kMaxDepth = kMaxJsonExprDepth + 64;
constexpr size_t kMaxTasks = 10000;  // more is a mistake, not a network
constexpr int64_t kMaxTrials = int64_t(1) << 40;

std::string join_problems(const std::string& source, const std::vector<std::string>& problems) {
    std::ostringstream os;
    os << source << ": " << problems.size() << (problems.size() == 1 ? " problem" : " problems");
    for (const std::string& p : problems) os << "\n  - " << p;
    return os.str();
}

using internal::collect_into;
using internal::option_names;
using internal::options_json;
using internal::read_options;
using Fields = internal::JsonFields;

// Parameters converted as make_workload converts them (a dtype name to a dtype, an int to a
// double where a float is declared), so that a task's key does not depend on the spelling.
WorkloadParams conform(const std::string& workload, WorkloadParams params) {
    std::vector<WorkloadParamSpec> specs = workload_param_specs(workload);
    for (size_t i = 0; i < params.size() && i < specs.size(); ++i) {
        ParamKind kind = param_kind(params[i]);
        if (specs[i].kind == ParamKind::DType && kind == ParamKind::String)
            params[i] = Type::parse(std::get<std::string>(params[i]));
        else if (specs[i].kind == ParamKind::Float && kind == ParamKind::Int)
            params[i] = static_cast<double>(std::get<int64_t>(params[i]));
    }
    return params;
}

void read_task(const json& t, size_t i, Job& job, std::vector<std::string>& problems) {
    std::string path = "tasks[" + std::to_string(i) + "]";
    if (!t.is_object()) {
        problems.push_back(path + " must be an object {workload, params, weight}");
        return;
    }
    Fields f(t, path, collect_into(problems));
    f.only({"workload", "params", "dag", "weight", "constant"});
    JobTask task;
    f.text("workload", task.workload);
    f.number("weight", task.weight, 1e-9, 1e12);
    if (f.has("constant")) {
        const json& c = t.at("constant");
        bool names = c.is_array();
        for (const json& n : names ? c : json::array()) names = names && n.is_string();
        if (!names) return f.problem(path + ".constant must be a list of input names");
        for (const json& n : c) task.constant.push_back(n.get<std::string>());
    }
    if (f.has("dag")) {
        if (f.has("workload") || f.has("params"))
            return f.problem(path + ": give either a dag or a workload with params, not both");
        try {
            TensorDAG dag = dag_from_json(t.at("dag").dump());
            if (!task.constant.empty()) dag = mark_constant(dag, task.constant, path + ".constant");
            task.dag = dag_to_json(dag);
        } catch (const Error& e) {
            return f.problem(path + ".dag: " + e.what());
        }
        job.tasks.push_back(std::move(task));
        return;
    }
    if (!f.has("workload")) f.problem(path + ": no workload (or dag)");
    if (!f.has("params")) f.problem(path + ": no params (a JSON array)");
    if (task.workload.empty() || !f.has("params")) return;
    const json& params = t.at("params");
    if (!params.is_array()) return f.problem(path + ".params must be a JSON array");
    try {
        task.params = conform(task.workload, workload_params_from_json(params.dump()));
        mark_constant(make_workload(task.workload, task.params), task.constant, path + ".constant");
    } catch (const Error& e) {
        return f.problem(path + ": " + e.what());
    }
    job.tasks.push_back(std::move(task));
}

void read_network(const std::string& name, int64_t block, Job& job,
                  std::vector<std::string>& problems) {
    try {
        for (const op::PresetLayer& l :
             op::blocked_layers(op::network_preset(name), block, job.constant_weights))
            job.tasks.push_back({l.workload, l.params, static_cast<double>(l.count),
                                 job.constant_weights ? l.weights : std::vector<std::string>{},
                                 std::string()});
    } catch (const Error& e) {
        problems.push_back(std::string("network: ") + e.what());
    }
}

void read_search(const json& j, Job& job, std::vector<std::string>& problems) {
    if (!j.is_object()) return problems.push_back("search must be an object");
    Fields f(j, "search", collect_into(problems));
    std::vector<std::string> known = option_names<TuningOptions>(kJobSearch);
    known.push_back("cost_model");
    f.only(known);
    read_options(f, job.tuning, kJobSearch);
    f.text("cost_model", job.cost_model);
    if (job.cost_model != "shared" && job.cost_model != "per-task")
        f.problem("cost_model must be \"shared\" or \"per-task\", got \"" + job.cost_model + "\"");
}

void read_measure(const json& j, Job& job, std::vector<std::string>& problems) {
    if (!j.is_object()) return problems.push_back("measure must be an object");
    Fields f(j, "measure", collect_into(problems));
    f.only(option_names<MeasureOptions>(kJobMeasure));
    read_options(f, job.tuning.measure, kJobMeasure);
}

// "auto", or [ray://]HOST:PORT with a port of 1..65535 and no blank: the address Ray connects to.
bool valid_cluster_address(const std::string& a) {
    if (a == "auto") return true;
    std::string rest = a.rfind("ray://", 0) == 0 ? a.substr(6) : a;
    size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) return false;
    for (char c : rest)
        if (std::isspace(static_cast<unsigned char>(c)) ||
            std::iscntrl(static_cast<unsigned char>(c)))
            return false;
    std::string port = rest.substr(colon + 1);
    if (port.size() > 5) return false;
    for (char c : port)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    int p = std::stoi(port);
    return p >= 1 && p <= 65535;
}

void read_cluster(const json& j, Job& job, std::vector<std::string>& problems) {
    if (j.is_string()) {
        job.cluster.address = j.get<std::string>();
    } else if (j.is_object()) {
        Fields f(j, "cluster", collect_into(problems));
        f.only({"address", "fallback", "build"});
        f.text("address", job.cluster.address);
        if (!f.has("address")) f.problem("cluster: no address (the Ray head's HOST:PORT, or auto)");
        f.text("fallback", job.cluster.fallback);
        if (!cluster_fallback_from_name(job.cluster.fallback))
            f.problem("cluster.fallback must be \"local\", \"wait\" or \"fail\", got \"" +
                      job.cluster.fallback + "\"");
        f.text("build", job.cluster.build);
        if (!cluster_build_from_name(job.cluster.build))
            f.problem("cluster.build must be \"auto\", \"daemon\" or \"nodes\", got \"" +
                      job.cluster.build + "\"");
    } else {
        return problems.push_back(
            "cluster must be an object {address, fallback, build} or an address string");
    }
    if (!job.cluster.address.empty() && !valid_cluster_address(job.cluster.address))
        problems.push_back("cluster: address \"" + job.cluster.address +
                           "\" is not the Ray head's HOST:PORT (or ray://HOST:PORT, or auto)");
}

void read_budget(Fields& f, const json& j, Job& job) {
    bool total = f.has("trials"), per_task = f.has("trials_per_task");
    if (total == per_task)
        return f.problem("give the budget as exactly one of trials or trials_per_task");
    int64_t n = -1;
    f.integer(total ? "trials" : "trials_per_task", n, 1, kMaxTrials);
    if (n < 1) return;
    job.trials = total ? n : n * static_cast<int64_t>(std::max<size_t>(1, job.tasks.size()));
    (void)j;
}

std::string hex_hash(const TensorDAG& dag) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(dag_hash(dag.outputs)));
    return hex;
}

void check_duplicates(const Job& job, std::vector<std::string>& problems) {
    std::set<std::string> seen;
    for (size_t i = 0; i < job.tasks.size(); ++i) {
        const JobTask& t = job.tasks[i];
        std::string key = t.dag.empty() ? workload_key(t.workload, t.params)
                                        : "[\"dag:" + hex_hash(dag_from_json(t.dag)) + "\"]";
        if (!seen.insert(key).second)
            problems.push_back("task " + key + " is listed twice (give it one entry with the " +
                               "sum of the weights)");
    }
}

Job read_job(const json& j, std::vector<std::string>& problems) {
    Job job;
    Fields f(j, "", collect_into(problems));
    std::vector<std::string> known = {"format_version",
                                      "name",
                                      "target",
                                      "trials",
                                      "trials_per_task",
                                      "strategy",
                                      "early_stopping_per_task",
                                      "network",
                                      "tasks",
                                      "search",
                                      "measure",
                                      "constant_weights",
                                      "layout",
                                      "cluster"};
    for (const std::string& n : option_names<TuningOptions>(kJobTop)) known.push_back(n);
    f.only(known);
    int version = -1;
    f.integer("format_version", version, 0, 1 << 30);
    if (!f.has("format_version"))
        f.problem("no format_version (this tessel writes " + std::to_string(kJobFormatVersion) +
                  ")");
    else if (version != -1 && version != kJobFormatVersion)
        f.problem("format_version " + std::to_string(version) + " is not one this tessel reads (" +
                  std::to_string(kJobFormatVersion) + ")");
    f.text("name", job.name);
    f.text("target", job.target);
    if (!f.has("target")) f.problem("no target");
    if (!job.target.empty()) {
        try {
            job.target = Target(job.target).str();
        } catch (const Error& e) {
            f.problem(std::string("target: ") + e.what());
        }
    }
    read_options(f, job.tuning, kJobTop);
    f.text("strategy", job.strategy);
    if (job.strategy != "gradient" && job.strategy != "round-robin")
        f.problem("strategy must be \"gradient\" or \"round-robin\", got \"" + job.strategy + "\"");
    f.integer("early_stopping_per_task", job.early_stopping_per_task, 0, kMaxTrials);
    f.text("network", job.network);
    f.boolean("constant_weights", job.constant_weights);
    if (job.constant_weights && job.network.empty())
        f.problem(
            "constant_weights marks a network's weights: give a network (a task marks its "
            "own inputs with \"constant\")");
    f.text("layout", job.layout);
    int64_t block = 0;
    try {
        block = op::activation_block(job.layout);
    } catch (const Error& e) {
        f.problem(std::string("layout: ") + e.what());
    }
    if (f.has("layout") && job.network.empty())
        f.problem("layout is a network's activation layout: give a network");
    if (!job.network.empty()) read_network(job.network, block, job, problems);
    if (f.has("tasks")) {
        const json& tasks = j.at("tasks");
        if (!tasks.is_array())
            f.problem("tasks must be an array");
        else if (tasks.size() > kMaxTasks)
            f.problem("tasks: " + std::to_string(tasks.size()) + " tasks, more than " +
                      std::to_string(kMaxTasks));
        else
            for (size_t i = 0; i < tasks.size(); ++i) read_task(tasks[i], i, job, problems);
    }
    if (!f.has("tasks") && !f.has("network")) f.problem("no tasks and no network: nothing to tune");
    if (f.has("search")) read_search(j.at("search"), job, problems);
    if (f.has("measure")) read_measure(j.at("measure"), job, problems);
    if (f.has("cluster")) read_cluster(j.at("cluster"), job, problems);
    read_budget(f, j, job);
    check_duplicates(job, problems);
    return job;
}

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

}  // namespace

TuningOptions job_tuning_defaults() {
    TuningOptions o;
    o.measurements_per_round = 16;
    return o;
}

JobError::JobError(const std::string& source, std::vector<std::string> problems)
    : RuntimeError(join_problems(source, problems)), problems_(std::move(problems)) {}

namespace {

json parse_job_json(const std::string& text, const std::string& source) {
    if (text.size() > kMaxJobBytes)
        throw JobError(source, {"the job is " + std::to_string(text.size()) +
                                " bytes, more than the limit of " + std::to_string(kMaxJobBytes)});
    if (internal::json_nesting_depth(text, kMaxDepth) > kMaxDepth)
        throw JobError(source, {"the JSON nests deeper than " + std::to_string(kMaxDepth)});
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw JobError(source, {std::string("not JSON: ") + e.what()});
    }
    if (!j.is_object()) throw JobError(source, {"a job is a JSON object"});
    return j;
}

Job checked_job(const json& j, const std::string& source) {
    std::vector<std::string> problems;
    Job job = read_job(j, problems);
    if (!problems.empty()) throw JobError(source, std::move(problems));
    return job;
}

}  // namespace

Job parse_job(const std::string& text, const std::string& source) {
    return checked_job(parse_job_json(text, source), source);
}

Job load_job(const std::string& path, const std::string& overrides) {
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    if (ec) throw JobError(path, {"cannot read the job file: " + ec.message()});
    if (size > kMaxJobBytes)
        throw JobError(path, {"the job is " + std::to_string(size) +
                              " bytes, more than the limit of " + std::to_string(kMaxJobBytes)});
    std::ifstream in(path, std::ios::binary);
    if (!in) throw JobError(path, {"cannot read the job file"});
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    json j = parse_job_json(text, path);
    j.merge_patch(parse_job_json(overrides, path + " (overrides)"));
    Job job = checked_job(j, path);
    if (job.name.empty()) job.name = std::filesystem::path(path).stem().string();
    return job;
}

std::string job_to_json(const Job& job) {
    json tasks = json::array();
    for (const JobTask& t : job.tasks) {
        if (!t.dag.empty()) {  // the constant marks are in the DAG
            tasks.push_back({{"dag", json::parse(t.dag)}, {"weight", t.weight}});
            continue;
        }
        tasks.push_back({{"workload", t.workload},
                         {"params", json::parse(workload_params_to_json(t.params))},
                         {"weight", t.weight}});
        if (!t.constant.empty()) tasks.back()["constant"] = t.constant;
    }
    json search = options_json(job.tuning, kJobSearch);
    search["cost_model"] = job.cost_model;
    json j = {{"format_version", kJobFormatVersion},
              {"name", job.name},
              {"target", job.target},
              {"trials", job.trials},
              {"strategy", job.strategy},
              {"early_stopping_per_task", job.early_stopping_per_task},
              {"tasks", std::move(tasks)},
              {"search", std::move(search)},
              {"measure", options_json(job.tuning.measure, kJobMeasure)}};
    j.update(options_json(job.tuning, kJobTop));
    if (!job.cluster.address.empty())
        j["cluster"] = {{"address", job.cluster.address},
                        {"fallback", job.cluster.fallback},
                        {"build", job.cluster.build}};
    return j.dump(2);
}

std::vector<SearchTask> job_search_tasks(const Job& job) {
    Target target(job.target);
    std::vector<SearchTask> out;
    for (const JobTask& t : job.tasks) {
        if (t.dag.empty())
            out.emplace_back(t.workload, t.params, target, std::nullopt, t.constant);
        else
            out.emplace_back(dag_from_json(t.dag), target);
    }
    return out;
}

std::string task_log_name(const SearchTask& task) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(task.key())));
    std::string name = task.workload_name().empty() ? "dag" : task.workload_name();
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
            c = '_';
    return name + "-" + hex + ".jsonl";
}

}  // namespace tessel
