// Measurement as plain data through one interface (docs/daemon.md, "More than one machine"): the
// search hands a MeasureRequest (the task as JSON, each candidate's step list, the options) to a
// MeasureRunner and gets one MeasureResult per candidate back. Both serialise to JSON, so a
// runner on other machines (a cluster on an existing distributed engine) can be added without
// touching the search; LocalMeasureRunner measures on this machine with a Measurer.
//
//   auto runner = std::make_shared<LocalMeasureRunner>(MeasureOptions{});
//   MeasureRequest req = make_measure_request(task, {{schedule}}, runner->options());
//   std::string wire = measure_request_to_json(req);                  // to another machine
//   std::vector<MeasureResult> r = runner->run(measure_request_from_json(wire));
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessel/auto_schedule/measure/Measure.h"
#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel {

/// One candidate of a request: its step list and where it came from.
struct MeasureCandidate {
    std::string schedule_json;  ///< Schedule::to_json() of a schedule of the task's DAG
    CandidateOrigin origin = CandidateOrigin::Manual;
    TestFault test_fault = TestFault::None;  ///< tests only (MeasureOptions::allow_test_faults)
    /// Built already, maybe on another machine (build_modules()): the measuring end only times
    /// it. In JSON, "built": {error, message, module (base64), seconds}; absent: build there.
    std::shared_ptr<const BuiltModule> built = nullptr;
};

/// What to measure: a task, candidates of it, and how.
struct MeasureRequest {
    std::string task_key;   ///< SearchTask::key()
    std::string task_json;  ///< SearchTask::to_json(): a runner rebuilds the task from it alone
    std::vector<MeasureCandidate> candidates;
    MeasureOptions options;
};

/// The request of measuring `inputs` of `task` with `options`.
MeasureRequest make_measure_request(const SearchTask& task, const std::vector<MeasureInput>& inputs,
                                    const MeasureOptions& options);

/// A request, a result, and measurement options as one JSON object each, and back. The readers
/// check every field and throw RuntimeError naming the first bad one.
std::string measure_request_to_json(const MeasureRequest& request);
MeasureRequest measure_request_from_json(const std::string& text);
std::string measure_result_to_json(const MeasureResult& result);
MeasureResult measure_result_from_json(const std::string& text);
std::string measure_options_to_json(const MeasureOptions& options);
MeasureOptions measure_options_from_json(const std::string& text);

/// A built module as the JSON object a candidate's "built" field holds.
std::string built_module_to_json(const BuiltModule& built);

/// The task of `request`, rebuilt from its JSON once per task key into `cache` (RuntimeError when
/// the key is not its task's).
const SearchTask& request_task(const MeasureRequest& request,
                               std::map<std::string, SearchTask>& cache);

/// "none", "segfault", "abort", "hang", "out_of_bounds_write", "wrong_values", "out_of_memory",
/// "build_hang", "hang_while_timing", "malformed_reply".
const char* test_fault_name(TestFault fault);
/// The fault named `name`; nullopt for an unknown name.
std::optional<TestFault> test_fault_from_name(const std::string& name);

/// Measures requests: one result per candidate, in order. Throws (RuntimeError) only when the
/// task itself cannot be measured (as Measurer::measure).
class MeasureRunner {
public:
    virtual ~MeasureRunner() = default;
    virtual std::vector<MeasureResult> run(const MeasureRequest& request) = 0;
    /// Where the time went so far (zeros where a runner does not know).
    virtual MeasureStats stats() const { return {}; }
    /// True when the candidates are timed on other machines, so that work on this one (the
    /// tuner's next search, TuningOptions::search_ahead) cannot disturb their timings: the tuner
    /// then calls run() from a thread of its own while it searches. Asked between runs; a runner
    /// answering true must keep stats() (and its other getters) safe to call during run().
    virtual bool times_elsewhere() const { return false; }
};

/// Measures on this machine: a Measurer (worker processes, Measure.h) per distinct
/// MeasureOptions of the requests, and each task rebuilt from its JSON once. A candidate whose
/// steps do not replay is an instantiation_error, without building anything. A request is spread
/// over worker_count() workers measuring at the same time (MeasureOptions::workers): by default
/// one per CUDA device for GPU tasks, candidate k on device k % n; one for CPU tasks. It times
/// on this machine (times_elsewhere() is false): a search beside a CPU timing would share its
/// cores, and beside a GPU timing would delay the launches its events time.
class LocalMeasureRunner : public MeasureRunner {
public:
    /// `options`: what stats() reports on, and the first Measurer's (started on first use).
    explicit LocalMeasureRunner(MeasureOptions options = {});
    ~LocalMeasureRunner() override;
    std::vector<MeasureResult> run(const MeasureRequest& request) override;
    MeasureStats stats() const override;
    const MeasureOptions& options() const { return options_; }
    /// The workers a request of `candidates` candidates of `task` is spread over: `workers`, or
    /// when 0 the CUDA devices of this machine (at least 1) for a GPU task and 1 for a CPU task;
    /// never more than the candidates.
    static int worker_count(const SearchTask& task, const MeasureOptions& options,
                            size_t candidates);

private:
    /// The Measurer of worker `worker` (0, 1, ...) of requests with `options`.
    Measurer& measurer_for(const MeasureOptions& options, int worker);
    const SearchTask& task_for(const MeasureRequest& request);

    MeasureOptions options_;
    std::map<std::string, std::unique_ptr<Measurer>> measurers_;  // by options JSON and worker
    std::map<std::string, SearchTask> tasks_;                     // by task key
};

}  // namespace tessel
