// VerifyThreadMapping: checks a schedule's GPU thread bindings before its loop nests are built.
//
// A kernel is a stage with blockIdx/threadIdx-bound loops that no such loop encloses (a root
// stage, or one computed at a serial loop of another: a kernel launched per iteration) together
// with every stage computed (transitively) inside it. The check guarantees, for every kernel:
//  - every loop bound to one thread axis (blockIdx.x ... threadIdx.z) has the same extent, in
//    every stage of the kernel (each axis is one launch dimension);
//  - only the kernel's root stage binds blockIdx, and within a stage the blockIdx loops are
//    outside the threadIdx loops;
//  - no stage binds an axis that an enclosing loop (of a stage it is computed inside) binds,
//    except a shared-scope stage binding threadIdx axes: the block's threads fill it together
//    (a cooperative fetch; bound inference relaxes its region over the enclosing thread loops);
//  - a stage computed inside a kernel whose buffer is private to each thread (not shared) binds
//    no data-parallel loop to threadIdx (each thread would fill only part of its own copy);
//  - the kernel's root stage and its shared-scope stages (whose buffers every thread sees) bind
//    every threadIdx axis of the kernel whose extent is not 1 (else the threads along it would all
//    write the same elements);
//  - a block has at most `max_threads_per_block` threads (1024 unless a target says otherwise),
//    and no loop of the kernel is CPU-parallel.
// Violations throw ScheduleError naming the stages, the axis and the extents, with the loop nest.
#pragma once

#include <vector>

#include "tessel/schedule/InferBounds.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// Checks the thread bindings of every kernel of `s` (see the file comment).
/// `bounds`: infer_bounds(s) when the caller has it (otherwise inferred here when needed).
void verify_thread_mapping(const Schedule& s, int max_threads_per_block = 1024,
                           const std::vector<StageBounds>* bounds = nullptr);

}  // namespace tessel
