// Timing a checked candidate (Worker::time), cache flushes, and the planted faults of tests.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "Worker.h"
#include "runtime/cuda/CudaTimer.h"
#include "tessel/runtime/ThreadPool.h"

namespace tessel::measure_worker {

using json = nlohmann::json;
namespace status = internal::measure::status;

namespace {

// A batch is never raised past this many runs (a kernel that takes no measurable time).
constexpr int kMaxNumber = 1 << 24;

}  // namespace

double Worker::time_batch(int number) {
    if (timer_) {
        timer_->start();
        for (int i = 0; i < number; ++i) launch();
        return timer_->stop();
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < number; ++i) launch();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU: every cache line of every argument is flushed (clflush), so the timed batch starts with
// its data in memory, as a kernel that follows another operator would find it. GPU: the L2.
void Worker::flush_caches() {
    if (timer_) {
        timer_->flush_l2();
        return;
    }
#if defined(__x86_64__)
    for (const NDArray& a : call_arrays_) {
        const char* p = static_cast<const char*>(a.data());
        for (int64_t i = 0; i < a.nbytes(); i += 64) __builtin_ia32_clflush(p + i);
    }
    __builtin_ia32_mfence();
#endif
}

// Each repeat is one cost: the mean of `number` runs, with `number` raised (by the ratio of
// min_repeat_ms to what the batch took, at least by the golden ratio, as TVM does) until a batch
// lasts min_repeat_ms; the raised number carries over to later repeats.
json Worker::time(const json& request) {
    if (!kernel_) return {{"status", status::kBadRequest}, {"message", "Time before Run"}};
    int number = std::max(1, request.at("number").get<int>());
    int repeat = std::max(1, request.at("repeat").get<int>());
    double min_seconds = request.at("min_repeat_ms").get<double>() * 1e-3;
    bool flush = request.value("flush_cache", false);
    if (timing_fault_ == "malformed_reply") return {{"status", status::kOk}, {"costs", "fast"}};
    plant_fault_before(timing_fault_);
    auto t0 = std::chrono::steady_clock::now();
    json costs = json::array();
    for (int r = 0; r < repeat; ++r) {
        double seconds = 0;
        for (;;) {
            if (flush) flush_caches();
            seconds = time_batch(number);
            if (seconds >= min_seconds || number >= kMaxNumber) break;
            double scale = seconds > 0 ? min_seconds / seconds : 1e3;
            number = static_cast<int>(std::min<double>(
                kMaxNumber, std::max(std::ceil(number * scale * 1.05), number * 1.618 + 1)));
        }
        costs.push_back(seconds / number);
    }
    double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {{"status", status::kOk}, {"costs", costs}, {"number", number}, {"seconds", total}};
}

// Faults planted by tests (--test-faults): real crashes, hangs and bad writes of the worker
// process, as a broken kernel would cause them.
void Worker::plant_fault_before(const std::string& fault) {
    if (fault == "segfault") {
        volatile uintptr_t address = 16;
        *reinterpret_cast<volatile int*>(address) = 1;
    } else if (fault == "abort") {
        std::abort();
    } else if (fault == "hang") {  // on every thread of the pool, as a parallel kernel would
        tessel::ThreadPool& pool = tessel::ThreadPool::global();
        pool.parallel_for(0, pool.num_threads(), [](int64_t) {
            volatile bool spin = true;
            while (spin) {
            }
        });
    } else if (fault == "out_of_memory") {
        rlimit limit{};
        getrlimit(RLIMIT_AS, &limit);
        if (limit.rlim_cur == RLIM_INFINITY) throw std::bad_alloc();  // never eat the machine
        std::vector<std::unique_ptr<char[]>> blocks;
        for (;;) {
            blocks.emplace_back(new char[64 << 20]);
            std::memset(blocks.back().get(), 1, 64 << 20);
        }
    }
}

void Worker::plant_fault_after(const std::string& fault) {
    if (args_.empty() || gpu_) return;
    Argument* out = nullptr;
    for (Argument& a : args_)
        if (a.output && !out) out = &a;
    if (!out) return;
    auto* data = static_cast<uint8_t*>(out->array.data());
    if (fault == "out_of_bounds_write") {
        std::memset(data + out->array.nbytes(), 0, static_cast<size_t>(out->array.dtype().bytes()));
    } else if (fault == "wrong_values") {
        for (int64_t b = 0; b < out->array.dtype().bytes(); ++b) data[b] ^= 0x40;
    }
}

}  // namespace tessel::measure_worker
