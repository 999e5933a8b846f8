// InjectTmaStores: the copies of tma_store() stages (Schedule::tma_store) as TMA bulk tensor
// stores.
//
// Expects: schedule_ops' output with barriers placed (insert_barriers), before
// inject_double_buffer; each tma_store() stage's copy out of its shared stage marked
// `tma_store_copy` (the loops inside the one the shared stage is computed at).
//
// Guarantees: each marked copy becomes: a fence_proxy_async by every thread (their stores into
// the shared tile visible to the asynchronous proxy), a thread_barrier, the tma_store calls of
// the tile's boxes and a tma_store_wait issued by the block's thread (0, 0, 0), and a
// thread_barrier (the tile is not written again before the stores have read it). Throws
// ScheduleError naming the stage when the copy is not one TMA can make (lower/TmaCopies.h).
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Lowers the marked copies of tma_store() stages (see the file comment).
Stmt inject_tma_stores(const Stmt& s);

}  // namespace tessel
