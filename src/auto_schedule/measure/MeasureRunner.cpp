// Measurement requests and results as JSON, and the local runner
// (auto_schedule/measure/MeasureRunner.h).
#include "tessel/auto_schedule/measure/MeasureRunner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/JsonFields.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel {

namespace {

using json = nlohmann::json;

constexpr const char* kFaultNames[] = {"none",
                                       "segfault",
                                       "abort",
                                       "hang",
                                       "out_of_bounds_write",
                                       "wrong_values",
                                       "out_of_memory",
                                       "build_hang",
                                       "hang_while_timing",
                                       "malformed_reply"};

[[noreturn]] void bad(const std::string& what) {
    TESSEL_THROW(RuntimeError) << "measurement JSON: " << what;
}

json parse(const std::string& text, const char* what) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) bad(std::string("a ") + what + " is not a JSON object");
    return j;
}

using Fields = internal::JsonFields;
using internal::FieldProblem;
using internal::kRequired;

// The protocol's wording of a field problem of a request or a result.
[[noreturn]] void bad_field(const FieldProblem& p) {
    using K = FieldProblem::Kind;
    if (!p.field) bad(p.key + " is not a finite time");  // a cost
    switch (p.kind) {
        case K::Missing: bad("missing field '" + p.key + "'");
        case K::WrongType: bad("field '" + p.key + "' has the wrong type");
        case K::OutOfRange: bad("field '" + p.key + "' is not finite");
        case K::UnknownName: bad("unknown " + p.noun);
        default: bad(internal::describe(p));
    }
}

// A reader of one object of a request or result. bad_field throws: a read that returns has
// succeeded.
Fields fields(const json& j) {
    return Fields(j, "", bad_field);
}

double finite(Fields& f, const char* key) {
    return f.required_number(key, std::numeric_limits<double>::lowest(),
                             std::numeric_limits<double>::max());
}

// Every field of MeasureOptions, as MeasureOptions::fields describes them. Each is required but
// those added after the protocol's first requests, which keep their defaults when absent.
json options_json(const MeasureOptions& o) {
    return internal::options_json(o, internal::kEveryField);
}

MeasureOptions options_from(const json& j) {
    if (!j.is_object()) bad("'options' is not an object");
    MeasureOptions o;
    Fields f(j, "options", [](const FieldProblem& p) {
        bad(p.kind == FieldProblem::Kind::Missing ? "missing field '" + p.key + "'"
                                                  : internal::describe(p));
    });
    const std::vector<std::string> names =
        internal::option_names<MeasureOptions>(internal::kEveryField);
    std::vector<std::string> required = names;
    std::erase_if(required, [](const std::string& n) {
        return n == "device_id" || n == "workers" || n == "simulate_ms" ||
               n == "simulate_builds" || n == "array_offset";
    });
    f.require(required);
    f.only(names);
    internal::read_options(f, o, internal::kEveryField);
    return o;
}

// A built module travels inside the request's JSON as base64 (RFC 4648, padded).
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string to_base64(const std::vector<uint8_t>& bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t v = static_cast<uint32_t>(bytes[i]) << 16;
        if (i + 1 < bytes.size()) v |= static_cast<uint32_t>(bytes[i + 1]) << 8;
        if (i + 2 < bytes.size()) v |= bytes[i + 2];
        out += kBase64[(v >> 18) & 63];
        out += kBase64[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? kBase64[(v >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? kBase64[v & 63] : '=';
    }
    return out;
}

std::vector<uint8_t> from_base64(const std::string& text) {
    if (text.size() % 4 != 0) bad("a built module's base64 is not a whole number of quads");
    std::vector<uint8_t> out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (size_t k = 0; k < 4; ++k) {
            char c = text[i + k];
            const char* at = c ? std::strchr(kBase64, c) : nullptr;
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                ++pad;
                v <<= 6;
                continue;
            }
            if (!at || pad) bad("a built module's base64 has a bad character");
            v = (v << 6) | static_cast<uint32_t>(at - kBase64);
        }
        out.push_back(static_cast<uint8_t>(v >> 16));
        if (pad < 2) out.push_back(static_cast<uint8_t>(v >> 8));
        if (pad < 1) out.push_back(static_cast<uint8_t>(v));
    }
    return out;
}

