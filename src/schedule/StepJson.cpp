// Steps to and from JSON (nlohmann_json).
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ScheduleInternal.h"

namespace tessel {

using json = nlohmann::json;

const char* step_kind_name(const Step& step) {
    static const char* names[] = {
        "split",           "fuse",          "reorder",        "annotate",
        "pragma",          "compute_at",    "compute_inline", "compute_root",
        "set_scope",       "cache_read",    "cache_write",    "storage_split",
        "storage_reorder", "storage_align", "follow_split",   "rfactor"};
    static_assert(std::variant_size_v<Step> == std::size(names));
    return names[step.index()];
}

namespace {

const IterAnnotation kAnnotations[] = {
    IterAnnotation::None,     IterAnnotation::Unroll,  IterAnnotation::Vectorize,
    IterAnnotation::Parallel, IterAnnotation::VThread, IterAnnotation::BlockX,
    IterAnnotation::BlockY,   IterAnnotation::BlockZ,  IterAnnotation::ThreadX,
    IterAnnotation::ThreadY,  IterAnnotation::ThreadZ};
const StorageScope kScopes[] = {StorageScope::Global, StorageScope::Shared, StorageScope::Local};
const TailStrategy kTails[] = {TailStrategy::Guard, TailStrategy::ShiftInwards,
                               TailStrategy::RoundUp};

json to_json(const Step& step) {
    json j;
    j["kind"] = step_kind_name(step);
    std::visit(
        [&j](const auto& s) {
            using T = std::decay_t<decltype(s)>;
            j["stage"] = s.stage;
            if constexpr (std::is_same_v<T, SplitStep>) {
                j["iter"] = s.iter;
                j["factor"] = s.factor;
                j["nparts"] = s.by_nparts;
                j["tail"] = tail_strategy_name(s.tail);
            } else if constexpr (std::is_same_v<T, FuseStep>) {
                j["iters"] = s.iters;
            } else if constexpr (std::is_same_v<T, ReorderStep>) {
                j["order"] = s.order;
            } else if constexpr (std::is_same_v<T, AnnotateStep>) {
                j["iter"] = s.iter;
                j["annotation"] = annotation_name(s.annotation);
            } else if constexpr (std::is_same_v<T, PragmaStep>) {
                j["key"] = s.key;
                j["value"] = s.value;
            } else if constexpr (std::is_same_v<T, ComputeAtStep>) {
                j["target"] = s.target;
                j["target_iter"] = s.target_iter;
            } else if constexpr (std::is_same_v<T, SetScopeStep>) {
                j["scope"] = scope_name(s.scope);
            } else if constexpr (std::is_same_v<T, CacheReadStep>) {
                j["scope"] = s.scope;
                j["readers"] = s.readers;
            } else if constexpr (std::is_same_v<T, CacheWriteStep>) {
                j["scope"] = s.scope;
            } else if constexpr (std::is_same_v<T, StorageSplitStep>) {
                j["dim"] = s.dim;
                j["factor"] = s.factor;
            } else if constexpr (std::is_same_v<T, StorageReorderStep>) {
                j["order"] = s.order;
            } else if constexpr (std::is_same_v<T, StorageAlignStep>) {
                j["dim"] = s.dim;
                j["factor"] = s.factor;
                j["offset"] = s.offset;
            } else if constexpr (std::is_same_v<T, FollowSplitStep>) {
                j["iter"] = s.iter;
                j["src_step"] = s.src_step;
            } else if constexpr (std::is_same_v<T, RfactorStep>) {
                j["iter"] = s.iter;
                j["factor_axis"] = s.factor_axis;
            }
        },
        step);
    return j;
}

template <typename T>
T field(const json& j, const char* key, size_t index) {
    if (!j.contains(key))
        TESSEL_THROW(ScheduleError)
            << "step " << index << ": missing field '" << key << "' in " << j.dump();
    try {
        // Integers must be written as integers: 1.5 or 1e12 is not a factor.
        bool integral_ok = true;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            integral_ok = j.at(key).is_number_integer();
            if (integral_ok && j.at(key).is_number_unsigned())
                integral_ok = j.at(key).get<uint64_t>() <=
                              static_cast<uint64_t>(std::numeric_limits<T>::max());
            if (integral_ok && j.at(key).is_number_integer() && !j.at(key).is_number_unsigned())
                integral_ok = j.at(key).get<int64_t>() >= std::numeric_limits<T>::min() &&
                              j.at(key).get<int64_t>() <= std::numeric_limits<T>::max();
        } else if constexpr (std::is_same_v<T, std::vector<int>>) {
            for (const json& e : j.at(key))
                integral_ok = integral_ok && e.is_number_integer() &&
                              std::abs(e.get<int64_t>()) < (int64_t(1) << 31);
        }
        if (!integral_ok)
            throw json::type_error::create(302, "not an integer of the field's range", nullptr);
        return j.at(key).get<T>();
    } catch (const json::exception&) {
        TESSEL_THROW(ScheduleError)
            << "step " << index << ": field '" << key << "' has the wrong type in " << j.dump();
    }
}

template <typename Enum, size_t N>
Enum enum_field(const json& j, const char* key, size_t index, const Enum (&values)[N],
                const char* (*name)(Enum)) {
    std::string text = field<std::string>(j, key, index);
    for (Enum v : values)
        if (text == name(v)) return v;
    TESSEL_THROW(ScheduleError) << "step " << index << ": unknown " << key << " '" << text << "'";
}

Step from_json(const json& j, size_t i) {
    if (!j.is_object())
        TESSEL_THROW(ScheduleError) << "step " << i << ": not a JSON object: " << j.dump();
    std::string kind = field<std::string>(j, "kind", i);
    int stage = field<int>(j, "stage", i);
    if (kind == "split")
        return SplitStep{stage, field<int>(j, "iter", i), field<int64_t>(j, "factor", i),
                         field<bool>(j, "nparts", i),
                         enum_field(j, "tail", i, kTails, tail_strategy_name)};
    if (kind == "fuse") return FuseStep{stage, field<std::vector<int>>(j, "iters", i)};
    if (kind == "reorder") return ReorderStep{stage, field<std::vector<int>>(j, "order", i)};
    if (kind == "annotate")
        return AnnotateStep{stage, field<int>(j, "iter", i),
                            enum_field(j, "annotation", i, kAnnotations, annotation_name)};
    if (kind == "pragma")
        return PragmaStep{stage, field<std::string>(j, "key", i), field<int64_t>(j, "value", i)};
    if (kind == "compute_at")
        return ComputeAtStep{stage, field<int>(j, "target", i), field<int>(j, "target_iter", i)};
    if (kind == "compute_inline") return ComputeInlineStep{stage};
    if (kind == "compute_root") return ComputeRootStep{stage};
    if (kind == "set_scope")
        return SetScopeStep{stage, enum_field(j, "scope", i, kScopes, scope_name)};
    if (kind == "cache_read")
        return CacheReadStep{stage, field<std::string>(j, "scope", i),
                             field<std::vector<int>>(j, "readers", i)};
    if (kind == "cache_write") return CacheWriteStep{stage, field<std::string>(j, "scope", i)};
    if (kind == "storage_split")
        return StorageSplitStep{stage, field<int>(j, "dim", i), field<int64_t>(j, "factor", i)};
    if (kind == "storage_reorder")
        return StorageReorderStep{stage, field<std::vector<int>>(j, "order", i)};
    if (kind == "storage_align")
        return StorageAlignStep{stage, field<int>(j, "dim", i), field<int64_t>(j, "factor", i),
                                field<int64_t>(j, "offset", i)};
    if (kind == "follow_split")
        return FollowSplitStep{stage, field<int>(j, "iter", i), field<int>(j, "src_step", i)};
    if (kind == "rfactor")
        return RfactorStep{stage, field<int>(j, "iter", i), field<int>(j, "factor_axis", i)};
    TESSEL_THROW(ScheduleError) << "step " << i << ": unknown step kind '" << kind << "'";
}

json parse(const std::string& text, const char* what) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        TESSEL_THROW(ScheduleError) << what << ": malformed JSON: " << e.what();
    }
}

