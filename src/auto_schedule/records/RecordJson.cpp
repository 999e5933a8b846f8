// Tuning records to and from one line of JSON (auto_schedule/records/Record.h). The reader checks
// every field's type and range before it trusts the line, and migrates older format versions first:
// each migration turns version v into v + 1, so a line of any known version reaches the current.
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "auto_schedule/task/HardwareJson.h"
#include "support/JsonDepth.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/records/Record.h"

namespace tessel {

namespace {

using json = nlohmann::json;

// A line is skipped with a reason: thrown inside the reader, caught at its top.
struct Skip {
    std::string why;
};

constexpr int kMaxDepth = 32;  // a record nests 5 deep; the schedule's steps a few more

using Fields = internal::JsonFields;
using internal::FieldProblem;
using internal::JsonType;
using internal::kRequired;

const char* record_words(JsonType t) {
    return t == JsonType::Array ? "a list" : internal::json_type_words(t);
}

// The record's wording of a field problem: the field's key and what is wrong with it, never the
// value (the reason is a key of the skip histogram).
[[noreturn]] void skip_line(const FieldProblem& p) {
    using K = FieldProblem::Kind;
    std::string what = p.field ? "field '" + p.key + "'" : p.key;
    switch (p.kind) {
        case K::NotAnObject: throw Skip{"not a JSON object"};
        case K::Missing: throw Skip{"missing field '" + p.key + "'"};
        case K::WrongType: throw Skip{what + " is not " + record_words(p.expected)};
        case K::OutOfRange:
            throw Skip{!p.field  ? what + " is out of range"
                       : p.above ? what + " too large"
                                 : what + " out of range"};
        case K::UnknownName: throw Skip{"unknown " + p.noun};
        case K::UnknownField: throw Skip{"unknown " + what};
        case K::Message: break;
    }
    throw Skip{p.message};
}

// A reader of a record's object. skip_line throws: a read that returns has succeeded.
Fields fields(const json& j) {
    return Fields(j, "", skip_line);
}

// A finite number >= 0 (JSON has no NaN; an overflowing literal is refused by the parser).
double seconds(Fields& f, const char* key) {
    return f.required_number(key, 0, std::numeric_limits<double>::max());
}

// Version 1: the bare schedule record of Schedule::to_json ({"format_version": 1,
// "workload_key": ..., "steps": [...]}): no task beyond the DAG hash, no measurement.
json migrate_v1_to_v2(const json& v1) {
    Fields f = fields(v1);
    std::string hash = f.required_text("workload_key");
    HardwareParams none;
    none.num_cores = 0;
    return {{"format_version", 2},
            {"task",
             {{"dag_hash", hash},
              {"workload", ""},
              {"params", json::array()},
              {"target", ""},
              {"hardware", internal::hardware_to_json(none)}}},
            {"schedule", v1},
            {"result",
             {{"error_code", "none"},
              {"error_message", ""},
              {"costs", json::array()},
              {"build_seconds", 0},
              {"run_seconds", 0},
              {"timestamp", 0}}},
            {"provenance", {{"origin", "manual"}, {"seed", 0}, {"round", 0}}},
            {"tessel_version", ""}};
}

// migrations[v - 1] turns version v into v + 1.
const std::vector<std::function<json(const json&)>> kMigrations = {migrate_v1_to_v2};

}  // namespace
}  // namespace tessel