json built_json(const BuiltModule& b) {
    return {{"error", measure_error_name(b.error)},
            {"message", b.message},
            {"module", to_base64(b.module)},
            {"seconds", b.seconds}};
}

std::shared_ptr<const BuiltModule> built_from(const json& j) {
    if (!j.is_object()) bad("'built' is not an object");
    Fields f = fields(j);
    auto b = std::make_shared<BuiltModule>();
    f.choice("error", b->error, measure_error_from_name, "measurement error", kRequired);
    b->message = f.required_text("message");
    b->module = from_base64(f.required_text("module"));
    b->seconds = f.required_number("seconds", 0, std::numeric_limits<double>::max());
    if (b->error == MeasureError::None && b->module.empty())
        bad("a built candidate without an error has no module");
    return b;
}

}  // namespace

std::string built_module_to_json(const BuiltModule& built) {
    return built_json(built).dump();
}

const SearchTask& request_task(const MeasureRequest& request,
                               std::map<std::string, SearchTask>& cache) {
    auto it = cache.find(request.task_key);
    if (it != cache.end()) return it->second;
    SearchTask task = SearchTask::from_json(request.task_json);
    if (task.key() != request.task_key)
        TESSEL_THROW(RuntimeError) << "measurement: the request's task key '" << request.task_key
                                   << "' is not its task's ('" << task.key() << "')";
    return cache.emplace(request.task_key, std::move(task)).first->second;
}

const char* test_fault_name(TestFault fault) {
    return kFaultNames[static_cast<size_t>(fault)];
}

std::optional<TestFault> test_fault_from_name(const std::string& name) {
    for (size_t i = 0; i < std::size(kFaultNames); ++i)
        if (name == kFaultNames[i]) return static_cast<TestFault>(i);
    return std::nullopt;
}

MeasureRequest make_measure_request(const SearchTask& task, const std::vector<MeasureInput>& inputs,
                                    const MeasureOptions& options) {
    MeasureRequest r;
    r.task_key = task.key();
    r.task_json = task.to_json();
    r.options = options;
    for (const MeasureInput& in : inputs)
        r.candidates.push_back({in.schedule.to_json(), in.origin, in.test_fault, in.built});
    return r;
}

std::string measure_options_to_json(const MeasureOptions& options) {
    return options_json(options).dump();
}

MeasureOptions measure_options_from_json(const std::string& text) {
    return options_from(parse(text, "MeasureOptions"));
}

std::string measure_request_to_json(const MeasureRequest& request) {
    json candidates = json::array();
    for (const MeasureCandidate& c : request.candidates) {
        json one = {{"schedule", json::parse(c.schedule_json)},
                    {"origin", candidate_origin_name(c.origin)},
                    {"test_fault", test_fault_name(c.test_fault)}};
        if (c.built) one["built"] = built_json(*c.built);
        candidates.push_back(std::move(one));
    }
    return json{{"task_key", request.task_key},
                {"task", json::parse(request.task_json)},
                {"candidates", std::move(candidates)},
                {"options", options_json(request.options)}}
        .dump();
}

MeasureRequest measure_request_from_json(const std::string& text) {
    json j = parse(text, "MeasureRequest");
    Fields f = fields(j);
    MeasureRequest r;
    r.task_key = f.required_text("task_key");
    r.task_json = f.value("task", kRequired)->dump();
    r.options = options_from(*f.value("options", kRequired));
    const json* candidates = f.value("candidates", kRequired);
    if (!candidates->is_array()) bad("'candidates' is not an array");
    for (const json& c : *candidates) {
        if (!c.is_object()) bad("a candidate is not an object");
        Fields cf = fields(c);
        MeasureCandidate m;
        m.schedule_json = cf.value("schedule", kRequired)->dump();
        cf.choice("origin", m.origin, candidate_origin_from_name, "candidate origin", kRequired);
        cf.choice("test_fault", m.test_fault, test_fault_from_name, "test fault", kRequired);
        if (const json* b = cf.value("built")) m.built = built_from(*b);
        r.candidates.push_back(std::move(m));
    }
    return r;
}

std::string measure_result_to_json(const MeasureResult& result) {
    return json{{"error", measure_error_name(result.error)},
                {"error_message", result.error_message},
                {"costs", result.costs},
                {"build_seconds", result.build_seconds},
                {"run_seconds", result.run_seconds},
                {"timestamp", result.timestamp}}
        .dump();
}

