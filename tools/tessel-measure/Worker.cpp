// The worker's requests (Worker.h). A candidate runs once on outputs filled with NaN, with guard
// zones around every CPU argument whose damage is an out-of-bounds write; its outputs are
// compared with the references here (float32 and float64 outputs, once the client has sent the
// references) or go back to the client, which compares them; only then is it timed, as TVM's
// runners time (number runs per repeat, number raised until a repeat lasts min_repeat_ms).
#include "Worker.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/CompareValues.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/CudaTimer.h"
#include "tessel/Error.h"

namespace tessel::measure_worker {

using internal::measure::Message;
using internal::measure::MessageKind;
using json = nlohmann::json;
namespace status = internal::measure::status;

namespace {

// A page: each argument starts on a page plus the Setup's "array_offset" (MeasureOptions: where
// users' arrays lie; the placement of a kernel's buffers changes its speed:
// docs/perf/tune-gemm-cpu.md, docs/perf/user-calls.md).
constexpr size_t kGuardBytes = 4096;
constexpr uint8_t kGuardByte = 0xA5;

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int64_t elements(const NDArray& a) {
    return a.nbytes() / a.dtype().bytes();
}

// The byte every output is filled with before the check run: 0xFF makes NaN in every float
// format (all exponent bits set, a nonzero mantissa), 0x5A the pattern of HostArray's poison
// for the others. A candidate that leaves an element unwritten then fails the comparison.
uint8_t poison_byte(DataType t) {
    return t.code == DataTypeCode::Float || t.code == DataTypeCode::BFloat ? 0xFF : 0x5A;
}

// How `n` values of an output compare with their reference (CompareValues.h), as Run's reply
// states it; JSON writes NaN and infinities as null.
json comparison(const void* actual, int actual_bits, const void* expected, int expected_bits,
                int64_t n, double rtol, double atol) {
    internal::ValueComparison c;
    auto with_expected = [&](const auto* a) {
        if (expected_bits == 64)
            c = internal::compare_values(a, static_cast<const double*>(expected), n, rtol, atol);
        else
            c = internal::compare_values(a, static_cast<const float*>(expected), n, rtol, atol);
    };
    if (actual_bits == 64)
        with_expected(static_cast<const double*>(actual));
    else
        with_expected(static_cast<const float*>(actual));
    return {{"mismatches", c.mismatches},
            {"worst", c.worst},
            {"actual", c.worst_actual},
            {"expected", c.worst_expected},
            {"ratio", c.worst_ratio}};
}

}  // namespace

Worker::Worker(WorkerOptions options) : options_(options) {}
Worker::~Worker() = default;

Message Worker::handle(const Message& request) {
    Message reply;
    reply.kind = MessageKind::Reply;
    json answer;
    try {
        json header = json::parse(request.json);
        switch (request.kind) {
            case MessageKind::Setup: answer = setup(header, request.data); break;
            case MessageKind::Run: answer = run(header, request.data, reply.data); break;
            case MessageKind::Time: answer = time(header); break;
            default:
                answer = {{"status", status::kBadRequest}, {"message", "unknown request kind"}};
        }
    } catch (const std::bad_alloc&) {
        answer = {{"status", status::kOutOfMemory}, {"message", "the worker ran out of memory"}};
        reply.data.clear();
    } catch (const json::exception& e) {
        answer = {{"status", status::kBadRequest}, {"message", e.what()}};
    } catch (const std::exception& e) {
        answer = {{"status", status::kRunError}, {"message", e.what()}};
        reply.data.clear();
    }
    reply.json = answer.dump();
    return reply;
}

NDArray Worker::allocate(const std::vector<int64_t>& shape, DataType dtype, Argument& arg) const {
    if (gpu_) return NDArray::empty(shape, dtype, cuda(device_id_));
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    size_t bytes = static_cast<size_t>(n * dtype.bytes());
    size_t total =
        (bytes + array_offset_ + 2 * kGuardBytes + kGuardBytes - 1) / kGuardBytes * kGuardBytes;
    auto* raw = static_cast<uint8_t*>(std::aligned_alloc(kGuardBytes, total));
    if (!raw) throw std::bad_alloc();
    arg.guarded = std::shared_ptr<uint8_t[]>(raw, [](uint8_t* p) { std::free(p); });
    std::memset(raw, kGuardByte, total);
    return NDArray::from_external(raw + kGuardBytes + array_offset_, shape, dtype, cpu(), nullptr);
}

json Worker::setup(const json& request, const std::vector<uint8_t>& data) {
    gpu_ = request.at("device").get<std::string>() == "cuda";
    device_id_ = request.value("device_id", 0);
    const int64_t asked = request.value("array_offset", int64_t{0});
    if (asked < 0 || asked >= static_cast<int64_t>(kGuardBytes) || asked % 16 != 0)
        throw std::invalid_argument("array_offset " + std::to_string(asked) +
                                    " is not a multiple of 16 below " +
                                    std::to_string(kGuardBytes));
    array_offset_ = static_cast<size_t>(asked);
    args_.clear();
    arrays_.clear();
    call_arrays_.clear();
    packed_.clear();
    checks_ = false;
    kernel_.reset();
    timer_.reset();
    if (gpu_) timer_ = std::make_unique<internal::cuda::StreamTimer>(device_id_);
    size_t offset = 0;
    for (const json& a : request.at("args")) {
        const json& t = a.at("dtype");
        DataType dtype = DataType::from_dlpack(
            {t.at(0).get<uint8_t>(), t.at(1).get<uint8_t>(), t.at(2).get<uint16_t>()});
        Argument arg;
        arg.output = a.at("output").get<bool>();
        arg.array = allocate(a.at("shape").get<std::vector<int64_t>>(), dtype, arg);
        if (!arg.output) {
            size_t n = static_cast<size_t>(arg.array.nbytes());
            if (n > data.size() - offset)
                return {{"status", status::kBadRequest}, {"message", "too little input data"}};
            arg.array.copy_from(data.data() + offset, arg.array.nbytes());
            offset += n;
        }
        if (arg.output && a.contains("reference")) {
            const json& r = a.at("reference");
            arg.reference_bits = r.at("bits").get<int>();
            arg.rtol = r.at("rtol").get<double>();
            arg.atol = r.at("atol").get<double>();
            bool wide = dtype.code == DataTypeCode::Float && dtype.lanes == 1 &&
                        (dtype.bits == 32 || dtype.bits == 64);
            if (!wide || (arg.reference_bits != 32 && arg.reference_bits != 64))
                return {{"status", status::kBadRequest},
                        {"message", "a reference for an output that is not float32 or float64"}};
            if (gpu_) arg.host = NDArray::empty(arg.array.shape(), dtype, cpu());
        }
        arrays_.push_back(arg.array);
        args_.push_back(std::move(arg));
    }
    // The references follow the inputs, in the order of the outputs.
    int outputs = 0, references = 0;
    for (Argument& arg : args_) {
        if (!arg.output) continue;
        ++outputs;
        if (arg.reference_bits == 0) continue;
        ++references;
        size_t n = static_cast<size_t>(elements(arg.array)) * (arg.reference_bits / 8);
        if (n > data.size() - offset)
            return {{"status", status::kBadRequest}, {"message", "too little reference data"}};
        arg.reference.assign(data.begin() + offset, data.begin() + offset + n);
        offset += n;
    }
    if (references != 0 && references != outputs)
        return {{"status", status::kBadRequest},
                {"message", "references for some outputs but not all"}};
    checks_ = references > 0;
    // Where the CPU arguments lie, in bytes past their page (array_offset; tests read it).
    json placement = json::array();
    for (const Argument& a : args_)
        if (a.guarded)
            placement.push_back(reinterpret_cast<uintptr_t>(a.array.data()) % kGuardBytes);
    return {{"status", status::kOk}, {"placement", placement}};
}

json Worker::compare_outputs() {
    json checks = json::array();
    for (Argument& a : args_) {
        if (!a.output) continue;
        const void* values = a.array.data();
        if (gpu_) {
            a.array.copy_to(a.host.data(), a.host.nbytes());
            values = a.host.data();
        }
        checks.push_back(comparison(values, a.array.dtype().bits, a.reference.data(),
                                    a.reference_bits, elements(a.array), a.rtol, a.atol));
    }
    return checks;
}

void Worker::prefill_outputs() {
    for (Argument& a : args_) {
        if (a.output) {
            uint8_t byte = poison_byte(a.array.dtype());
            size_t bytes = static_cast<size_t>(a.array.nbytes());
            if (gpu_) {  // on the candidate's stream, so that it lands before the launch
                namespace cu = internal::cuda;
                auto ptr = reinterpret_cast<cu::CUdeviceptr>(a.array.data());
                auto stream = static_cast<cu::CUstream>(timer_->stream());
                cu::check(cu::driver().cuMemsetD8Async(ptr, byte, bytes, stream),
                          "cuMemsetD8Async");
            } else {
                std::memset(a.array.data(), byte, bytes);
            }
        }
        if (!a.guarded) continue;
        uint8_t* data = static_cast<uint8_t*>(a.array.data());
        std::memset(data - kGuardBytes, kGuardByte, kGuardBytes);
        std::memset(data + a.array.nbytes(), kGuardByte, kGuardBytes);
    }
}

std::optional<std::string> Worker::guard_damage() const {
    for (size_t i = 0; i < args_.size(); ++i) {
        if (!args_[i].guarded) continue;
        const uint8_t* data = static_cast<const uint8_t*>(args_[i].array.data());
        for (const uint8_t* zone : {data - kGuardBytes, data + args_[i].array.nbytes()}) {
            for (size_t b = 0; b < kGuardBytes; ++b) {
                if (zone[b] == kGuardByte) continue;
                return "the kernel wrote outside argument " + std::to_string(i) + " (" +
                       std::to_string(b) + " bytes " +
                       (zone < data ? "before its start)" : "past its end)");
            }
        }
    }
    return std::nullopt;
}

void Worker::launch() {
    kernel_->launch(call_arrays_, timer_ ? timer_->stream() : nullptr);
}

// A layout rewrite (the module holds `<kernel>_pre_transform`): runs the transform once on the
// task's weights and passes its results to the kernel in their places, so that the check and the
// timing cover the kernel alone, as a user calls it after packing the weights once. The kernel
// takes `<weight>_packed` at its weight's position; the transform takes the weights, then the
// packed buffers. The error message, if the transform cannot run.
std::optional<std::string> Worker::pre_transform(const std::string& kernel) {
    call_arrays_ = arrays_;
    packed_.clear();
    std::vector<std::string> names = module_.kernel_names();
    const std::string name = kernel + "_pre_transform";
    if (std::find(names.begin(), names.end(), name) == names.end()) return std::nullopt;
    Kernel transform = module_.get(name);
    const std::vector<ArgSpec>& targs = transform.signature().args;
    const std::vector<ArgSpec>& kargs = kernel_->signature().args;
    const size_t n = targs.size() / 2;
    std::vector<NDArray> call(targs.size());
    packed_.resize(n);
    for (size_t k = 0; k < n; ++k) {
        size_t i = 0;
        while (i < kargs.size() && kargs[i].name != targs[n + k].name) ++i;
        if (i >= kargs.size() || i >= arrays_.size())
            return "the kernel takes no argument '" + targs[n + k].name + "' of its pre_transform";
        std::vector<int64_t> shape;
        for (const Dim& d : targs[n + k].shape) shape.push_back(d.value);
        packed_[k].array = allocate(shape, targs[n + k].dtype, packed_[k]);
        call[k] = arrays_[i];
        call[n + k] = packed_[k].array;
        call_arrays_[i] = packed_[k].array;
    }
    transform.launch(call, timer_ ? timer_->stream() : nullptr);
    if (timer_) timer_->synchronize();
    return std::nullopt;
}

json Worker::run(const json& request, const std::vector<uint8_t>& data,
                 std::vector<uint8_t>& outputs) {
    if (args_.empty() && arrays_.empty())
        return {{"status", status::kBadRequest}, {"message", "Run before Setup"}};
    std::string fault = options_.test_faults ? request.value("fault", "") : "";
    timing_fault_ = fault == "hang_while_timing" ? "hang" : fault == "malformed_reply" ? fault : "";
    auto t0 = std::chrono::steady_clock::now();
    kernel_.reset();
    try {
        module_ = Module::load(data);
        kernel_ = module_.get(request.at("kernel").get<std::string>());
    } catch (const Error& e) {
        return {{"status", status::kLoadError}, {"message", e.what()}};
    }
    double load_seconds = seconds_since(t0);
    if (std::optional<std::string> bad = pre_transform(request.at("kernel").get<std::string>())) {
        kernel_.reset();
        return {{"status", status::kRunError}, {"message", *bad}};
    }
    prefill_outputs();
    plant_fault_before(fault);
    t0 = std::chrono::steady_clock::now();
    launch();
    if (timer_) timer_->synchronize();
    double run_seconds = seconds_since(t0);
    plant_fault_after(fault);
    if (std::optional<std::string> damage = guard_damage())
        return {{"status", status::kOutOfBounds}, {"message", *damage}};
    json reply = {
        {"status", status::kOk}, {"load_seconds", load_seconds}, {"run_seconds", run_seconds}};
    if (checks_) {
        t0 = std::chrono::steady_clock::now();
        reply["checks"] = compare_outputs();
        reply["check_seconds"] = seconds_since(t0);
        return reply;
    }
    for (const Argument& a : args_) {
        if (!a.output) continue;
        size_t at = outputs.size();
        outputs.resize(at + static_cast<size_t>(a.array.nbytes()));
        a.array.copy_to(outputs.data() + at, a.array.nbytes());
    }
    return reply;
}

}  // namespace tessel::measure_worker
