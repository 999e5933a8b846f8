// The measurement worker's CUDA stream timer (CudaTimer.h).
#include "runtime/cuda/CudaTimer.h"

#include "tessel/Error.h"

namespace tessel::internal::cuda {

namespace {

const DriverApi& timing_driver() {
    const DriverApi& api = driver();
    if (!api.cuStreamCreate || !api.cuStreamDestroy_v2 || !api.cuEventCreate ||
        !api.cuEventDestroy_v2 || !api.cuEventRecord || !api.cuEventSynchronize ||
        !api.cuEventElapsedTime || !api.cuMemsetD8Async)
        TESSEL_THROW(RuntimeError) << "the CUDA driver lacks the stream and event entry points "
                                      "that GPU measurement needs";
    return api;
}

constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDefault = 0;       // CU_EVENT_DEFAULT (timing enabled)

}  // namespace

StreamTimer::StreamTimer(int device) : device_(device) {
    const DriverApi& api = timing_driver();
    ContextGuard guard(device_);
    check(api.cuStreamCreate(&stream_, kStreamNonBlocking), "cuStreamCreate");
    check(api.cuEventCreate(&start_, kEventDefault), "cuEventCreate");
    check(api.cuEventCreate(&stop_, kEventDefault), "cuEventCreate");
    flush_bytes_ = static_cast<size_t>(device_attribute(device_, kL2CacheSize));
    if (flush_bytes_ > 0) check(api.cuMemAlloc_v2(&flush_buffer_, flush_bytes_), "cuMemAlloc");
}

StreamTimer::~StreamTimer() {
    const DriverApi* api = driver_or_null();
    if (!api) return;
    ContextGuard guard(device_);
    if (flush_buffer_) api->cuMemFree_v2(flush_buffer_);
    if (start_) api->cuEventDestroy_v2(start_);
    if (stop_) api->cuEventDestroy_v2(stop_);
    if (stream_) api->cuStreamDestroy_v2(stream_);
}

void StreamTimer::flush_l2() {
    if (!flush_buffer_) return;
    ContextGuard guard(device_);
    check(driver().cuMemsetD8Async(flush_buffer_, 0x5A, flush_bytes_, stream_), "cuMemsetD8Async");
}

void StreamTimer::start() {
    ContextGuard guard(device_);
    check(driver().cuEventRecord(start_, stream_), "cuEventRecord");
}

double StreamTimer::stop() {
    ContextGuard guard(device_);
    const DriverApi& api = driver();
    check(api.cuEventRecord(stop_, stream_), "cuEventRecord");
    check(api.cuEventSynchronize(stop_), "cuEventSynchronize (a kernel failed?)");
    float ms = 0;
    check(api.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
    return ms * 1e-3;
}

void StreamTimer::synchronize() {
    ContextGuard guard(device_);
    check(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

}  // namespace tessel::internal::cuda