MeasureResult measure_result_from_json(const std::string& text) {
    json j = parse(text, "MeasureResult");
    Fields f = fields(j);
    MeasureResult r;
    f.choice("error", r.error, measure_error_from_name, "measurement error", kRequired);
    r.error_message = f.required_text("error_message");
    for (const json& c : *f.array("costs", kRequired)) {
        double v = 0;
        f.number_item(c, "a cost", v, 0, std::numeric_limits<double>::max());
        r.costs.push_back(v);
    }
    r.build_seconds = finite(f, "build_seconds");
    r.run_seconds = finite(f, "run_seconds");
    r.timestamp = finite(f, "timestamp");
    return r;
}

int LocalMeasureRunner::worker_count(const SearchTask& task, const MeasureOptions& options,
                                     size_t candidates) {
    int n = options.workers;
    if (n == 0) n = task.target().is_gpu() ? std::max(1, cuda_device_count()) : 1;
    return static_cast<int>(std::clamp<size_t>(candidates, 1, static_cast<size_t>(n)));
}

LocalMeasureRunner::LocalMeasureRunner(MeasureOptions options) : options_(std::move(options)) {}
LocalMeasureRunner::~LocalMeasureRunner() = default;

Measurer& LocalMeasureRunner::measurer_for(const MeasureOptions& options, int worker) {
    std::string key = options_json(options).dump() + "#" + std::to_string(worker);
    auto it = measurers_.find(key);
    if (it == measurers_.end())
        it = measurers_.emplace(key, std::make_unique<Measurer>(options)).first;
    return *it->second;
}

const SearchTask& LocalMeasureRunner::task_for(const MeasureRequest& request) {
    return request_task(request, tasks_);
}

std::vector<MeasureResult> LocalMeasureRunner::run(const MeasureRequest& request) {
    const SearchTask& task = task_for(request);
    std::vector<MeasureResult> results(request.candidates.size());
    std::vector<MeasureInput> inputs;
    std::vector<size_t> where;
    for (size_t i = 0; i < request.candidates.size(); ++i) {
        const MeasureCandidate& c = request.candidates[i];
        try {
            inputs.push_back({task.apply_record(c.schedule_json), c.origin, c.test_fault, c.built});
            where.push_back(i);
        } catch (const ScheduleError& e) {
            results[i].error = MeasureError::InstantiationError;
            results[i].error_message = e.what();
        }
    }
    if (inputs.empty()) return results;
    // Candidate k goes to worker k % n (on GPU tasks with several: device_id k % n); several
    // workers measure at the same time, each from a thread of its own, and the results go back
    // in request order.
    const int n = worker_count(task, request.options, inputs.size());
    std::vector<std::vector<MeasureInput>> slices(n);
    std::vector<Measurer*> measurers;
    for (size_t k = 0; k < inputs.size(); ++k) slices[k % n].push_back(std::move(inputs[k]));
    for (int w = 0; w < n; ++w) {
        MeasureOptions o = request.options;
        if (n > 1 && task.target().is_gpu()) o.device_id = w;
        measurers.push_back(&measurer_for(o, w));
    }
    std::vector<std::vector<MeasureResult>> measured(n);
    std::vector<std::exception_ptr> failed(n);
    std::vector<std::thread> threads;
    if (n == 1)
        measured[0] = measurers[0]->measure(task, slices[0]);  // inline: no thread
    else
        for (int w = 0; w < n; ++w)
            threads.emplace_back([&, w] {
                try {
                    measured[w] = measurers[w]->measure(task, slices[w]);
                } catch (...) {
                    failed[w] = std::current_exception();
                }
            });
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
    for (size_t k = 0; k < where.size(); ++k) results[where[k]] = std::move(measured[k % n][k / n]);
    return results;
}

MeasureStats LocalMeasureRunner::stats() const {
    MeasureStats sum;
    for (const auto& [key, m] : measurers_) {
        const MeasureStats& s = m->stats();
        sum.candidates += s.candidates;
        sum.workers_started += s.workers_started;
        sum.reference += s.reference;
        sum.build += s.build;
        sum.worker_start += s.worker_start;
        sum.process_start += s.process_start;
        sum.load += s.load;
        sum.check_run += s.check_run;
        sum.transfer += s.transfer;
        sum.check += s.check;
        sum.timing += s.timing;
        sum.total += s.total;
    }
    return sum;
}

}  // namespace tessel
