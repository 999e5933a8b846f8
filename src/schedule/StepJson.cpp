// Steps to and from JSON (nlohmann_json), generic over each step's field description
// (Step.h, `fields()`): one writer and one reader for every kind.
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ScheduleInternal.h"

namespace tessel {

using json = nlohmann::json;

const char* step_kind_name(const Step& step) {
    return std::visit([](const auto& s) { return std::decay_t<decltype(s)>::kind; }, step);
}

namespace {

const IterAnnotation kAnnotations[] = {
    IterAnnotation::None,     IterAnnotation::Unroll,  IterAnnotation::Vectorize,
    IterAnnotation::Parallel, IterAnnotation::VThread, IterAnnotation::BlockX,
    IterAnnotation::BlockY,   IterAnnotation::BlockZ,  IterAnnotation::ThreadX,
    IterAnnotation::ThreadY,  IterAnnotation::ThreadZ};
const StorageScope kScopes[] = {StorageScope::Global, StorageScope::Shared, StorageScope::Local,
                                StorageScope::Warp};
const TailStrategy kTails[] = {TailStrategy::Guard, TailStrategy::ShiftInwards,
                               TailStrategy::RoundUp};

// Writes every field under its name.
struct JsonWriter {
    json& j;
    void stage(const char* name, int v) { j[name] = v; }
    void stages(const char* name, const std::vector<int>& v) { j[name] = v; }
    void leaf(const char* name, int v, int) { j[name] = v; }
    void leaves(const char* name, const std::vector<int>& v, int) { j[name] = v; }
    void leaf_order(const char* name, const std::vector<int>& v, int) { j[name] = v; }
    void dim(const char* name, int v, int) { j[name] = v; }
    void dim_order(const char* name, const std::vector<int>& v, int) { j[name] = v; }
    template <typename T>
    void number(const char* name, T v, T = T{}) {
        j[name] = v;
    }
    void text(const char* name, const std::string& v) { j[name] = v; }
    template <typename E>
    void choice(const char* name, E v, E = E{}) {
        j[name] = choice_name(v);
    }
    void step_index(const char* name, int v) { j[name] = v; }
    void step_indices(const char* name, const std::vector<int>& v) { j[name] = v; }
    void numbers(const char* name, const std::vector<int>& v) { j[name] = v; }
    void split_factor(const char* factor, const char* nparts, int64_t f, bool by_nparts) {
        j[factor] = f;
        j[nparts] = by_nparts;
    }
};

json to_json(const Step& step) {
    json j;
    j["kind"] = step_kind_name(step);
    std::visit(
        [&j](const auto& s) {
            JsonWriter w{j};
            std::decay_t<decltype(s)>::fields(s, w);
        },
        step);
    return j;
}

// Whether `v` is an integer of T's range (1.5 or 1e12 is not a factor).
template <typename T>
bool integral_in_range(const json& v) {
    if (!v.is_number_integer()) return false;
    if (v.is_number_unsigned())
        return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    return v.get<int64_t>() >= std::numeric_limits<T>::min() &&
           v.get<int64_t>() <= std::numeric_limits<T>::max();
}

// Reads every field by its name, checking its JSON type; `index` names the step in messages.
struct JsonReader {
    const json& j;
    size_t index;

