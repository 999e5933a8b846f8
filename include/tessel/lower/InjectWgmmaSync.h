// InjectWgmmaSync: the synchronisation of Hopper's asynchronous warp-group mma (ir/IR.h, wgmma).
//
// Expects: flattened IR after unroll_loops (a k tile's wgmmas are then consecutive statements of
// one Seq), barriers placed.
//
// Guarantees: every wgmma is preceded by a wgmma_fence and followed by a wgmma_commit and a
// wgmma_wait before any statement of its block other than asynchronous copies reads its
// accumulator or overwrites its shared operands; consecutive wgmmas share one fence, commit and
// wait (one group: the tensor core runs them back to back). The wait comes after the cp_async
// copies (and commits) that follow the group: a pipeline's copies in a k loop fill another stage
// than the one its wgmmas read (lower/InjectDoubleBuffer.h), and are issued while the tensor cores
// work (the interpreter reports a copy into an operand a pending wgmma reads). In a serial loop
// whose body ends in such a group, the group stays in flight into the next iteration: the body
// waits with wgmma_wait(1) (the previous iteration's group) right after its commit, then a
// thread_barrier (when copies follow: every warp group has retired the group that read the stage
// the copies overwrite), then the copies; a wgmma_wait(0) follows the loop. In a function that
// issues wgmmas, every thread_barrier after which shared tiles written by ordinary stores or
// cp.async may be read is preceded by a fence_proxy_async: they are then visible to the
// asynchronous proxy that wgmma reads them through. A serial loop whose body writes no shared
// memory through the generic proxy (TMA tiles, register accumulators, global stores) has one
// fence before it instead of one per barrier.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Places wgmma's fences, commits and waits (see the file comment).
Stmt inject_wgmma_sync(const Stmt& s);

}  // namespace tessel
