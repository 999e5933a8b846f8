// Tensor-expression DAGs as JSON, and back (docs/design.md, decision 8: a task carries its
// computation, so any process rebuilds it without the code that defined it).
//
//   std::string text = dag_to_json(make_tensor_dag({C}));
//   TensorDAG dag = dag_from_json(text);           // a new DAG, structurally equal to the first:
//   dag_hash(dag.outputs) == dag_hash({C});        // same workload key, same reference results,
//   lower(create_schedule(dag.outputs), dag.args()) // same lowered IR under the same steps
//
// ## Format (version 1)
//
//   {"format": "tessel.dag", "version": 1,
//    "vars":    [{"id": 0, "name": "n", "dtype": "int32"}],       symbolic sizes (free variables)
//    "ops":     [op, ...],                                        topological order, inputs first
//    "inputs":  [0, 1],                                           placeholder op indices, in order
//    "outputs": [[3, 0]]}                                         [op index, value index]
//
// An op is {"kind": "placeholder", "name", "dtype", "shape": [expr]} or {"kind": "compute",
// "name", "shape": [expr], "axis": [var id], "reduce_axis": [{"id", "name", "min", "extent"}],
// "body": [expr]}. An expr is an object {"node": <node name of ir/IR.h>, ...fields}: "IntImm",
// "UIntImm", "FloatImm" ("dtype", "value"; non-finite floats as "inf", "-inf", "nan"),
// "Variable" ("id"), "Cast" ("dtype", "value"), the binary nodes Add ... Or ("a", "b"), "Not"
// ("a"), "Select", "Ramp", "Broadcast", "Let" ("var": {"id", "name", "dtype"}, "value", "body"),
// "Call" ("op": intrinsic name, "args"), "TensorRead" ("tensor": [op index, value index],
// "indices") and "Reduce" ("combiner": {"name", "lhs": [id], "rhs": [id], "result", "identity"},
// "source", "axis": [reduce-axis id], "condition", "value_index"). Variables are numbered once
// per binding (a free variable, an axis, a reduce axis, a Let, a combiner's lhs / rhs) and are
// referred to by number in the binding's scope only.
//
// The writer is deterministic: one DAG gives the same bytes in every process, and two DAGs that
// differ only in variable identity give the same bytes. Expressions are written as trees, so a
// subexpression shared by several parents is written once per parent (the IR's meaning does
// not depend on sharing). Loads, BufferLoads and impure intrinsics cannot occur in a tensor
// expression: the writer refuses them.
//
// The reader rebuilds the DAG through the DSL (placeholder, reduce_axis, compute_multi, reducers),
// so everything it returns passed the DSL's checks. Malformed JSON, a wrong format name or
// version, a missing field or one of the wrong type, an unknown node kind, intrinsic or dtype, a
// reference to an undeclared variable or a later operation, mismatched operand types, or nesting
// deeper than kMaxJsonExprDepth are DSLErrors naming "dag_from_json" and the path of the offending
// field (e.g. "ops[2].body[0].b"); it never crashes on any input.
#pragma once

#include <string>

#include "tessel/te/TensorDAG.h"

namespace tessel {

/// The format version dag_to_json writes and dag_from_json reads.
inline constexpr int kDagJsonVersion = 1;
/// The deepest expression nesting dag_from_json accepts.
inline constexpr int kMaxJsonExprDepth = 2000;

/// The DAG as JSON (see the format above): compact when `indent` < 0, else pretty-printed with
/// `indent` spaces. Throws DSLError as check_tensor_dag does, or naming the operation if a body
/// holds a node a tensor expression cannot hold (Load, BufferLoad, an impure intrinsic).
std::string dag_to_json(const TensorDAG& dag, int indent = -1);
/// The DAG of `outputs`, its inputs in topological order (make_tensor_dag).
std::string dag_to_json(const std::vector<Tensor>& outputs, int indent = -1);

/// A new DAG read back from dag_to_json's output (see above for the errors, all DSLError).
TensorDAG dag_from_json(const std::string& text);

}  // namespace tessel
