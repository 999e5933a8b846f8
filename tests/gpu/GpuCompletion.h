// The GPU schedule fuzzer's completion: turns a schedule with random steps into a complete GPU
// program by binding what is not bound yet, as a person finishing a GPU schedule would:
//  - every root stage (a kernel) without a blockIdx binding gets its leading serial
//    data-parallel loops fused, split by `threads` and bound to (blockIdx.x, threadIdx.x); when it
//    already binds threadIdx.x (e.g. a cross-thread reduction) the fused loop becomes blockIdx.x;
//  - every shared-scope stage computed inside a kernel that does not bind threadIdx.x fetches
//    cooperatively: its leading serial data-parallel loops fused, split by the kernel's
//    threadIdx.x extent and the inner part bound to threadIdx.x.
// Local stages stay private to each thread. The completion is recorded as ordinary steps, so the
// finished schedule replays from its step list.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "tessel/schedule/Schedule.h"

namespace tessel::testing {

/// Thrown when the completion cannot make a kernel of a root stage (its outermost loop is a
/// reduction, vectorized, unrolled or a virtual thread, and nothing is bound).
struct CompletionRefused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Completes `s` (see the file comment) with `threads` threads per block for the kernels it binds.
/// Throws ScheduleError when a primitive refuses, CompletionRefused as above.
void complete_gpu_schedule(Schedule& s, int64_t threads);

}  // namespace tessel::testing
