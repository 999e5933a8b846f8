// The measurement worker's state and its answers to the client's requests
// (src/runtime/MeasureProtocol.h): the task's arguments, the candidate module, its check run
// and its timing. It links libtessel_runtime alone (docs/design.md, decision 4).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "runtime/MeasureProtocol.h"
#include "tessel/runtime/Module.h"
#include "tessel/runtime/NDArray.h"

namespace tessel::internal::cuda {
class StreamTimer;
}

namespace tessel::measure_worker {

/// What the worker was started with.
struct WorkerOptions {
    /// Honour the "fault" field of Run requests (tests plant bad candidates with it).
    bool test_faults = false;
};

/// One worker process's state (see the file comment).
class Worker {
public:
    explicit Worker(WorkerOptions options);
    ~Worker();
    /// The reply to `request` (a Setup, Run or Time message); never throws for a bad request or
    /// a failing candidate, which are reported in the reply.
    internal::measure::Message handle(const internal::measure::Message& request);

private:
    struct Argument {
        NDArray array;
        std::shared_ptr<uint8_t[]> guarded;  // CPU: the array's memory between two guard zones
        bool output = false;
        // An output's reference (Setup's "reference"): float32 or float64 values, the tolerance,
        // and for GPU outputs a host array the output is copied into to be compared.
        std::vector<uint8_t> reference;
        int reference_bits = 0;
        double rtol = 0, atol = 0;
        NDArray host;
    };
    nlohmann::json setup(const nlohmann::json& request, const std::vector<uint8_t>& data);
    nlohmann::json run(const nlohmann::json& request, const std::vector<uint8_t>& data,
                       std::vector<uint8_t>& outputs);
    nlohmann::json time(const nlohmann::json& request);
    NDArray allocate(const std::vector<int64_t>& shape, DataType dtype, Argument& arg) const;
    void prefill_outputs();
    nlohmann::json compare_outputs();
    std::optional<std::string> guard_damage() const;
    void plant_fault_before(const std::string& fault);
    void plant_fault_after(const std::string& fault);
    void launch();
    std::optional<std::string> pre_transform(const std::string& kernel);
    double time_batch(int number);
    void flush_caches();

    WorkerOptions options_;
    bool gpu_ = false;
    int device_id_ = 0;
    size_t array_offset_ = 0;  // CPU arguments: bytes past their page (Setup's "array_offset")
    std::vector<Argument> args_;
    bool checks_ = false;          // the outputs have references: Run compares them here
    std::vector<NDArray> arrays_;  // the task's arguments (Setup)
    // The candidate's arguments: the task's, with each transformed weight (the module's
    // pre_transform, run once by Run) in its weight's place.
    std::vector<NDArray> call_arrays_;
    std::vector<Argument> packed_;  // the transformed weights (their guarded memory)
    std::optional<Kernel> kernel_;
    std::string timing_fault_;  // a test's fault for the next Time request (--test-faults)
    Module module_;
    std::unique_ptr<internal::cuda::StreamTimer> timer_;
};

}  // namespace tessel::measure_worker
