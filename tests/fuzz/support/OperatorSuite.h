// The schedule fuzzer's operator suite: built-in workloads (auto_schedule/task/Workload.h) at small
// sizes (odd and prime extents, so that split factors often do not divide) covering the shapes
// of computation schedules meet:
// elementwise chains with broadcast, matmul, batch matmul, conv2d with padding and stride 2,
// depthwise conv, max pooling, softmax, layer norm, a reduction over a non-innermost axis,
// transpose and a two-output argmax. Each case runs in milliseconds in the loop interpreter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/ir/IR.h"

namespace tessel::fuzz {

/// One operator of the suite: a fresh DAG each time it is made.
struct FuzzOperator {
    std::string name;
    std::vector<Tensor> placeholders;  ///< the inputs, in argument order
    std::vector<Tensor> outputs;       ///< the schedule's outputs, in argument order
    int64_t reduction_length = 1;      ///< the longest reduction an output goes through
    double magnitude = 1.0;            ///< typical size of the reduced terms (tolerance_for)

    /// The lowered function's arguments: placeholders, then outputs.
    std::vector<Tensor> args() const;
    /// One random array per placeholder, deterministic in `seed`.
    std::vector<HostArray> random_inputs(uint64_t seed) const;
    /// The tolerance for output `i` (exact for integer outputs).
    Tolerance tolerance(size_t i) const;
};

/// The names of every operator of the suite, in a fixed order.
const std::vector<std::string>& operator_names();

/// A fresh DAG of the named operator; std::invalid_argument for an unknown name.
FuzzOperator make_operator(const std::string& name);

}  // namespace tessel::fuzz
