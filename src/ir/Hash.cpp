// The canonical structural hash; Hash.h states what it covers.
//
// The hasher walks the tree in a fixed order and mixes one token per fact. Every node contributes
// its kind and type first, every list its length, every optional child a marker when absent, so
// the token stream of a tree is unambiguous. Variable numbers mirror structural_equal's matching:
// a binder gives its variable a fresh number until its scope ends (so shadowing and a variable
// bound twice hash like two distinct variables), free variables and tensors keep the number of
// their first occurrence.
#include "tessel/ir/Hash.h"

#include <cstring>
#include <unordered_map>

#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

// splitmix64's finaliser: a bijective 64-bit mixer with good avalanche.
uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

// Tokens that mark structure; node kinds are 1 + their enum value, far below these.
constexpr uint64_t kUndefined = 0xdead0001ull;
constexpr uint64_t kBoundVar = 0xdead0002ull;
constexpr uint64_t kFreeVar = 0xdead0003ull;
constexpr uint64_t kStmtNode = 0x1000ull;

}  // namespace

class StructuralHasher::Impl : public IRVisitor {
public:
    using IRVisitor::visit;

    void emit(uint64_t v) { h_ = mix64(h_ ^ mix64(v + 0x9e3779b97f4a7c15ull)) + (h_ << 7); }
    void emit_type(Type t) { emit((uint64_t(t.code) << 32) | (uint64_t(t.bits) << 16) | t.lanes); }
    void emit_string(const std::string& s) {
        emit(s.size());
        emit(fnv1a(s));
    }

    void visit(const Expr& e) override {
        if (!e.defined()) return emit(kUndefined);
        emit(uint64_t(e.node_type()) + 1);
        emit_type(e.type());
        IRVisitor::visit(e);
    }
    void visit(const Stmt& s) override {
        if (!s.defined()) return emit(kUndefined);
        emit(uint64_t(s.node_type()) + 1 + kStmtNode);
        IRVisitor::visit(s);
    }

    void emit_list(const std::vector<Expr>& es) {
        emit(es.size());
        for (const Expr& e : es) visit(e);
    }

    // Gives `v` a fresh number until unbind() goes back past this point.
    void bind(const Var& v) {
        emit_type(v.type());
        auto it = bound_.find(v.get());
        undo_.push_back({v.get(), it == bound_.end() ? -1 : it->second});
        bound_[v.get()] = next_++;
    }
    size_t mark() const { return undo_.size(); }
    void unbind(size_t to) {
        while (undo_.size() > to) {
            auto [var, old] = undo_.back();
            undo_.pop_back();
            if (old < 0) {
                bound_.erase(var);
            } else {
                bound_[var] = old;
            }
        }
    }

    void emit_var(const Variable* v) {
        emit_type(v->type);
        auto it = bound_.find(v);
        if (it != bound_.end()) {
            emit(kBoundVar);
            emit(it->second);
            return;
        }
        auto [fit, fresh] = free_.emplace(v, next_);
        if (fresh) ++next_;
        emit(kFreeVar);
        emit(fit->second);
    }

    void emit_buffer(const Buffer& b) {
        emit_type(b->dtype);
        emit(uint64_t(b->scope));
        emit(uint64_t(b->alignment));
        emit(uint64_t(b->swizzle.vector));
        emit(uint64_t(b->swizzle.span));
        emit(uint64_t(b->swizzle.phases));
        emit_var(b->data.get());
        emit_list(b->shape);
        emit_list(b->strides);
        visit(b->elem_offset);
    }

    void emit_tensor(const Tensor& t) {
        auto [it, fresh] = tensors_.emplace(t, tensors_.size());
        emit(it->second);
        emit_type(t.dtype());
        emit(uint64_t(t.value_index()));
        emit_list(t.shape());
        (void)fresh;
    }

    void emit_reducer(const CommReducer& r) {
        emit(r.num_values());
        emit_list(r->identity);
        size_t m = mark();
        for (size_t i = 0; i < r.num_values(); ++i) {
            bind(r->lhs[i]);
            bind(r->rhs[i]);
        }
        emit_list(r->result);
        unbind(m);
    }

