// LowerAsyncCopies: the stores of pipelined fetches become asynchronous copies (cp_async).
//
// Expects: flat IR after storage_flatten and vectorize_loops. inject_double_buffer wraps each
// fetch of a pipelined shared stage in AttrStmt("async_copy", depth) and places the
// cp_async_commit / cp_async_wait calls around it.
//
// Guarantees: inside an async_copy mark, a store into a shared buffer of a value loaded from
// global memory,
//     S[d] = A[s]                                  or
//     S[d] = if_then_else(c, A[s], 0)              (c: a padding guard)
// with d and s scalars or Ramps of the element's lanes, becomes cp_async copies of 16, 8 or 4
// bytes: the widest whose chunks of lanes are dense (stride 1) in both buffers and whose start
// indices are proven multiples of the chunk (modular analysis; the kernel then requires the
// source argument to be aligned to the chunk, as a vector load does), else one 4-byte copy per
// lane (scatters such as a transposing fetch). The guard becomes `src_bytes = c ? bytes : 0`
// (cp.async's zero fill) and the source index `c ? s : 0`, so nothing outside A is addressed;
// a guard that differs between lanes (a tile's k edge) gives one copy per lane with its lane of
// the guard (a load predicated by the same guard is accepted).
// Other stores in the mark (a computed value, a cast, lanes narrower than 4 bytes, a predicate)
// stay plain stores: they complete at once, which is correct, only not overlapped. The marks are
// removed.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel {

/// Lowers the stores of marked fetches to cp_async (see the file comment).
Stmt lower_async_copies(const Stmt& s);

}  // namespace tessel
