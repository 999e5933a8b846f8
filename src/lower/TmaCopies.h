// The bulk tensor copies (ir/IR.h, tma_load) of a tma() stage's fetch, for inject_double_buffer,
// and those (tma_store) of a tma_store() stage's copy out of shared memory, for inject_tma_stores.
//
// A tma() stage's fetch is its own nest: one serial loop an axis of the shared tile around the
// copy `tile[i, j, ..] = src[c_0 + i, c_1 + j, ..]`, maybe guarded by the source's bounds (a
// padded tile). It becomes boxes of the global tensor: each source dimension is one box
// dimension, the box as wide as the shared layout is dense along the innermost one (a row of a
// swizzled tile, or of a panel of storage_split columns) and whole along the others; one
// tma_load a box. The bounds guards go: TMA reads zeros outside the tensor.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/ir/IR.h"

namespace tessel::internal {

/// The copies of one fetch, and the bytes they bring (what the mbarrier expects).
struct TmaFetch {
    Stmt issue;  ///< the tma_load calls, in box order
    int64_t bytes = 0;
};

/// The tma_load calls of `nest` (the fetch of shared stage `stage`, its loop variable already
/// the iteration it fetches, its store into one copy of the stage's buffer) into pipeline copy
/// `copy` of `copy_elems` elements each, completing on mbarrier (bar, copy). Throws
/// ScheduleError naming the stage when the fetch is not a plain copy of a global tensor or its
/// layout is not one that boxes fill.
TmaFetch tma_copies(const Stmt& nest, const std::string& stage, const Expr& copy,
                    int64_t copy_elems, const Var& bar);

/// The tma_store calls of `nest` (a tma_store() stage's copy out of its shared stage, the
/// tile's origin fixed by the loops around it), then a tma_store_wait: one box a dense run of
/// the tile's rows, as tma_copies boxes a fetch. Its guards must be bounds of the tensor (TMA
/// skips the elements past its edges). Throws ScheduleError naming the stage when the copy is not
/// a plain one from shared memory or its layout is not one that boxes cover.
Stmt tma_stores(const Stmt& nest, const std::string& stage);

/// `body` executed by the block's thread (0, 0, 0) only: threadIdx loops of extent 1.
Stmt on_first_thread(const Stmt& body);

}  // namespace tessel::internal
