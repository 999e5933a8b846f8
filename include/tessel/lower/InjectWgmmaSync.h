// InjectWgmmaSync: the synchronisation of Hopper's asynchronous warp-group mma (ir/IR.h, wgmma).
//
// Expects: flattened IR after unroll_loops (a k tile's wgmmas are then consecutive statements of
// one Seq), barriers placed.
//
// Guarantees: every wgmma is preceded by a wgmma_fence and followed by a wgmma_commit and a
// wgmma_wait(0) before any other statement of its block (so its accumulator and its shared
// operands are free again by the next statement); consecutive wgmmas share one fence, commit and
// wait (one group: the tensor core runs them back to back). In a function that issues wgmmas,
// every thread_barrier is preceded by a fence_proxy_async: shared tiles that ordinary stores or
// cp.async wrote before the barrier are then visible to the asynchronous proxy that wgmma reads
// them through.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Places wgmma's fences, commits and waits (see the file comment).
Stmt inject_wgmma_sync(const Stmt& s);

}  // namespace tessel
