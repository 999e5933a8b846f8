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
//
// ## Index dtype
// A shape is int32 unless one of its constant extents, or the product of its constant extents, does
// not fit int32, or a symbolic extent has a type wider than int32 (int64, uint32, uint64): then it
// is int64. Every extent is converted to that dtype (literals re-typed, other expressions cast),
// and the operation's axis variables take it. A shape entry that is not a scalar integer is a
// DSLError. reduce_axis applies the same rule to its (min, extent) pair.
//
// ## Tensor identity
// A TensorNode holds its Operation strongly, so an operation cannot hold its output tensors (that
// would be a reference cycle). `op_output(op, i)` therefore builds a new TensorNode each call, and
// two Tensor handles denote the same tensor when they have the same operation (by identity) and the
// same value_index: compare them with `same_tensor`, key maps with TensorHash / TensorEqual. Never
// compare tensors with `same_as`.
//
// ## Axis variables
// The variables of compute axes and reduce axes are created by this DSL and carry their kind, so
// compute() can tell a reduce axis from a symbolic size: a reduce-axis variable may only appear
// inside a Reduce that reduces it, and a compute axis variable only in the body of its own compute.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tessel/ir/IR.h"
#include "tessel/ir/IROperator.h"

namespace tessel {

/// An input tensor: its data is supplied by the caller.
struct PlaceholderOpNode : OperationNode {
    std::vector<Expr> shape;  ///< extents in the index dtype, outermost first
    Type dtype;               ///< element type
    /// A constant operand (a weight): the same values on every call, so a schedule may lay it
    /// out once, outside the kernel (Schedule::pre_transform). Part of the DAG's hash and JSON.
    bool constant = false;
    PlaceholderOpNode(std::string name, std::vector<Expr> shape_, Type dtype_,
                      bool constant_ = false)
        : OperationNode(OpKind::Placeholder, std::move(name)),
          shape(std::move(shape_)),
          dtype(dtype_),
          constant(constant_) {}
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
        : OperationNode(OpKind::Compute, std::move(name)),
          axis(std::move(axis_)),
          reduce_axis(std::move(reduce_axis_)),
          body(std::move(body_)) {}
};

/// The operation as a compute, or nullptr.
const ComputeOpNode* as_compute(const Operation& op);
/// The operation as a placeholder, or nullptr.
const PlaceholderOpNode* as_placeholder(const Operation& op);
/// Output `i` of an operation: a new TensorNode each call (see "Tensor identity" above). Single
/// outputs are named after the operation, outputs of multi-output ops `<op>.v<i>`.
Tensor op_output(const Operation& op, int i);
/// How many tensors an operation produces.
int op_num_outputs(const Operation& op);
/// The tensors an operation reads, in first-read order (the order an evaluation of the bodies,
/// operands before the nodes that use them, meets them), without repeats (by same_tensor).
std::vector<Tensor> op_inputs(const Operation& op);
/// The extents of an operation's output (every output of an operation has the same shape).
std::vector<Expr> op_shape(const Operation& op);

// same_tensor, TensorHash and TensorEqual live in ir/IR.h.

// ---------------------------------------------------------------------------------------------
// Declaring tensors

/// An input tensor. Every extent must be a positive integer constant or a scalar integer
/// expression (see "Index dtype"); `dtype` must be a scalar non-handle type. A `constant` input
/// (a weight) holds the same values on every call: a schedule may lay it out once, outside the
/// kernel (Schedule::pre_transform).
Tensor placeholder(const std::vector<Expr>& shape, Type dtype = Float(32),
                   const std::string& name = "placeholder", bool constant = false);

/// A reduction axis over `dom` (min, extent); extent must be positive. Its variable is named
/// `name`, has the index dtype of (min, extent), and may only be used inside a reduction over it.
IterVar reduce_axis(const Range& dom, const std::string& name = "rv");

/// Called with one Var per output dimension; returns one expression per output.
using FComputeMulti = std::function<std::vector<Expr>(const std::vector<Var>&)>;
using FCompute = std::function<Expr(const std::vector<Var>&)>;

/// A tensor computed by `f` at every point of `shape`. The axis variables are named i0, i1, ...
/// Throws DSLError (naming `name` and the axis) on a non-positive extent, an undefined, handle or
/// vector body, a Reduce below the top of the body, or a misused reduce axis.
Tensor compute(const std::vector<Expr>& shape, const FCompute& f,
               const std::string& name = "compute");
/// Several tensors of one shape computed by one operation (e.g. argmax's index and value): all
/// bodies are Reduces of one reduction (differing only in value_index), or none is a Reduce.
std::vector<Tensor> compute_multi(const std::vector<Expr>& shape, const FComputeMulti& f,
                                  const std::string& name = "compute");

namespace internal {
/// Calls `f` with the first 1 to 4 Vars of `v` (or with `v` itself), after checking that the
/// arity of `f` matches the number of dimensions. Used by the compute overloads below.
template <typename R, typename F>
R call_with_vars(const F& f, const std::vector<Var>& v, const std::string& name) {
    auto check = [&](size_t arity) {
        if (v.size() != arity)
            TESSEL_THROW(DSLError) << "compute '" << name << "': the function takes " << arity
                                   << " indices for a " << v.size() << "-D shape";
    };
    if constexpr (std::is_invocable_v<F, Var>) {
        check(1);
        return f(v[0]);
    } else if constexpr (std::is_invocable_v<F, Var, Var>) {
        check(2);
        return f(v[0], v[1]);
    } else if constexpr (std::is_invocable_v<F, Var, Var, Var>) {
        check(3);
        return f(v[0], v[1], v[2]);
    } else {
        static_assert(std::is_invocable_v<F, Var, Var, Var, Var>,
                      "compute: the function must take 1 to 4 Vars or a std::vector<Var>");
        check(4);
        return f(v[0], v[1], v[2], v[3]);
    }
}
}  // namespace internal

// clang-format 14 mangles requires-clauses: these two are formatted by hand.
// clang-format off
/// Convenience overload for 1 to 4 dimensions: `compute({n, m}, [&](Var i, Var j) {...})`.
template <typename F>
Tensor compute(const std::vector<Expr>& shape, F f, const std::string& name = "compute")
    requires(!std::is_convertible_v<F, FCompute>)
{
    return compute(
        shape,
        FCompute([f, name](const std::vector<Var>& v) {
            return internal::call_with_vars<Expr>(f, v, name);
        }),
        name);
}

/// Convenience overload for 1 to 4 dimensions: `compute_multi({n}, [&](Var i) {...})`.
template <typename F>
std::vector<Tensor> compute_multi(const std::vector<Expr>& shape, F f,
                                  const std::string& name = "compute")
    requires(!std::is_convertible_v<F, FComputeMulti>)
{
    return compute_multi(
        shape,
        FComputeMulti([f, name](const std::vector<Var>& v) {
            return internal::call_with_vars<std::vector<Expr>>(f, v, name);
        }),
        name);
}
// clang-format on

// ---------------------------------------------------------------------------------------------
// Reductions

/// Builds a reducer. `combine(lhs, rhs)` returns the combined values; `identity(types)` the
/// identity element for the given value types. The reducer must be associative and commutative
/// (tessel cannot check this; schedules reorder reductions freely). At each use the reducer is
/// instantiated for the sources' types with fresh lhs/rhs variables; a DSLError naming the
/// reducer is thrown there if the identity is missing (an undefined Expr among its values, or a
/// count that differs from the sources'), if combine returns the wrong number of values, or if
/// either returns values of the wrong types (C++ literals are adapted) or uses variables, tensor
/// reads or reductions beyond lhs and rhs.
class Reducer {
public:
    using FCombine =
        std::function<std::vector<Expr>(const std::vector<Expr>&, const std::vector<Expr>&)>;
    using FIdentity = std::function<std::vector<Expr>(const std::vector<Type>&)>;
    /// Throws DSLError naming the reducer if `combine` or `identity` is empty.
    Reducer(std::string name, FCombine combine, FIdentity identity);

