// The Measurer (auto_schedule/measure/Measure.h): per batch, the task's data (once per task), the
// build stage on the thread pool, then each built candidate in the worker: check run, comparison
// with the reference, timing. One function per stage; the error codes come from the stages.
#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <thread>

#include "auto_schedule/measure/MeasureInternal.h"
#include "support/Stopwatch.h"
#include "tessel/Error.h"

namespace tessel {

using internal::BuiltCandidate;
using internal::TaskData;
using internal::WorkerProcess;
using json = nlohmann::json;

namespace {

using internal::seconds_since;

using Clock = std::chrono::steady_clock;

double unix_time() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The outputs a Run reply carries, compared with the references here.
std::vector<CompareResult> client_comparisons(const TaskData& data,
                                              const std::vector<uint8_t>& bytes) {
    std::vector<HostArray> outputs = internal::split_outputs(data, bytes);
    std::vector<CompareResult> checks;
    for (size_t i = 0; i < outputs.size(); ++i)
        checks.push_back(compare_to_reference(outputs[i], data.reference[i], data.tolerance[i]));
    return checks;
}

// The comparisons the worker made (a Run reply's "checks", one per output).
std::vector<CompareResult> worker_comparisons(const TaskData& data, const json& header) {
    const json& list = header.at("checks");
    if (!list.is_array() || list.size() != data.reference.size())
        TESSEL_THROW(RuntimeError)
            << "measurement: the worker returned " << (list.is_array() ? list.size() : 0)
            << " comparisons for " << data.reference.size() << " outputs";
    std::vector<CompareResult> checks;
    for (size_t i = 0; i < list.size(); ++i) {
        const json& j = list[i];
        CompareResult c;
        c.tolerance = data.tolerance[i];
        c.total = static_cast<int64_t>(data.reference[i].size());
        c.mismatches = j.at("mismatches").get<int64_t>();
        c.ok = c.mismatches == 0;
        int64_t worst = j.at("worst").get<int64_t>();
        if (worst >= 0 && worst < c.total) {
            c.worst_index = data.reference[i].index_of(worst);
            // JSON has no NaN or infinity: the worker writes them as null (NaN) and the
            // ratio's infinity as null too.
            auto number = [&j](const char* key) {
                return j.at(key).is_number() ? j.at(key).get<double>() : NAN;
            };
            c.worst_actual = number("actual");
            c.worst_expected = number("expected");
            c.worst_ratio = j.at("ratio").is_number() ? j.at("ratio").get<double>() : INFINITY;
        }
        checks.push_back(std::move(c));
    }
    return checks;
}

// The simulated worker (MeasureOptions::simulate_ms): no worker process; the device time is
// slept, so that several simulated workers on one small machine overlap as devices of a cluster
// would. `built` (simulate_builds): the candidates' real builds, whose failures are theirs.
std::vector<MeasureResult> simulate(const std::vector<MeasureInput>& inputs, double ms,
                                    const std::vector<BuiltCandidate>* built) {
    std::vector<MeasureResult> results;
    for (size_t i = 0; i < inputs.size(); ++i) {
        MeasureResult r;
        if (built) {
            r.build_seconds = (*built)[i].seconds;
            r.error = (*built)[i].error;
            r.error_message = (*built)[i].message;
        }
        if (r.error == MeasureError::None) {
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
            r.costs = {simulated_cost(inputs[i].schedule)};
            r.run_seconds = ms * 1e-3;  // the simulated time itself: records stay reproducible
        }
        r.timestamp = unix_time();
        results.push_back(std::move(r));
    }
    return results;
}

}  // namespace

double simulated_cost(const Schedule& schedule) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a of the step list
    for (unsigned char c : schedule.to_json()) h = (h ^ c) * 1099511628211ull;
    return 1e-3 * (1.0 + static_cast<double>(h % 1000003) / 1000003.0);
}

