// StorageFlatten: multi-dimensional buffer accesses → flat loads and stores.
//
// Expects: a lowered function whose body accesses memory through BufferLoad / BufferStore, and
// allocates each of its own buffers with an `Allocate` whose buffer variable is the buffer's data
// variable and whose extents are the buffer's shape (the form lowering builds before flattening).
// Indices may be vectors (after vectorization): a Ramp index in one dimension, the others scalar,
// becomes a Ramp flat index; any other vector index becomes a lane-wise (gather) flat index.
//
// Guarantees: no BufferLoad or BufferStore is left. Each access becomes a Load / Store on the
// buffer's data variable at the element index
//     sum_k index_k * stride_k + elem_offset,
// where stride_k are the buffer's strides when it has them and the compact row-major strides of
// its shape otherwise (stride of the last dimension 1); zero offsets and unit strides are folded
// away. The index type is the widest of the buffer's shape / stride types and the index types
// (int32 indices into an int64 buffer are cast). A swizzled buffer's (storage_swizzle) index is
// then `swizzle(index, vector, span, phases)` (ir/IR.h); a dense vector index inside one chunk
// stays a Ramp, of the swizzled base. Every Allocate with several extents gets one
// extent, their product (folded when constant). The function's args are unchanged.
#pragma once

#include "tessel/lower/LoweredFunc.h"

namespace tessel {

/// Flattens every buffer access and allocation of `f` (see the file comment).
LoweredFunc storage_flatten(const LoweredFunc& f);

/// The flat element index of `indices` into `buffer` (the expression storage_flatten emits);
/// exposed for passes and tests that build flat accesses themselves.
Expr flat_index(const Buffer& buffer, const std::vector<Expr>& indices);

/// flat_index without the buffer's swizzle.
Expr unswizzled_flat_index(const Buffer& buffer, const std::vector<Expr>& indices);

/// `swizzle(index, z...)` (ir/IR.h); a Ramp of stride 1 whose base is a proven multiple of its
/// lanes, which divide z.vector, stays a Ramp (of the swizzled base). Used by storage_flatten and
/// by vectorize_loops when it widens a swizzled index.
Expr swizzle_index(const Expr& index, const BufferSwizzle& z);

/// The unswizzled flat index of a scalar index of a swizzled buffer, `swizzle(o, z...)` or (as
/// the simplifier moves whole phase cycles out) `swizzle(o, z...) + y` with y a sum of terms that
/// are provably multiples of z.span * z.phases (a constant, a pipelined loop's stage offset):
/// o + y, with the swizzle in `z` and y in `outside` (0 when there is none). Undefined for any
/// other index. Tensor-core tile operands use it.
Expr unswizzled_index(const Expr& index, BufferSwizzle* z, Expr* outside = nullptr);

/// The summands of `o` that are provably multiples of z.span * z.phases (whole phase cycles,
/// which a swizzle leaves alone: swizzle(x + y) = swizzle(x) + y for x >= 0), added up;
/// undefined when there are none. `rest` gets the other summands (0 when there are none).
Expr split_whole_cycles(const Expr& o, const BufferSwizzle& z, Expr* rest);

}  // namespace tessel