std::vector<Step> steps_from(const json& arr) {
    if (!arr.is_array()) TESSEL_THROW(ScheduleError) << "steps: expected a JSON array of steps";
    std::vector<Step> steps;
    for (size_t i = 0; i < arr.size(); ++i) steps.push_back(from_json(arr[i], i));
    return steps;
}

std::string hex(uint64_t v) {
    std::ostringstream os;
    os << std::hex << v;
    return os.str();
}

}  // namespace

std::string steps_to_json(const std::vector<Step>& steps) {
    json arr = json::array();
    for (const Step& s : steps) arr.push_back(to_json(s));
    return arr.dump();
}

std::vector<Step> steps_from_json(const std::string& text) {
    return steps_from(parse(text, "steps_from_json"));
}

std::string Schedule::to_json() const {
    json j;
    j["workload_key"] = hex(workload_key_);
    j["steps"] = json::parse(steps_to_json(steps_));
    return j.dump();
}

Schedule schedule_from_json(const std::vector<Tensor>& outputs, const std::string& text,
                            ScheduleLimits limits) {
    json j = parse(text, "schedule_from_json");
    if (!j.is_object() || !j.contains("workload_key") || !j.contains("steps"))
        TESSEL_THROW(ScheduleError)
            << "schedule_from_json: expected {\"workload_key\": ..., \"steps\": [...]}";
    std::string key = j["workload_key"].is_string() ? j["workload_key"].get<std::string>() : "";
    std::string mine = hex(dag_hash(outputs));
    if (key != mine)
        TESSEL_THROW(ScheduleError)
            << "schedule_from_json: the steps were recorded for workload " << key
            << ", but this DAG's workload key is " << mine << "; they cannot be replayed on it";
    return replay(outputs, steps_from(j["steps"]), limits);
}

}  // namespace tessel
