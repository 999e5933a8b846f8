// How an operation's reads use its axes: the analysis behind the default CPU schedules' choice
// of vector axes (op/DefaultSchedule.cpp, docs/operators.md "Vector axes from the reads").
//
//   dense_along(conv, ow)          // false for a stride-2 conv: x[.., 2 * ow + rx] gathers
//   plan_vector_axis(a, conv, t)   // NCHW conv: axis 1 (the output channels), w packed on dim 0
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tessel/Target.h"
#include "tessel/te/DAGAnalysis.h"
#include "tessel/te/Operation.h"

namespace tessel::op::internal {

/// How a read's indices use an axis.
enum class AxisUse {
    Invariant,  ///< no index uses it (a vector along it broadcasts the value)
    UnitLast,   ///< only the last index, as the axis plus or minus an expression free of it
    Bare,       ///< only one index before the last, exactly the axis (a pack can move it last)
    Other,      ///< anything else (a stride, two indices, a division ...)
};

/// How `indices` use `v`; for Bare (and Other), `*bare_dim` is the index that uses it.
AxisUse axis_use(const std::vector<Expr>& indices, const Var& v, int* bare_dim);

/// The tensor reads of an operation's body, in evaluation order.
std::vector<const TensorRead*> tensor_reads(const ComputeOpNode* c);

/// Every read of `c` is Invariant or UnitLast along `v`: a vector along `v` needs no gather.
bool dense_along(const ComputeOpNode* c, const Var& v);

/// Some read of `c` uses its innermost axis Bare and the next one UnitLast (transpose's x[j, i]).
bool reads_transposed(const ComputeOpNode* c);

/// The vector axis of a data-reusing (tiled) operation on a CPU.
struct VectorAxisPlan {
    int axis = -1;  ///< -1: the innermost output axis; else the output axis to vectorise
    std::vector<std::pair<Tensor, int>> packs;  ///< placeholders read with `axis` Bare, and where
    bool as_reduction = false;  ///< no tile: a reduction vectorised along its innermost axis
};

/// The plan for tiled operation `op` of `a` (an index of a.ops()) for `target`: an empty plan
/// when the innermost output axis is a good vector axis (its extent a multiple of the vector
/// width, every read dense or invariant along it); else the innermost other output axis whose
/// extent is a multiple of the width and whose every read is invariant, dense or (placeholders
/// only) Bare; else, when the reads are dense along the innermost reduction axis and its extent
/// has a divisor of at least the width, as_reduction.
VectorAxisPlan plan_vector_axis(const DAGAnalysis& a, int op, const Target& target);

}  // namespace tessel::op::internal
