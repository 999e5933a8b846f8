// Small helpers shared by the lowering passes (src/lower/): the no-op statement and index
// arithmetic that folds constants as it builds, so passes emit readable indices without running
// the full simplifier.
#pragma once

#include "tessel/ir/IR.h"

namespace tessel::internal {

/// The statement that does nothing: `Evaluate(0)`.
Stmt make_noop_stmt();
/// True for `Evaluate(c)` of an integer constant (what make_noop_stmt builds).
bool is_noop_stmt(const Stmt& s);
/// `Evaluate(Call(op, args))`: an intrinsic called for its effect (a barrier, a fence, an async
/// copy's commit or wait).
Stmt call_stmt(Intrinsic op, std::vector<Expr> args = {});
/// Whether `s` is `Evaluate(Call(op, ...))`.
bool is_call_stmt(const Stmt& s, Intrinsic op);
/// The block's barrier: `call_stmt(Intrinsic::thread_barrier)`.
Stmt barrier_stmt();
/// Whether `s` is the block's barrier (`is_call_stmt(s, Intrinsic::thread_barrier)`).
bool is_barrier_stmt(const Stmt& s);

/// a + b, folding constants and dropping a zero operand. Operands have one type.
Expr fold_add(const Expr& a, const Expr& b);
/// a - b, folding constants and dropping a zero right operand.
Expr fold_sub(const Expr& a, const Expr& b);
/// a * b, folding constants, dropping a one operand and collapsing a zero operand.
Expr fold_mul(const Expr& a, const Expr& b);
/// `e` converted to the integer type `t` (unchanged when it already has it; constants refolded).
Expr cast_index(Type t, const Expr& e);
/// The wider of two integer types (int64 wins over int32; scalar).
Type wider_index_type(Type a, Type b);
/// The product of `extents` (folded), in type `t`; 1 for none.
Expr fold_product(const std::vector<Expr>& extents, Type t);
/// Whether `s` contains a thread barrier or a cross-thread reduction (a synchronisation of the
/// threads of a block).
bool has_thread_sync(const Stmt& s);

/// `c` without `likely` hints at the top.
Expr strip_likely(const Expr& c);
/// Appends the conjuncts of `c` (likely hints stripped) to `out`.
void split_conjuncts(const Expr& c, std::vector<Expr>* out);

/// Lane `k` of a vector expression as a scalar expression (Ramp, Broadcast, Cast, unpredicated
/// Load, arithmetic, comparisons, And/Or/Not), or undefined where it cannot be written.
Expr lane_of(const Expr& e, int k);

/// The threads of a warp (CUDA's warp size).
constexpr int kWarpSize = 32;
/// Whether a thread_allreduce over the thread axes `axes` (0: threadIdx.x, 1: y, 2: z) of a block
/// of `dims` threads (-1: an extent not known) reduces within warps: the axes are x, or x and y
/// (each group is consecutive threads), the group is a power of two no larger than a warp (so no
/// group straddles two warps), and every warp is full or the block is a single warp. CUDA reduces
/// such groups with warp shuffles alone, which order no memory: the all-reduce is then no
/// barrier (insert_barriers places thread_barriers around it by its own analysis, the SPMD
/// interpreter's race detector does not start a new phase at it, and the CUDA code has no
/// __syncthreads()). Any other all-reduce is a barrier of the whole block.
bool allreduce_within_warps(const int64_t dims[3], const std::vector<int>& axes);

}  // namespace tessel::internal