std::string default_measure_worker_path() {
    if (const char* env = std::getenv("TESSEL_MEASURE_WORKER"); env && *env) return env;
    if (access(TESSEL_MEASURE_WORKER_INSTALLED, X_OK) == 0) return TESSEL_MEASURE_WORKER_INSTALLED;
    return TESSEL_MEASURE_WORKER_BUILD;
}

struct Measurer::Impl {
    MeasureOptions options;
    MeasureStats stats;
    WorkerProcess worker;
    std::map<std::string, std::shared_ptr<const TaskData>> tasks;

    explicit Impl(MeasureOptions o)
        : options(std::move(o)),
          worker(options.worker_path.empty() ? default_measure_worker_path() : options.worker_path,
                 options.worker_memory_limit_bytes, options.allow_test_faults) {
        if (options.array_offset < 0 || options.array_offset >= 4096 ||
            options.array_offset % 16 != 0)
            TESSEL_THROW(RuntimeError) << "Measurer: array_offset " << options.array_offset
                                       << " is not a multiple of 16 below 4096 (bytes past a "
                                          "page at which the worker places each CPU argument)";
    }

    const TaskData& task_data(const SearchTask& task);
    bool ensure_setup(const TaskData& data, MeasureResult& r);
    bool check_run(const TaskData& data, const BuiltCandidate& built, TestFault fault,
                   MeasureResult& r);
    void time_candidate(MeasureResult& r);
    MeasureResult run_candidate(const TaskData& data, const BuiltCandidate& built,
                                const MeasureInput& input);
};

const TaskData& Measurer::Impl::task_data(const SearchTask& task) {
    std::string key = task.key();
    auto it = tasks.find(key);
    if (it != tasks.end()) return *it->second;
    auto t0 = Clock::now();
    auto data = std::make_shared<const TaskData>(internal::prepare_task(task, options, worker));
    stats.reference += seconds_since(t0);
    return *tasks.emplace(key, std::move(data)).first->second;
}

// A worker holding this task's inputs: started (or replaced) and sent them if need be.
bool Measurer::Impl::ensure_setup(const TaskData& data, MeasureResult& r) {
    if (worker.running() && worker.task_key == data.key) return true;
    auto t0 = Clock::now();
    WorkerProcess::Outcome o = worker.request(data.setup, options.run_timeout_seconds);
    stats.worker_start += seconds_since(t0);
    if (o.error != MeasureError::None) {
        r.error = MeasureError::WorkerError;
        r.error_message = "the worker could not take the task: " + o.message;
        return false;
    }
    worker.task_key = data.key;
    return true;
}

// The run on NaN-filled outputs, and the comparison of its outputs with the reference.
bool Measurer::Impl::check_run(const TaskData& data, const BuiltCandidate& built, TestFault fault,
                               MeasureResult& r) {
    auto t0 = Clock::now();
    WorkerProcess::Outcome o =
        worker.request(internal::run_request(built.module, fault), options.run_timeout_seconds);
    double elapsed = seconds_since(t0);
    r.run_seconds += elapsed;
    if (o.error != MeasureError::None) {
        r.error = o.error;
        r.error_message = o.message;
        return false;
    }
    double load = o.header.value("load_seconds", 0.0), run = o.header.value("run_seconds", 0.0);
    stats.load += load;
    stats.check_run += run;
    stats.transfer += std::max(0.0, elapsed - load - run);
    t0 = Clock::now();
    std::vector<CompareResult> checks = data.worker_checks ? worker_comparisons(data, o.header)
                                                           : client_comparisons(data, o.reply.data);
    stats.check += seconds_since(t0) + o.header.value("check_seconds", 0.0);
    for (size_t i = 0; i < checks.size(); ++i) {
        if (checks[i].ok) continue;
        r.error = MeasureError::WrongAnswer;
        r.error_message = "output '" + data.output_names[i] + "': " + checks[i].message();
        break;
    }
    return r.error == MeasureError::None;
}