    /// Reduces one value over `axis` where `where` holds (default: everywhere).
    Expr operator()(Expr source, const std::vector<IterVar>& axis, Expr where = Expr()) const;
    /// Reduces several values at once; returns one Reduce per value (value_index 0, 1, ...).
    std::vector<Expr> operator()(const std::vector<Expr>& sources, const std::vector<IterVar>& axis,
                                 Expr where = Expr()) const;
    /// The reducer's name, as given.
    const std::string& name() const { return name_; }
    /// The combiner for sources of `types`, with fresh lhs/rhs variables (checked as above).
    CommReducer instantiate(const std::vector<Type>& types) const;

private:
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
/// sum and prod accumulating in `accumulate` (the source cast to it): `sum(A(i, k), {k},
/// Float(32))` is TVM's `te.sum(A[i, k].astype("float32"), k)`, the idiom for a float16 or int8
/// source. DSLError when `accumulate` does not hold every value of the source's type (float32
/// holds float16, bfloat16 and 8- and 16-bit integers; int32 holds int8, uint8, int16; a
/// narrower or different-kind accumulator is refused).
Expr sum(Expr source, const std::vector<IterVar>& axis, Type accumulate, Expr where = Expr());
Expr prod(Expr source, const std::vector<IterVar>& axis, Type accumulate, Expr where = Expr());

/// Arg-max over one value: returns {index, value} Reduces for compute_multi. `index` is the
/// integer expression recorded for each point (e.g. the axis variable).
///
/// The combiner keeps the element that is greatest in the total order "larger value first, then
/// lower index" (NaN counts as larger than every number, so the first NaN wins, as in numpy):
///   take_rhs = rv > lv || (rv == lv && ri < li)   (plus the NaN cases for floats)
/// Because this is the maximum of a total order, it is associative and commutative, and ties go
/// to the lowest index whatever order the points are combined in. The identity is (highest index
/// value, lowest value: -inf for floats): it ties with no real point it could beat, so any real
/// point replaces it; a reduction over no point returns it.
std::vector<Expr> argmax(Expr index, Expr value, const std::vector<IterVar>& axis,
                         Expr where = Expr());
/// Arg-min: as argmax with "smaller value first" (NaN still wins); identity (highest index,
/// highest value: +inf for floats).
std::vector<Expr> argmin(Expr index, Expr value, const std::vector<IterVar>& axis,
                         Expr where = Expr());

// ---------------------------------------------------------------------------------------------
// The DAG

/// Every operation that `outputs` depend on, inputs before the operations that read them. The
/// order is deterministic: a depth-first post-order following each operation's inputs in
/// first-read order (op_inputs), outputs in the order given; each operation appears once.
std::vector<Operation> topo_order(const std::vector<Tensor>& outputs);

/// Floating-point (or integer arithmetic) operations of one compute operation over its whole
/// domain (the product of its axes' and reduce axes' extents): each Add/Sub/Mul/Div/Mod/FloorDiv/
/// FloorMod/Min/Max and arithmetic intrinsic (exp, sqrt, abs, floor, pow ...) counts 1, fma 2; a
/// reduction counts its source once and its combiner's operations once per point. Comparisons,
/// logic, selects and casts count 0, and so do index expressions (tensor-read indices, reduction
/// conditions). Both branches of a select count. Placeholders count 0. Throws DSLError naming
/// the operation and axis if an extent is not constant.
double flop_count(const Operation& op);
/// The sum over every operation of the DAG.
double flop_count(const std::vector<Tensor>& outputs);

}  // namespace tessel
