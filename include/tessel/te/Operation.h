// The tensor-expression DSL: declare what to compute.
//
//   Tensor A = placeholder({n, k}, Float(32), "A");
//   Tensor B = placeholder({k, m}, Float(32), "B");
//   IterVar kk = reduce_axis({0, k}, "k");
//   Tensor C = compute({n, m}, [&](Var i, Var j) { return sum(A(i, kk) * B(kk, j), {kk}); }, "C");
//
// Every misuse throws DSLError naming the tensor or axis at fault, when the call is made: wrong
// index counts, constant indices out of range, mismatched dtypes, a reduce axis used outside its
// reduction or reduced twice, a Reduce that is not the top of a compute body, non-positive shapes.
#pragma once

#include <functional>
#include <type_traits>
#include <string>
#include <vector>

#include "tessel/ir/IR.h"
#include "tessel/ir/IROperator.h"

namespace tessel {

/// An input tensor: its data is supplied by the caller.
struct PlaceholderOpNode : OperationNode {
    std::vector<Expr> shape;
    Type dtype;
    PlaceholderOpNode(std::string name, std::vector<Expr> shape_, Type dtype_)
        : OperationNode(OpKind::Placeholder, std::move(name)), shape(std::move(shape_)), dtype(dtype_) {}
};

/// A tensor computed point-wise over `axis`: output v at point (axis...) is body[v]. When the
/// bodies are Reduces they share combiner, source, axes and condition, and differ only in
/// value_index (argmax has two outputs: index and value). `reduce_axis` lists the reduction axes.
struct ComputeOpNode : OperationNode {
    std::vector<IterVar> axis;         ///< data-parallel axes, one per output dimension
    std::vector<IterVar> reduce_axis;  ///< the Reduce's axes (empty when the body is no Reduce)
    std::vector<Expr> body;            ///< one per output
    ComputeOpNode(std::string name, std::vector<IterVar> axis_, std::vector<IterVar> reduce_axis_,
                  std::vector<Expr> body_)
        : OperationNode(OpKind::Compute, std::move(name)), axis(std::move(axis_)),
          reduce_axis(std::move(reduce_axis_)), body(std::move(body_)) {}
};

/// The operation as a compute, or nullptr.
const ComputeOpNode* as_compute(const Operation& op);
/// The operation as a placeholder, or nullptr.
const PlaceholderOpNode* as_placeholder(const Operation& op);
/// Output `i` of an operation (a new handle to the same TensorNode each time).
Tensor op_output(const Operation& op, int i);
/// How many tensors an operation produces.
int op_num_outputs(const Operation& op);
/// The tensors an operation reads, in first-read order, without repeats.
std::vector<Tensor> op_inputs(const Operation& op);

// ---------------------------------------------------------------------------------------------
// Declaring tensors

/// An input tensor. Every extent must be a positive integer constant or a scalar integer
/// expression; the index dtype is int32 unless the element count needs int64 (IR.h).
Tensor placeholder(const std::vector<Expr>& shape, Type dtype = Float(32),
                   const std::string& name = "placeholder");

/// A reduction axis over `dom` (min, extent); extent must be positive.
IterVar reduce_axis(const Range& dom, const std::string& name = "rv");

/// Called with one Var per output dimension; returns one expression per output.
using FComputeMulti = std::function<std::vector<Expr>(const std::vector<Var>&)>;
using FCompute = std::function<Expr(const std::vector<Var>&)>;

/// A tensor computed by `f` at every point of `shape`.
Tensor compute(const std::vector<Expr>& shape, const FCompute& f, const std::string& name = "compute");
/// Several tensors of one shape computed by one operation (e.g. argmax's index and value).
std::vector<Tensor> compute_multi(const std::vector<Expr>& shape, const FComputeMulti& f,
                                  const std::string& name = "compute");

/// Convenience overloads for 1 to 4 dimensions: `compute({n, m}, [&](Var i, Var j) {...})`.
template <typename F>
Tensor compute(const std::vector<Expr>& shape, F f, const std::string& name = "compute")
    requires(!std::is_convertible_v<F, FCompute>)
{
    return compute(
        shape,
        FCompute([f, name, nd = shape.size()](const std::vector<Var>& v) -> Expr {
            if constexpr (std::is_invocable_v<F, Var>) {
                if (nd != 1) TESSEL_THROW(DSLError) << "compute '" << name << "': the function takes 1 index for a " << nd << "-D shape";
                return f(v[0]);
            } else if constexpr (std::is_invocable_v<F, Var, Var>) {
                if (nd != 2) TESSEL_THROW(DSLError) << "compute '" << name << "': the function takes 2 indices for a " << nd << "-D shape";
                return f(v[0], v[1]);
            } else if constexpr (std::is_invocable_v<F, Var, Var, Var>) {
                if (nd != 3) TESSEL_THROW(DSLError) << "compute '" << name << "': the function takes 3 indices for a " << nd << "-D shape";
                return f(v[0], v[1], v[2]);
            } else {
                static_assert(std::is_invocable_v<F, Var, Var, Var, Var>,
                              "compute: the function must take 1 to 4 Vars or a std::vector<Var>");
                if (nd != 4) TESSEL_THROW(DSLError) << "compute '" << name << "': the function takes 4 indices for a " << nd << "-D shape";
                return f(v[0], v[1], v[2], v[3]);
            }
        }),
        name);
}

// ---------------------------------------------------------------------------------------------
// Reductions

/// Builds a reducer. `combine(lhs, rhs)` returns the combined values; `identity(types)` the
/// identity element for the given value types. The reducer must be associative and commutative
/// (tessel cannot check this; schedules reorder reductions freely). A reducer without an
/// identity (an undefined Expr among them, or a count that differs from combine's) throws DSLError.
class Reducer {
public:
    using FCombine = std::function<std::vector<Expr>(const std::vector<Expr>&, const std::vector<Expr>&)>;
    using FIdentity = std::function<std::vector<Expr>(const std::vector<Type>&)>;
    Reducer(std::string name, FCombine combine, FIdentity identity);