    uint64_t result() const { return mix64(h_); }

protected:
    void visit(const IntImm* op) override { emit(uint64_t(op->value)); }
    void visit(const UIntImm* op) override { emit(op->value); }
    void visit(const FloatImm* op) override {
        uint64_t bits;
        std::memcpy(&bits, &op->value, sizeof bits);
        emit(bits);
    }
    void visit(const Variable* op) override { emit_var(op); }
    void visit(const Ramp* op) override {
        emit(uint64_t(op->lanes));
        IRVisitor::visit(op);
    }
    void visit(const Broadcast* op) override {
        emit(uint64_t(op->lanes));
        IRVisitor::visit(op);
    }
    void visit(const Let* op) override {
        visit(op->value);
        size_t m = mark();
        bind(op->var);
        visit(op->body);
        unbind(m);
    }
    void visit(const Call* op) override {
        emit(uint64_t(op->op));
        emit_list(op->args);
    }
    void visit(const TensorRead* op) override {
        emit_tensor(op->tensor);
        emit_list(op->indices);
    }
    void visit(const Reduce* op) override;
    void visit(const Load* op) override {
        emit_var(op->buffer_var.get());
        visit(op->index);
        visit(op->predicate);
    }
    void visit(const BufferLoad* op) override {
        emit_buffer(op->buffer);
        emit_list(op->indices);
    }

    void visit(const LetStmt* op) override {
        visit(op->value);
        size_t m = mark();
        bind(op->var);
        visit(op->body);
        unbind(m);
    }
    void visit(const AttrStmt* op) override {
        emit_string(op->key);
        visit(op->value);
        visit(op->body);
    }
    void visit(const AssertStmt* op) override {
        visit(op->condition);
        emit_string(op->message);
    }
    void visit(const For* op) override;
    void visit(const Store* op) override {
        emit_var(op->buffer_var.get());
        visit(op->value);
        visit(op->index);
        visit(op->predicate);
    }
    void visit(const BufferStore* op) override {
        emit_buffer(op->buffer);
        visit(op->value);
        emit_list(op->indices);
    }
    void visit(const Allocate* op) override;
    void visit(const Seq* op) override {
        emit(op->stmts.size());
        for (const Stmt& s : op->stmts) visit(s);
    }

private:
    uint64_t h_ = 0x7e55e1ull;
    uint64_t next_ = 0;  // the next variable number, shared by bound and free variables
    std::unordered_map<const Variable*, int64_t> bound_;
    std::vector<std::pair<const Variable*, int64_t>> undo_;
    std::unordered_map<const Variable*, uint64_t> free_;
    std::unordered_map<Tensor, uint64_t, TensorHash, TensorEqual> tensors_;
};

void StructuralHasher::Impl::visit(const Reduce* op) {
    emit(uint64_t(op->value_index));
    emit_reducer(op->combiner);
    emit(op->axis.size());
    for (const IterVar& iv : op->axis) {
        emit(uint64_t(iv.kind()));
        visit(iv.dom().min);
        visit(iv.dom().extent);
    }
    size_t m = mark();
    for (const IterVar& iv : op->axis) bind(iv.var());
    emit_list(op->source);
    visit(op->condition);
    unbind(m);
}

void StructuralHasher::Impl::visit(const For* op) {
    emit(uint64_t(op->kind));
    emit_string(op->thread_tag);
    visit(op->min);
    visit(op->extent);
    size_t m = mark();
    bind(op->loop_var);
    visit(op->body);
    unbind(m);
}

void StructuralHasher::Impl::visit(const Allocate* op) {
    emit_type(op->dtype);
    emit(uint64_t(op->scope));
    emit_list(op->extents);
    size_t m = mark();
    bind(op->buffer_var);
    visit(op->body);
    unbind(m);
}

// ---------------------------------------------------------------------------------------------

StructuralHasher::StructuralHasher() : impl_(std::make_unique<Impl>()) {}
StructuralHasher::~StructuralHasher() = default;

StructuralHasher& StructuralHasher::add(const Expr& e) {
    impl_->visit(e);
    return *this;
}
StructuralHasher& StructuralHasher::add(const Stmt& s) {
    impl_->visit(s);
    return *this;
}
StructuralHasher& StructuralHasher::add_binder(const Var& v) {
    TESSEL_CHECK(v.defined()) << "add_binder of an undefined variable";
    impl_->bind(v);
    return *this;
}
StructuralHasher& StructuralHasher::add(const Tensor& t) {
    TESSEL_CHECK(t.defined()) << "hash of an undefined tensor";
    impl_->emit_tensor(t);
    return *this;
}
StructuralHasher& StructuralHasher::add_int(uint64_t value) {
    impl_->emit(value);
    return *this;
}
StructuralHasher& StructuralHasher::add_string(const std::string& s) {
    impl_->emit_string(s);
    return *this;
}
uint64_t StructuralHasher::result() const {
    return impl_->result();
}

uint64_t structural_hash(const Expr& e) {
    return StructuralHasher().add(e).result();
}
uint64_t structural_hash(const Stmt& s) {
    return StructuralHasher().add(s).result();
}

}  // namespace tessel