namespace tessel {

namespace {

void read_task(Fields& record, TuningRecord& r) {
    Fields task = *record.fields("task", kRequired);
    r.dag_hash = task.required_text("dag_hash");
    if (r.dag_hash.empty() || r.dag_hash.size() > 16 ||
        r.dag_hash.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw Skip{"the DAG hash is not 1 to 16 hex digits"};
    r.workload = task.required_text("workload");
    r.params_json = task.array("params", kRequired)->dump();
    try {
        workload_params_from_json(r.params_json);
    } catch (const Error& e) {
        throw Skip{std::string("bad workload parameters: ") + e.what()};
    }
    r.target = task.required_text("target");
    r.hardware = internal::hardware_from_json(*task.object("hardware", kRequired), skip_line);
    if (const json* c = task.array("constant")) {  // absent: none (older records too)
        for (const json& name : *c) {
            if (!name.is_string()) throw Skip{"'constant' lists input names"};
            r.constant.push_back(name.get<std::string>());
        }
    }
    Fields schedule = *record.fields("schedule", kRequired);
    schedule.array("steps", kRequired);
    if (schedule.required_text("workload_key") != r.dag_hash)
        throw Skip{"the schedule was recorded for another DAG than the task's"};
    r.schedule_json = schedule.json().dump();
}

void read_result(Fields& record, TuningRecord& r) {
    Fields result = *record.fields("result", kRequired);
    result.choice("error_code", r.error, measure_error_from_name, "error code", kRequired);
    r.error_message = result.required_text("error_message");
    const json& costs = *result.array("costs", kRequired);
    for (const json& c : costs) {
        double v = 0;
        result.number_item(c, "a cost", v, 0, std::numeric_limits<double>::max());
        r.costs.push_back(v);
    }
    if (r.error == MeasureError::None && r.costs.empty() && r.format_version >= 2)
        throw Skip{"a record without error has no costs"};
    r.build_seconds = seconds(result, "build_seconds");
    r.run_seconds = seconds(result, "run_seconds");
    r.timestamp = seconds(result, "timestamp");
    Fields p = *record.fields("provenance", kRequired);
    p.choice("origin", r.origin, candidate_origin_from_name, "candidate origin", kRequired);
    p.unsigned_integer("seed", r.seed, kRequired);
    p.integer("round", r.round, 0, std::numeric_limits<int64_t>::max(), kRequired);
    r.tessel_version = record.required_text("tessel_version");
}

TuningRecord parse(const std::string& line) {
    if (line.size() > kMaxRecordLineBytes) throw Skip{"too long"};
    if (internal::json_nesting_depth(line, kMaxDepth) > kMaxDepth) throw Skip{"nested too deeply"};
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw Skip{"not JSON (truncated?)"};
    if (!j.is_object()) throw Skip{"not a JSON object"};
    TuningRecord r;
    fields(j).integer("format_version", r.format_version, 1, std::numeric_limits<int>::max(),
                      kRequired);
    if (r.format_version > kRecordFormatVersion) throw Skip{"unknown (newer) format version"};
    for (int v = r.format_version; v < kRecordFormatVersion; ++v) j = kMigrations.at(v - 1)(j);
    Fields record = fields(j);
    read_task(record, r);
    read_result(record, r);
    return r;
}

}  // namespace

double TuningRecord::mean_cost() const {
    if (!ok()) return std::numeric_limits<double>::infinity();
    return std::accumulate(costs.begin(), costs.end(), 0.0) / static_cast<double>(costs.size());
}

std::string TuningRecord::task_key() const {
    std::string key = workload.empty()
                          ? "[\"dag:" + dag_hash + "\"]"
                          : tessel::workload_key(workload, workload_params_from_json(params_json));
    return key + " " + target + " " + dag_hash;
}

std::optional<TuningRecord> record_from_json(const std::string& line, std::string* why) {
    try {
        return parse(line);
    } catch (const Skip& s) {
        if (why) *why = s.why;
    } catch (const std::exception& e) {  // a type nlohmann refuses to convert, a bad_alloc
        if (why) *why = std::string("unreadable: ") + e.what();
    }
    return std::nullopt;
}

std::string record_to_json(const TuningRecord& r) {
    json j = {{"format_version", kRecordFormatVersion},
              {"task",
               {{"dag_hash", r.dag_hash},
                {"workload", r.workload},
                {"params", json::parse(r.params_json)},
                {"target", r.target},
                {"hardware", internal::hardware_to_json(r.hardware)}}},
              {"schedule", json::parse(r.schedule_json)},
              {"result",
               {{"error_code", measure_error_name(r.error)},
                {"error_message", r.error_message},
                {"costs", r.costs},
                {"build_seconds", r.build_seconds},
                {"run_seconds", r.run_seconds},
                {"timestamp", r.timestamp}}},
              {"provenance",
               {{"origin", candidate_origin_name(r.origin)}, {"seed", r.seed}, {"round", r.round}}},
              {"tessel_version", r.tessel_version}};
    if (!r.constant.empty()) j["task"]["constant"] = r.constant;
    // Invalid UTF-8 in a message (a compiler's output) is replaced, never a throw.
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

TuningRecord make_record(const SearchTask& task, const MeasureInput& input,
                         const MeasureResult& result, uint64_t seed, int64_t round) {
    TuningRecord r;
    r.dag_hash = task.dag_hash_hex();
    r.workload = task.workload_name();
    r.params_json = workload_params_to_json(task.params());
    r.target = task.target().str();
    r.hardware = task.hardware();
    r.constant = task.constant();
    r.schedule_json = input.schedule.to_json();
    r.error = result.error;
    r.error_message = result.error_message;
    r.costs = result.costs;
    r.build_seconds = result.build_seconds;
    r.run_seconds = result.run_seconds;
    r.timestamp = result.timestamp;
    r.tessel_version = tessel_version();
    r.seed = seed;
    r.round = round;
    r.origin = input.origin;
    return r;
}

const char* tessel_version() {
    return TESSEL_VERSION_STRING;
}

}  // namespace tessel
