// The workload registry (auto_schedule/task/Workload.h).
#include <map>
#include <mutex>
#include <sstream>

#include "BuiltinWorkloads.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/op/Workloads.h"

namespace tessel {

namespace {

struct Entry {
    std::vector<WorkloadParamSpec> params;
    WorkloadBuilder builder;
};

struct Registry {
    std::mutex mutex;
    std::map<std::string, Entry> entries;
};

// Built on first use with the built-in workloads, and never destroyed: builders registered from
// Python hold Python objects, which must not be released after the interpreter is gone.
Registry& registry() {
    static Registry* r = [] {
        auto* fresh = new Registry();
        for (WorkloadDefinition& w : internal::builtin_workloads())
            fresh->entries[w.name] = Entry{std::move(w.params), std::move(w.builder)};
        for (WorkloadDefinition& w : op::workloads())
            fresh->entries[w.name] = Entry{std::move(w.params), std::move(w.builder)};
        return fresh;
    }();
    return *r;
}

std::string names_list(const Registry& r) {
    std::string s;
    for (const auto& [name, entry] : r.entries) s += (s.empty() ? "" : ", ") + name;
    return s.empty() ? "none" : s;
}

std::string signature(const std::string& name, const std::vector<WorkloadParamSpec>& params) {
    std::string s = name + "(";
    for (size_t i = 0; i < params.size(); ++i)
        s += (i ? ", " : "") + params[i].name + (params[i].optional ? "?: " : ": ") +
             param_kind_name(params[i].kind);
    return s + ")";
}

// How many parameters an instance must give: those before the first optional one.
size_t required_params(const std::vector<WorkloadParamSpec>& params) {
    size_t n = 0;
    while (n < params.size() && !params[n].optional) ++n;
    return n;
}

// The entry of `name`, copied so that the builder runs outside the lock.
Entry find_entry(const std::string& name, const char* who) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.entries.find(name);
    if (it == r.entries.end())
        TESSEL_THROW(DSLError) << who << ": unknown workload '" << name
                               << "' (registered: " << names_list(r) << ")";
    return it->second;
}

// `value` as parameter `i` of `spec`, converted where Workload.h allows; DSLError otherwise.
WorkloadParam conform_param(const std::string& name, size_t i, const WorkloadParamSpec& spec,
                            const WorkloadParam& value) {
    ParamKind kind = param_kind(value);
    if (spec.kind == ParamKind::Any || spec.kind == kind) return value;
    if (spec.kind == ParamKind::Float && kind == ParamKind::Int)
        return static_cast<double>(std::get<int64_t>(value));
    if (spec.kind == ParamKind::DType && kind == ParamKind::String) {
        try {
            return Type::parse(std::get<std::string>(value));
        } catch (const DSLError&) {
            // reported below
        }
    }
    TESSEL_THROW(DSLError) << "make_workload('" << name << "'): parameter " << i << " '"
                           << spec.name << "' must be a " << param_kind_name(spec.kind) << ", got "
                           << param_kind_name(kind) << " " << param_to_string(value);
}

}  // namespace

void register_workload(const std::string& name, std::vector<WorkloadParamSpec> params,
                       WorkloadBuilder builder, bool replace) {
    if (name.empty()) TESSEL_THROW(DSLError) << "register_workload: the name is empty";
    if (!builder)
        TESSEL_THROW(DSLError) << "register_workload('" << name << "'): the builder is empty";
    for (size_t i = required_params(params); i < params.size(); ++i)
        if (!params[i].optional)
            TESSEL_THROW(DSLError)
                << "register_workload('" << name << "'): parameter '" << params[i].name
                << "' follows an optional one (only trailing parameters may "
                   "be optional)";
    Registry& r = registry();
    Entry old;  // destroyed outside the lock (a Python builder takes the GIL to be released)
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        auto it = r.entries.find(name);
        if (it != r.entries.end() && !replace)
            TESSEL_THROW(DSLError) << "register_workload: workload '" << name
                                   << "' is already registered (pass replace / override=True "
                                   << "to replace it)";
        if (it != r.entries.end()) old = std::move(it->second);
        r.entries[name] = Entry{std::move(params), std::move(builder)};
    }
}

bool unregister_workload(const std::string& name) {
    Registry& r = registry();
    Entry old;
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.entries.find(name);
    if (it == r.entries.end()) return false;
    old = std::move(it->second);
    r.entries.erase(it);
    return true;
}

std::vector<std::string> workload_names() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<std::string> names;
    for (const auto& [name, entry] : r.entries) names.push_back(name);
    return names;
}

std::vector<WorkloadParamSpec> workload_param_specs(const std::string& name) {
    return find_entry(name, "workload_param_specs").params;
}

TensorDAG make_workload(const std::string& name, const WorkloadParams& params) {
    Entry entry = find_entry(name, "make_workload");
    const size_t required = required_params(entry.params);
    if (params.size() < required || params.size() > entry.params.size())
        TESSEL_THROW(DSLError) << "make_workload('" << name << "'): expects "
                               << (required == entry.params.size()
                                       ? std::to_string(required)
                                       : std::to_string(required) + " to " +
                                             std::to_string(entry.params.size()))
                               << " parameter(s), " << signature(name, entry.params) << ", got "
                               << params.size();
    WorkloadParams checked;
    for (size_t i = 0; i < params.size(); ++i)
        checked.push_back(conform_param(name, i, entry.params[i], params[i]));
    std::string who = "make_workload(" + workload_key(name, checked) + ")";
    TensorDAG dag;
    try {
        dag = entry.builder(checked);
    } catch (const DSLError& e) {
        TESSEL_THROW(DSLError) << who << ": " << e.what();
    }
    check_tensor_dag(dag, who + ": the builder's DAG");
    return dag;
}

}  // namespace tessel
