// Structural equality; Equality.h states the rules.
//
// Bound variables are matched through a pair of maps (a -> b and b -> a) with an undo log, so a
// binding lasts exactly as long as its scope and shadowing works. Free variables and tensors, when
// mapped, go into maps that are never undone: the correspondence holds for the whole tree.
#include "tessel/ir/Equality.h"

#include <cstring>
#include <unordered_map>

namespace tessel {

namespace {

template <typename K>
using BiMap = std::unordered_map<K, K>;

// Records a <-> b if neither is mapped yet; true if they are (now) mapped to each other.
template <typename K>
bool match(BiMap<K>* ab, BiMap<K>* ba, K a, K b) {
    auto ia = ab->find(a);
    auto ib = ba->find(b);
    if (ia == ab->end() && ib == ba->end()) {
        (*ab)[a] = b;
        (*ba)[b] = a;
        return true;
    }
    return ia != ab->end() && ib != ba->end() && ia->second == b && ib->second == a;
}

class StructuralEq {
public:
    explicit StructuralEq(bool map_free_vars) : map_free_(map_free_vars) {}

    bool eq(const Expr& a, const Expr& b) {
        if (!a.defined() || !b.defined()) return a.defined() == b.defined();
        if (a.same_as(b) && can_shortcut()) return true;
        if (a.node_type() != b.node_type() || a.type() != b.type()) return false;
        switch (a.node_type()) {
#define TESSEL_EQ_DISPATCH(T) \
    case IRNodeType::T:       \
        return visit(static_cast<const T*>(a.get()), static_cast<const T*>(b.get()));
            TESSEL_FOR_EACH_EXPR_NODE(TESSEL_EQ_DISPATCH)
            default: TESSEL_CHECK(false) << "statement node in an Expr handle";
        }
        return false;
    }

    bool eq(const Stmt& a, const Stmt& b) {
        if (!a.defined() || !b.defined()) return a.defined() == b.defined();
        if (a.same_as(b) && can_shortcut()) return true;
        if (a.node_type() != b.node_type()) return false;
        switch (a.node_type()) {
            TESSEL_FOR_EACH_STMT_NODE(TESSEL_EQ_DISPATCH)
#undef TESSEL_EQ_DISPATCH
            default: TESSEL_CHECK(false) << "expression node in a Stmt handle";
        }
        return false;
    }

private:
#define TESSEL_EQ_DECL(T) bool visit(const T* a, const T* b);
    TESSEL_FOR_EACH_EXPR_NODE(TESSEL_EQ_DECL)
    TESSEL_FOR_EACH_STMT_NODE(TESSEL_EQ_DECL)
#undef TESSEL_EQ_DECL

    // An identical subtree is equal to itself when no renaming is in force.
    bool can_shortcut() const {
        return !map_free_ && bound_ab_.empty() && bound_ba_.empty();
    }

    bool eq_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i)
            if (!eq(a[i], b[i])) return false;
        return true;
    }

    template <typename T>
    bool binary(const T* a, const T* b) {
        return eq(a->a, b->a) && eq(a->b, b->b);
    }

    // Binds a <-> b until unbind() goes back past this point; false if their types differ.
    bool bind(const Var& a, const Var& b) {
        if (a.type() != b.type()) return false;
        undo_.push_back({a.get(), b.get(), lookup(bound_ab_, a.get()), lookup(bound_ba_, b.get())});
        bound_ab_[a.get()] = b.get();
        bound_ba_[b.get()] = a.get();
        return true;
    }
    size_t mark() const {
        return undo_.size();
    }
    void unbind(size_t to) {
        while (undo_.size() > to) {
            Undo u = undo_.back();
            undo_.pop_back();
            restore(&bound_ab_, u.a, u.old_ab);
            restore(&bound_ba_, u.b, u.old_ba);
        }
    }
    static const Variable* lookup(const BiMap<const Variable*>& m, const Variable* v) {
        auto it = m.find(v);
        return it == m.end() ? nullptr : it->second;
    }
    static void restore(BiMap<const Variable*>* m, const Variable* key, const Variable* old) {
        if (old) {
            (*m)[key] = old;
        } else {
            m->erase(key);
        }
    }

    bool eq_var(const Variable* a, const Variable* b) {
        if (a->type != b->type) return false;
        auto ia = bound_ab_.find(a);
        auto ib = bound_ba_.find(b);
        if (ia != bound_ab_.end() || ib != bound_ba_.end()) {
            // Both must be bound, to each other (checking both directions catches shadowing).
            return ia != bound_ab_.end() && ib != bound_ba_.end() && ia->second == b &&
                   ib->second == a;
        }
        if (!map_free_) return a == b;
        return match(&free_ab_, &free_ba_, a, b);
    }
    bool eq_var(const Var& a, const Var& b) {
        return eq_var(a.get(), b.get());
    }

