// Rewriting traversal of the IR.
#pragma once

#include <unordered_map>

#include "tessel/ir/IR.h"

namespace tessel {

/// Rebuilds an IR tree bottom-up. Each `visit(const T*)` mutates the node's children and returns
/// the same node when none changed (so callers can test `same_as` for "nothing happened"), or a
/// new node made with T::make. Override the nodes you rewrite; add `using IRMutator::visit;`.
class IRMutator {
public:
    virtual ~IRMutator() = default;
    /// Dispatches on the node type; undefined handles come back undefined.
    virtual Expr mutate(const Expr& e);
    virtual Stmt mutate(const Stmt& s);

protected:
#define TESSEL_MUTATOR_DECL(T) virtual Expr visit(const T* op);
    TESSEL_FOR_EACH_EXPR_NODE(TESSEL_MUTATOR_DECL)
#undef TESSEL_MUTATOR_DECL
#define TESSEL_MUTATOR_DECL(T) virtual Stmt visit(const T* op);
    TESSEL_FOR_EACH_STMT_NODE(TESSEL_MUTATOR_DECL)
#undef TESSEL_MUTATOR_DECL

    /// Mutates every element; returns true if any changed.
    bool mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out);
};

/// A map from variables (by identity) to expressions.
using VarMap = std::unordered_map<const Variable*, Expr>;

/// Replaces free occurrences of the mapped variables (inside a For, Let, LetStmt or Reduce that
/// binds a mapped variable, that variable is left alone). Types must match (InternalError
/// otherwise).
Expr substitute(const Expr& e, const VarMap& replacements);
Stmt substitute(const Stmt& s, const VarMap& replacements);
/// Convenience: replaces one variable.
Expr substitute(const Expr& e, const Var& v, const Expr& replacement);
Stmt substitute(const Stmt& s, const Var& v, const Expr& replacement);

}  // namespace tessel
