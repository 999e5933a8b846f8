// The reference interpreter: evaluates a tensor-expression DAG directly, without a schedule. It
// defines what every schedule, pass and backend must compute (docs/design.md, decision 2).
//
//   Tensor A = placeholder({n, k}, Float(32), "A"); ...  Tensor C = compute(...);
//   std::vector<HostArray> out = evaluate_reference({C}, {{A, a_values}, {B, b_values}});
//   EXPECT_CLOSE_TO_REFERENCE(kernel_out, out[0], tolerance_for(Float(32), k));
//
// Semantics:
//  - Operations run in topo_order(outputs); each compute is evaluated at every point of its axes,
//    outermost axis first, with the expression semantics of ir/IR.h in FloatMode::Ideal
//    (ir/ExprEval.h): float values are computed and *held* in double, never rounded to float32 or
//    float16, also in intermediate tensors; integers are exact in their declared type (an int8
//    compute wraps modulo 2^8).
//  - A Reduce starts from its combiner's identity and visits the points of its reduce axes in
//    order (first axis outermost, each from its domain's min upwards), combining the sources where
//    the condition holds by evaluating the combiner's result expressions (argmax combines two
//    values; its ties go to whichever the combiner keeps, i.e. the lowest index for tessel's).
//  - Every tensor read is bounds-checked: an index outside the tensor's shape throws
//    RuntimeError naming the tensor, the reading compute, the index and the shape. if_then_else
//    is lazy, so `if_then_else(i > 0, A(i - 1), 0)` never reads A[-1].
//  - Symbolic extents: a placeholder extent that is a plain variable is bound to the extent of
//    the array given for it; every other extent must then evaluate to a constant.
//
// Compute bodies are compiled once per operation into a tree of closures over variable slots;
// subexpressions that occur more than once, or that depend only on outer loops (e.g. a conv's
// input row inside the column loop), are evaluated once per change of what they depend on. The
// file is built with -O2 even in Debug builds: matmul 128^3 takes ~0.13 s, a 3x3 conv2d on
// 1x16x32x32 with 16 output channels well under a second.
#pragma once

#include <utility>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/te/Operation.h"

namespace tessel {

/// Evaluates `outputs` given one array per placeholder the DAG reads, matched to the placeholder
/// by operation identity. Returns one array per output, in order, in ArrayStorage::Ideal (float
/// dtypes hold the ideal double values; integer dtypes their exact values).
///
/// Throws RuntimeError, naming the tensor: a placeholder without an input, an input of the wrong
/// dtype or shape, an input given twice or for a tensor that is no placeholder, an out-of-bounds
/// read, a symbolic extent that cannot be determined, a non-positive extent, or an expression the
/// DSL does not produce (vectors, loads, barriers, a Reduce below the top of a body).
std::vector<HostArray> evaluate_reference(const std::vector<Tensor>& outputs,
                                          const std::vector<std::pair<Tensor, HostArray>>& inputs);

}  // namespace tessel