    bool eq_buffer(const Buffer& a, const Buffer& b) {
        if (a.same_as(b) && can_shortcut()) return true;
        return a->dtype == b->dtype && a->scope == b->scope && a->alignment == b->alignment &&
               a->swizzle == b->swizzle && eq_var(a->data, b->data) && eq_all(a->shape, b->shape) &&
               eq_all(a->strides, b->strides) && eq(a->elem_offset, b->elem_offset);
    }

    bool eq_tensor(const Tensor& a, const Tensor& b) {
        if (!map_free_) return same_tensor(a, b);
        if (a.dtype() != b.dtype() || a.value_index() != b.value_index()) return false;
        if (!eq_all(a.shape(), b.shape())) return false;
        // Canonical handles: op_output makes a new handle per call for the same output.
        const TensorNode* ca = tensor_canon_a_.emplace(a, a).first->second.get();
        const TensorNode* cb = tensor_canon_b_.emplace(b, b).first->second.get();
        return match<const TensorNode*>(&tensor_ab_, &tensor_ba_, ca, cb);
    }

    bool eq_reducer(const CommReducer& a, const CommReducer& b) {
        if (a.same_as(b) && can_shortcut()) return true;
        if (a.num_values() != b.num_values()) return false;
        if (!eq_all(a->identity, b->identity)) return false;
        size_t m = mark();
        bool ok = true;
        for (size_t i = 0; i < a.num_values() && ok; ++i)
            ok = bind(a->lhs[i], b->lhs[i]) && bind(a->rhs[i], b->rhs[i]);
        ok = ok && eq_all(a->result, b->result);
        unbind(m);
        return ok;
    }

    struct Undo {
        const Variable* a;
        const Variable* b;
        const Variable* old_ab;
        const Variable* old_ba;
    };

    bool map_free_;
    BiMap<const Variable*> bound_ab_, bound_ba_;
    std::vector<Undo> undo_;
    BiMap<const Variable*> free_ab_, free_ba_;
    BiMap<const TensorNode*> tensor_ab_, tensor_ba_;
    std::unordered_map<Tensor, Tensor, TensorHash, TensorEqual> tensor_canon_a_, tensor_canon_b_;
};

// ---------------------------------------------------------------------------------------------
// Expressions (node kinds and types already match)

bool StructuralEq::visit(const IntImm* a, const IntImm* b) {
    return a->value == b->value;
}
bool StructuralEq::visit(const UIntImm* a, const UIntImm* b) {
    return a->value == b->value;
}
bool StructuralEq::visit(const FloatImm* a, const FloatImm* b) {
    return std::memcmp(&a->value, &b->value, sizeof(double)) == 0;
}
bool StructuralEq::visit(const Variable* a, const Variable* b) {
    return eq_var(a, b);
}
bool StructuralEq::visit(const Cast* a, const Cast* b) {
    return eq(a->value, b->value);
}

#define TESSEL_EQ_BINARY(T)                            \
    bool StructuralEq::visit(const T* a, const T* b) { \
        return binary(a, b);                           \
    }
TESSEL_EQ_BINARY(Add)
TESSEL_EQ_BINARY(Sub)
TESSEL_EQ_BINARY(Mul)
TESSEL_EQ_BINARY(Div)
TESSEL_EQ_BINARY(Mod)
TESSEL_EQ_BINARY(FloorDiv)
TESSEL_EQ_BINARY(FloorMod)
TESSEL_EQ_BINARY(Min)
TESSEL_EQ_BINARY(Max)
TESSEL_EQ_BINARY(EQ)
TESSEL_EQ_BINARY(NE)
TESSEL_EQ_BINARY(LT)
TESSEL_EQ_BINARY(LE)
TESSEL_EQ_BINARY(GT)
TESSEL_EQ_BINARY(GE)
TESSEL_EQ_BINARY(And)
TESSEL_EQ_BINARY(Or)
#undef TESSEL_EQ_BINARY

bool StructuralEq::visit(const Not* a, const Not* b) {
    return eq(a->a, b->a);
}

bool StructuralEq::visit(const Select* a, const Select* b) {
    return eq(a->condition, b->condition) && eq(a->true_value, b->true_value) &&
           eq(a->false_value, b->false_value);
}

bool StructuralEq::visit(const Ramp* a, const Ramp* b) {
    return a->lanes == b->lanes && eq(a->base, b->base) && eq(a->stride, b->stride);
}

