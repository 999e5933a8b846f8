// Printing a tensor-expression DAG as text.
#pragma once

#include <string>
#include <vector>

#include "tessel/ir/IR.h"

namespace tessel {

/// The DAG of `outputs` in topological order, one operation per line (with one printer, so names
/// are unique across the whole DAG):
///
///     A = placeholder((128, 64), float32)
///     C[i0, i1] = sum(A[i0, k] * B[k, i1], axis=[k in range(0, 64)])  # float32, 1048576 flops
///
/// Multi-output operations print one line per output.
std::string dag_to_string(const std::vector<Tensor>& outputs);

}  // namespace tessel