    /// Reduces one value over `axis` where `where` holds (default: everywhere).
    Expr operator()(Expr source, const std::vector<IterVar>& axis, Expr where = Expr()) const;
    /// Reduces several values at once; returns one Reduce per value (value_index 0, 1, ...).
    std::vector<Expr> operator()(const std::vector<Expr>& sources, const std::vector<IterVar>& axis,
                                 Expr where = Expr()) const;
    const std::string& name() const { return name_; }

private:
    CommReducer instantiate(const std::vector<Type>& types) const;
    std::string name_;
    FCombine combine_;
    FIdentity identity_;
};

/// A user reducer, as TVM's te.comm_reducer.
Reducer comm_reducer(std::string name, Reducer::FCombine combine, Reducer::FIdentity identity);

/// Built-in reducers: identities 0, lowest value (-inf for floats), highest value (+inf), 1.
Expr sum(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
Expr max(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
Expr min(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
Expr prod(Expr source, const std::vector<IterVar>& axis, Expr where = Expr());
/// Arg-max / arg-min over one value: returns {index, value} Reduces for compute_multi. `index`
/// is the int32/int64 expression recorded for each point (e.g. the axis variable); ties go to the
/// lowest index.
std::vector<Expr> argmax(Expr index, Expr value, const std::vector<IterVar>& axis, Expr where = Expr());
std::vector<Expr> argmin(Expr index, Expr value, const std::vector<IterVar>& axis, Expr where = Expr());

// ---------------------------------------------------------------------------------------------
// The DAG

/// Every operation that `outputs` depend on, inputs before the operations that read them. The
/// order is deterministic: a depth-first post-order following each operation's inputs in
/// first-read order, outputs in the order given.
std::vector<Operation> topo_order(const std::vector<Tensor>& outputs);

/// Floating-point (or integer arithmetic) operations of one compute operation over its whole
/// domain: each Add/Sub/Mul/Div/Min/Max/math intrinsic counts 1, fma 2, a reduction's combine
/// counts its combiner's operations, index arithmetic does not count. Placeholders count 0.
double flop_count(const Operation& op);
/// The sum over every operation of the DAG.
double flop_count(const std::vector<Tensor>& outputs);

}  // namespace tessel