bool StructuralEq::visit(const Broadcast* a, const Broadcast* b) {
    return a->lanes == b->lanes && eq(a->value, b->value);
}

bool StructuralEq::visit(const Let* a, const Let* b) {
    if (!eq(a->value, b->value)) return false;
    size_t m = mark();
    bool ok = bind(a->var, b->var) && eq(a->body, b->body);
    unbind(m);
    return ok;
}

bool StructuralEq::visit(const Call* a, const Call* b) {
    return a->op == b->op && eq_all(a->args, b->args);
}

bool StructuralEq::visit(const TensorRead* a, const TensorRead* b) {
    return eq_tensor(a->tensor, b->tensor) && eq_all(a->indices, b->indices);
}

bool StructuralEq::visit(const Reduce* a, const Reduce* b) {
    if (a->value_index != b->value_index || a->axis.size() != b->axis.size()) return false;
    if (!eq_reducer(a->combiner, b->combiner)) return false;
    // Axis domains are evaluated outside the reduction, so compare them before binding.
    for (size_t i = 0; i < a->axis.size(); ++i) {
        const IterVar &x = a->axis[i], &y = b->axis[i];
        if (x.kind() != y.kind() || !eq(x.dom().min, y.dom().min) ||
            !eq(x.dom().extent, y.dom().extent))
            return false;
    }
    size_t m = mark();
    bool ok = true;
    for (size_t i = 0; i < a->axis.size() && ok; ++i) ok = bind(a->axis[i].var(), b->axis[i].var());
    ok = ok && eq_all(a->source, b->source) && eq(a->condition, b->condition);
    unbind(m);
    return ok;
}

bool StructuralEq::visit(const Load* a, const Load* b) {
    return eq_var(a->buffer_var, b->buffer_var) && eq(a->index, b->index) &&
           eq(a->predicate, b->predicate);
}

bool StructuralEq::visit(const BufferLoad* a, const BufferLoad* b) {
    return eq_buffer(a->buffer, b->buffer) && eq_all(a->indices, b->indices);
}

// ---------------------------------------------------------------------------------------------
// Statements

bool StructuralEq::visit(const LetStmt* a, const LetStmt* b) {
    if (!eq(a->value, b->value)) return false;
    size_t m = mark();
    bool ok = bind(a->var, b->var) && eq(a->body, b->body);
    unbind(m);
    return ok;
}

bool StructuralEq::visit(const AttrStmt* a, const AttrStmt* b) {
    return a->key == b->key && eq(a->value, b->value) && eq(a->body, b->body);
}

bool StructuralEq::visit(const AssertStmt* a, const AssertStmt* b) {
    return a->message == b->message && eq(a->condition, b->condition);
}

bool StructuralEq::visit(const For* a, const For* b) {
    if (a->kind != b->kind || a->thread_tag != b->thread_tag) return false;
    if (!eq(a->min, b->min) || !eq(a->extent, b->extent)) return false;
    size_t m = mark();
    bool ok = bind(a->loop_var, b->loop_var) && eq(a->body, b->body);
    unbind(m);
    return ok;
}

bool StructuralEq::visit(const Store* a, const Store* b) {
    return eq_var(a->buffer_var, b->buffer_var) && eq(a->value, b->value) &&
           eq(a->index, b->index) && eq(a->predicate, b->predicate);
}

bool StructuralEq::visit(const BufferStore* a, const BufferStore* b) {
    return eq_buffer(a->buffer, b->buffer) && eq(a->value, b->value) &&
           eq_all(a->indices, b->indices);
}

bool StructuralEq::visit(const Allocate* a, const Allocate* b) {
    if (a->dtype != b->dtype || a->scope != b->scope || !eq_all(a->extents, b->extents))
        return false;
    size_t m = mark();
    bool ok = bind(a->buffer_var, b->buffer_var) && eq(a->body, b->body);
    unbind(m);
    return ok;
}

bool StructuralEq::visit(const Seq* a, const Seq* b) {
    if (a->stmts.size() != b->stmts.size()) return false;
    for (size_t i = 0; i < a->stmts.size(); ++i)
        if (!eq(a->stmts[i], b->stmts[i])) return false;
    return true;
}

bool StructuralEq::visit(const IfThenElse* a, const IfThenElse* b) {
    return eq(a->condition, b->condition) && eq(a->then_case, b->then_case) &&
           eq(a->else_case, b->else_case);
}

bool StructuralEq::visit(const Evaluate* a, const Evaluate* b) {
    return eq(a->value, b->value);
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars) {
    return StructuralEq(map_free_vars).eq(a, b);
}

bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars) {
    return StructuralEq(map_free_vars).eq(a, b);
}

}  // namespace tessel
