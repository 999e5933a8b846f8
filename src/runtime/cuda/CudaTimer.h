// Timing CUDA kernels the way the tuner's measurement worker needs it: on a stream of the
// worker's own, between two CUDA events, with an optional L2 flush (a memset of a buffer as large
// as the device's L2 cache) queued before each timed batch so that every batch starts cold.
#pragma once

#include <cstdint>

#include "runtime/cuda/CudaDriver.h"

namespace tessel::internal::cuda {

/// A stream and two events on device `id` (see the file comment). RuntimeError when CUDA is
/// unavailable, there is no such device, or the driver lacks the stream or event entry points.
class StreamTimer {
public:
    explicit StreamTimer(int device);
    ~StreamTimer();
    StreamTimer(const StreamTimer&) = delete;
    StreamTimer& operator=(const StreamTimer&) = delete;

    /// The stream kernels are launched on (Kernel::launch's `stream`).
    void* stream() const { return stream_; }
    /// Queues an L2 flush on the stream (before start(); not part of the time).
    void flush_l2();
    /// Records the start event on the stream.
    void start();
    /// Records the stop event, waits for it, and returns the seconds between the two events.
    double stop();
    /// Waits for everything queued on the stream; RuntimeError if a kernel failed.
    void synchronize();

private:
    int device_;
    CUstream stream_ = nullptr;
    CUevent start_ = nullptr, stop_ = nullptr;
    CUdeviceptr flush_buffer_ = 0;
    size_t flush_bytes_ = 0;
};

}  // namespace tessel::internal::cuda
