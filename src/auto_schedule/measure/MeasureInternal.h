// The parts of the Measurer (auto_schedule/measure/Measure.h): the build pool, the worker process,
// the task's data and reference. Measurer.cpp strings them together.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/MeasureProtocol.h"
#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/auto_schedule/measure/Measure.h"

namespace tessel::internal {

/// A candidate after the build stage: its saved module, or why there is none.
using BuiltCandidate = BuiltModule;

/// Builds `inputs` on `threads` threads, each build under `timeout_seconds` (MeasureBuild.cpp);
/// an input that carries its build (MeasureInput::built) is taken as it is.
std::vector<BuiltCandidate> build_candidates(const SearchTask& task,
                                             const std::vector<MeasureInput>& inputs, int threads,
                                             double timeout_seconds);

/// MeasureOptions::build_threads, or the host's hardware threads when it is 0.
int build_thread_count(const MeasureOptions& options);

/// Waits up to `timeout_seconds` until no build thread of build_candidates() is alive, abandoned
/// ones included; false if one still is. Code that must not leave a build computing (a test
/// about to end its process, whose static destructors it would run into) calls it.
bool wait_for_build_threads(double timeout_seconds);

/// The name of TestFault `f` as the worker reads it ("" for None and BuildHang).
const char* worker_fault_name(TestFault f);

/// A tessel-measure process and the socket to it (MeasureWorker.cpp). Started on first use,
/// replaced after it dies; killed with the object.
class WorkerProcess {
public:
    WorkerProcess(std::string path, int64_t memory_limit_bytes, bool test_faults);
    ~WorkerProcess();
    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    /// The outcome of one request: the reply, or the error the worker's death or silence means.
    struct Outcome {
        MeasureError error = MeasureError::None;
        std::string message;
        measure::Message reply;
        nlohmann::json header;  ///< the reply's JSON
    };
    /// Sends `request` and waits at most `timeout_seconds` for the reply; a worker that is not
    /// running is started first. A dead or silent worker is reaped (killed first if silent).
    Outcome request(const measure::Message& request, double timeout_seconds);
    /// True when a worker is running (reaping one that died meanwhile).
    bool running();
    /// Processes started so far.
    int64_t starts() const { return starts_; }
    /// Seconds from starting each process to its first reply, summed.
    double start_seconds() const { return start_seconds_; }
    /// The key of the task whose inputs the running worker holds ("" for none).
    std::string task_key;

private:
    void start();
    Outcome reap(bool killed_for_timeout, const std::string& what);

    std::string path_;
    int64_t memory_limit_;
    bool test_faults_;
    pid_t pid_ = 0;
    int fd_ = -1;
    int64_t starts_ = 0;
    double start_seconds_ = 0;
    bool awaiting_first_reply_ = false;
    std::chrono::steady_clock::time_point started_at_;
};

/// What the workers need of a task, computed once per task (MeasureReference.cpp).
struct TaskData {
    std::string key;
    measure::Message setup;            ///< the Setup request: arguments and input data
    std::vector<HostArray> inputs;     ///< the random inputs, in DAG input order
    std::vector<HostArray> reference;  ///< one per output
    std::vector<Tolerance> tolerance;  ///< one per output
    std::vector<std::string> output_names;
    /// The setup carries the references: the worker compares outputs and replies with "checks".
    bool worker_checks = false;
};

/// The task's inputs and reference output (Measure.h's file comment); `worker` runs the
/// default-schedule build of large tasks. RuntimeError when no sound reference can be made.
TaskData prepare_task(const SearchTask& task, const MeasureOptions& options, WorkerProcess& worker);

/// The Run request of a saved module (the kernel is "main").
measure::Message run_request(const std::vector<uint8_t>& module, TestFault fault);

/// Splits a Run reply's data into one array per output of `data` (dtype and shape as the
/// reference's); RuntimeError when the sizes do not add up.
std::vector<HostArray> split_outputs(const TaskData& data, const std::vector<uint8_t>& bytes);

}  // namespace tessel::internal

namespace tessel::internal {

/// Compares `outputs` (one per output of `dag`, in order) with the reference interpreter at
/// `samples` random points of each output (MeasureSample.cpp); one result per output.
std::vector<CompareResult> check_at_samples(const TensorDAG& dag,
                                            const std::vector<std::pair<Tensor, HostArray>>& inputs,
                                            const std::vector<HostArray>& outputs,
                                            const std::vector<Tolerance>& tolerance, int samples,
                                            uint64_t seed);

}  // namespace tessel::internal
