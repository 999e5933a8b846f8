// A canonical structural hash of IR trees: the basis of workload keys.
//
// The hash covers what structural_equal (ir/Equality.h) compares and ignores names and object
// identity: every variable is numbered in order of first occurrence (a binder gives its variable
// a fresh number for the extent of its scope), and so is every tensor; buffers are hashed by their
// fields. Hence trees that are equal with map_free_vars = true hash equal, in particular
// alpha-equivalent trees and trees that differ only in the names or identity of free variables.
//
// The hash is computed by mixing a byte-stable stream of tokens (node kinds, types, constant bits,
// variable numbers, FNV-1a hashes of strings); it involves no pointers and no std::hash, so it is
// the same in every process and on every run. It is not a cryptographic hash.
//
// A TensorRead is hashed by the tensor's number, dtype, value_index and shape, not by the
// operation that produces it; the tensor-expression DAG hash adds the operations' structure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tessel/ir/IR.h"

namespace tessel {

/// The canonical hash of an expression (see above). An undefined handle has a hash too.
uint64_t structural_hash(const Expr& e);
/// The canonical hash of a statement.
uint64_t structural_hash(const Stmt& s);

/// Hashes a sequence of trees and values with one numbering of variables and tensors, so that a
/// variable or tensor shared by several trees (e.g. a compute's axes and its body) is recognised.
/// structural_hash(e) equals StructuralHasher().add(e).result().
class StructuralHasher {
public:
    StructuralHasher();
    ~StructuralHasher();
    StructuralHasher(const StructuralHasher&) = delete;
    StructuralHasher& operator=(const StructuralHasher&) = delete;

    /// Mixes in an expression (an undefined one too).
    StructuralHasher& add(const Expr& e);
    /// Mixes in a statement.
    StructuralHasher& add(const Stmt& s);
    /// Mixes in a variable as a binder: from now on it has a fresh number, however it was used
    /// before (for variables bound outside the trees hashed, e.g. a compute's axes).
    StructuralHasher& add_binder(const Var& v);
    /// Mixes in a tensor reference: its number, dtype, value_index and shape.
    StructuralHasher& add(const Tensor& t);
    /// Mixes in an integer.
    StructuralHasher& add_int(uint64_t value);
    /// Mixes in a string (its length and bytes).
    StructuralHasher& add_string(const std::string& s);
    /// The hash of everything added so far.
    uint64_t result() const;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace tessel