    // A field of the wrong type; `expected` says what it should be.
    [[noreturn]] void fail(const char* name, const char* expected) const {
        TESSEL_THROW(ScheduleError)
            << "step " << index << ": field '" << name << "' has the wrong type (expected "
            << expected << ") in " << j.dump();
    }
    const json& at(const char* name) const {
        if (!j.contains(name))
            TESSEL_THROW(ScheduleError)
                << "step " << index << ": missing field '" << name << "' in " << j.dump();
        return j.at(name);
    }
    template <typename T>
    void integer(const char* name, T& v) const {
        const json& x = at(name);
        if (!integral_in_range<T>(x)) fail(name, "an integer of the field's range");
        v = x.get<T>();
    }
    void int_list(const char* name, std::vector<int>& v) const {
        const json& x = at(name);
        if (!x.is_array()) fail(name, "a list of integers");
        v.clear();
        for (const json& e : x) {
            if (!integral_in_range<int>(e)) fail(name, "a list of integers");
            v.push_back(e.get<int>());
        }
    }
    void stage(const char* name, int& v) const { integer(name, v); }
    void stages(const char* name, std::vector<int>& v) const { int_list(name, v); }
    void leaf(const char* name, int& v, int) const { integer(name, v); }
    void leaves(const char* name, std::vector<int>& v, int) const { int_list(name, v); }
    void leaf_order(const char* name, std::vector<int>& v, int) const { int_list(name, v); }
    void dim(const char* name, int& v, int) const { integer(name, v); }
    void dim_order(const char* name, std::vector<int>& v, int) const { int_list(name, v); }
    template <typename T>
    void number(const char* name, T& v) const {
        integer(name, v);
    }
    template <typename T>
    void number(const char* name, T& v, T dflt) const {
        if (j.contains(name))
            integer(name, v);
        else
            v = dflt;
    }
    void text(const char* name, std::string& v) const {
        const json& x = at(name);
        if (!x.is_string()) fail(name, "a string");
        v = x.get<std::string>();
    }
    template <typename E>
    void choice(const char* name, E& v) const {
        std::string t;
        text(name, t);
        for (E e : choice_values(E{}))
            if (t == choice_name(e)) {
                v = e;
                return;
            }
        std::string legal;
        for (E e : choice_values(E{}))
            legal += std::string(legal.empty() ? "" : ", ") + choice_name(e);
        TESSEL_THROW(ScheduleError) << "step " << index << ": unknown " << name << " '" << t
                                    << "' (one of: " << legal << ")";
    }
    template <typename E>
    void choice(const char* name, E& v, E dflt) const {
        if (j.contains(name))
            choice(name, v);
        else
            v = dflt;
    }
    void step_index(const char* name, int& v) const { integer(name, v); }
    void step_indices(const char* name, std::vector<int>& v) const { int_list(name, v); }
    void numbers(const char* name, std::vector<int>& v) const { int_list(name, v); }
    void split_factor(const char* factor, const char* nparts, int64_t& f, bool& by_nparts) const {
        integer(factor, f);
        by_nparts = false;
        if (!j.contains(nparts)) return;
        if (!j.at(nparts).is_boolean()) fail(nparts, "true or false");
        by_nparts = j.at(nparts).get<bool>();
    }
};

Step from_json(const json& j, size_t i) {
    if (!j.is_object())
        TESSEL_THROW(ScheduleError) << "step " << i << ": not a JSON object: " << j.dump();
    JsonReader r{j, i};
    std::string kind;
    r.text("kind", kind);
    Step step;
    bool known = with_step_kind(kind, [&](auto s) {
        decltype(s)::fields(s, r);
        step = s;
    });
    if (!known) {
        std::string legal;
        for_each_step_kind(
            [&](auto s) { legal += (legal.empty() ? "" : ", ") + std::string(s.kind); });
        TESSEL_THROW(ScheduleError)
            << "step " << i << ": unknown step kind '" << kind << "' (one of: " << legal << ")";
    }
    return step;
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

// The format version of a schedule record: absent means 1 (written before versions existed).
void check_format_version(const json& j) {
    if (!j.contains("format_version")) return;
    const json& v = j["format_version"];
    if (!v.is_number_integer())
        TESSEL_THROW(ScheduleError)
            << "schedule_from_json: format_version is not an integer: " << v.dump();
    int64_t version = v.get<int64_t>();
    if (version < 1 || version > kScheduleFormatVersion)
        TESSEL_THROW(ScheduleError)
            << "schedule_from_json: the record has format version " << version
            << ", and this tessel reads versions 1 to " << kScheduleFormatVersion
            << (version > kScheduleFormatVersion ? " (it was written by a newer tessel)" : "");
}

}  // namespace

std::span<const IterAnnotation> choice_values(IterAnnotation) {
    return kAnnotations;
}
std::span<const TailStrategy> choice_values(TailStrategy) {
    return kTails;
}
std::span<const StorageScope> choice_values(StorageScope) {
    return kScopes;
}

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
    j["format_version"] = kScheduleFormatVersion;
    j["workload_key"] = hex(workload_key_);
    j["steps"] = json::array();
    for (const Step& s : steps_) j["steps"].push_back(tessel::to_json(s));
    return j.dump();
}

Schedule schedule_from_json(const Schedule& base, const std::string& text) {
    json j = parse(text, "schedule_from_json");
    if (!j.is_object() || !j.contains("workload_key") || !j.contains("steps"))
        TESSEL_THROW(ScheduleError)
            << "schedule_from_json: expected {\"format_version\": " << kScheduleFormatVersion
            << ", \"workload_key\": ..., \"steps\": [...]}";
    check_format_version(j);
    std::string key = j["workload_key"].is_string() ? j["workload_key"].get<std::string>() : "";
    std::string mine = hex(base.workload_key());
    if (key != mine)
        TESSEL_THROW(ScheduleError)
            << "schedule_from_json: the steps were recorded for workload " << key
            << ", but this DAG's workload key is " << mine << "; they cannot be replayed on it";
    return replay(base, steps_from(j["steps"]));
}

Schedule schedule_from_json(const std::vector<Tensor>& outputs, const std::string& text,
                            ScheduleLimits limits) {
    return schedule_from_json(Schedule(outputs, limits), text);
}

}  // namespace tessel
