// Static analysis of a tensor-expression DAG for the auto-scheduler's sketch rules, as Ansor's
// AccessAnalyzer (auto_scheduler/compute_dag.cc): who reads whom, which operations may be inlined,
// which reuse data and so need multi-level tiling, which can be fused with their consumer, and the
// extents and arithmetic of each operation.
//
//   DAGAnalysis a({R});                      // R = relu(matmul(A, B))
//   int c = a.index_of(C.op());              // operations are numbered as the stages of
//   a.needs_multi_level_tiling(c);           //   create_schedule({R}): topo_order(outputs)
//   a.elementwise_consumer(c) == a.index_of(R.op());
//
// Definitions (op is a compute; its "axes" are its data-parallel axes):
//  - A read of a tensor is *simple* when every index is a constant or one of op's axis variables
//    plus or minus an integer constant (A[i, j], A[i + 1, 0]; not A[i + j], A[2 * i], A[k]).
//    It *misses* an axis that appears in no index, *duplicates* one that appears twice, and keeps
//    the *same order* when the axes appear in increasing axis order.
//  - Strictly inlinable: a compute that is no output, has no reduction, and either reads nothing
//    or reads only simply, in the same order, without duplicates, with no exp and no branch
//    (Select, if_then_else) in its body: inlining it never duplicates expensive work. (Ansor
//    inlines these always on CPUs.)
//  - Inlinable: a compute that is no output and has no reduction (what compute_inline accepts).
//  - Needs multi-level tiling (has data reuse): counting, over the tensors op reads, those whose
//    reads together miss an axis of op with extent > 1 (symbolic extents count as > 1): two or
//    more, or one when op has a reduction. Matmul's A misses j: yes; softmax's row max reads
//    X[i, k], missing nothing: no; an outer product A[i] * B[j] misses two: yes.
//  - Element-wise matched: op feeds target through a chain of operations each with exactly one
//    consumer, every step between computes of one output shape that read their producer simply,
//    in the same order, missing and duplicating no axis.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/te/Operation.h"

namespace tessel {

/// The analysis of one DAG (see the file comment for the definitions). Operation indices are
/// positions in topo_order(outputs); methods taking one throw DSLError if it is out of range.
class DAGAnalysis {
public:
    /// Analyses the DAG of `outputs`; DSLError if there is none or one is undefined.
    explicit DAGAnalysis(const std::vector<Tensor>& outputs);

    /// The operations in topo_order(outputs), which is also their stage order in a fresh Schedule.
    const std::vector<Operation>& ops() const { return ops_; }
    int num_ops() const { return static_cast<int>(ops_.size()); }
    /// The index of `op`; DSLError if it is not an operation of the DAG.
    int index_of(const Operation& op) const;

    /// A placeholder (an input).
    bool is_placeholder(int op) const;
    /// Produces one of the DAG's outputs.
    bool is_output(int op) const;
    /// A compute whose body is a reduction.
    bool has_reduction(int op) const;

    /// The operations `op` reads, in first-read order (op_inputs).
    const std::vector<int>& producers(int op) const;
    /// The operations that read `op`, in topological order.
    const std::vector<int>& consumers(int op) const;
    /// The consumers of `op` once the operations marked in `inlined` (by index; shorter vectors
    /// mark nothing beyond their end) are inlined: an inlined consumer is replaced by its own
    /// consumers, recursively (as Ansor's GetConsumers of a state). Sorted, without repeats.
    std::vector<int> consumers(int op, const std::vector<bool>& inlined) const;
    /// The producers of `op` seen through inlined producers, likewise.
    std::vector<int> producers(int op, const std::vector<bool>& inlined) const;

    /// Every read of `op` is simple (true for placeholders, as in Ansor).
    bool has_simple_access(int op) const;
    /// Strictly inlinable (see above).
    bool is_strictly_inlinable(int op) const;
    /// Inlinable (see above).
    bool is_inlinable(int op) const;
    /// Needs multi-level tiling: the operation reuses data (see above).
    bool needs_multi_level_tiling(int op) const;
    /// Element-wise matched from `op` to `target` (see above); true when op == target.
    bool elementwise_match(int op, int target) const;
    /// The consumer `op` can be fused with, as Ansor's HasSingleElementwiseMatchedConsumer: the
    /// single consumer (through `inlined` operations) if it is element-wise matched with `op` and
    /// not both have a reduction; -1 otherwise.
    int elementwise_consumer(int op, const std::vector<bool>& inlined = {}) const;

    /// The extents of op's data-parallel axes (its output shape); -1 for a symbolic extent.
    std::vector<int64_t> spatial_extents(int op) const;
    /// The extents of op's reduction axes (empty without a reduction); -1 for a symbolic extent.
    std::vector<int64_t> reduction_extents(int op) const;
    /// flop_count(op): DSLError naming the operation for symbolic extents.
    double flops(int op) const;

private:
    struct OpInfo {
        std::vector<int> producers;
        std::vector<std::vector<std::vector<Expr>>> reads;  ///< per producer, each read's indices
        std::vector<int> consumers;
        bool output = false;
        bool simple_access = true;
        bool strictly_inlinable = false;
        bool multi_level_tiling = false;
    };
    const OpInfo& info(int op) const;
    void analyse(int op);

    std::vector<Operation> ops_;
    std::vector<OpInfo> info_;
};

}  // namespace tessel