void Measurer::Impl::time_candidate(MeasureResult& r) {
    json header = {{"number", options.number},
                   {"repeat", options.repeat},
                   {"min_repeat_ms", options.min_repeat_ms},
                   {"flush_cache", options.flush_cache}};
    double limit = (options.run_timeout_seconds + 4 * options.min_repeat_ms * 1e-3) *
                   std::max(1, options.repeat);
    auto t0 = Clock::now();
    WorkerProcess::Outcome o =
        worker.request({internal::measure::MessageKind::Time, header.dump(), {}}, limit);
    r.run_seconds += seconds_since(t0);
    if (o.error != MeasureError::None) {  // a crash or a timeout: no header
        r.error = o.error;
        r.error_message = o.message;
        return;
    }
    stats.timing += o.header.value("seconds", 0.0);
    const json& costs = o.header.contains("costs") ? o.header["costs"] : json();
    bool numbers = costs.is_array() && !costs.empty();
    for (const json& c : costs)
        numbers =
            numbers && c.is_number() && std::isfinite(c.get<double>()) && c.get<double>() >= 0;
    if (!numbers) {
        r.error = MeasureError::WorkerError;
        r.error_message = "the worker's timing reply has no costs (a list of times): " +
                          costs.dump().substr(0, 80);
        return;
    }
    r.costs = costs.get<std::vector<double>>();
}

MeasureResult Measurer::Impl::run_candidate(const TaskData& data, const BuiltCandidate& built,
                                            const MeasureInput& input) {
    MeasureResult r;
    r.build_seconds = built.seconds;
    if (built.error != MeasureError::None) {
        r.error = built.error;
        r.error_message = built.message;
    } else {
        // A worker that speaks nonsense (a reply missing its fields) costs its candidate, not
        // the measurement: the reply's fields are read with nlohmann's checked accessors.
        try {
            if (ensure_setup(data, r) && check_run(data, built, input.test_fault, r))
                time_candidate(r);
        } catch (const json::exception& e) {
            r.error = MeasureError::WorkerError;
            r.error_message = std::string("the worker's reply is malformed: ") + e.what();
        }
    }
    r.timestamp = unix_time();
    return r;
}

Measurer::Measurer(MeasureOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Measurer::~Measurer() = default;

const MeasureOptions& Measurer::options() const {
    return impl_->options;
}

const MeasureStats& Measurer::stats() const {
    impl_->stats.workers_started = impl_->worker.starts();
    impl_->stats.process_start = impl_->worker.start_seconds();
    return impl_->stats;
}

std::vector<MeasureResult> Measurer::measure(const SearchTask& task,
                                             const std::vector<MeasureInput>& inputs) {
    auto t0 = Clock::now();
    Impl& m = *impl_;
    for (const MeasureInput& in : inputs)
        if (in.test_fault != TestFault::None && !m.options.allow_test_faults)
            TESSEL_THROW(RuntimeError) << "measurement: a test fault without allow_test_faults";
    const bool simulated = m.options.simulate_ms > 0;
    const TaskData* data = simulated ? nullptr : &m.task_data(task);
    auto tb = Clock::now();
    std::vector<BuiltCandidate> built;
    if (!simulated || m.options.simulate_builds)
        built = internal::build_candidates(task, inputs, internal::build_thread_count(m.options),
                                           m.options.build_timeout_seconds);
    m.stats.build += seconds_since(tb);
    std::vector<MeasureResult> results;
    if (simulated) {
        auto ts = Clock::now();
        results =
            simulate(inputs, m.options.simulate_ms, m.options.simulate_builds ? &built : nullptr);
        m.stats.timing += seconds_since(ts);
    } else {
        for (size_t i = 0; i < inputs.size(); ++i)
            results.push_back(m.run_candidate(*data, built[i], inputs[i]));
    }
    m.stats.candidates += static_cast<int64_t>(inputs.size());
    m.stats.total += seconds_since(t0);
    return results;
}

}  // namespace tessel
