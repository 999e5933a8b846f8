// InjectVirtualThreads (see include/tessel/lower/InjectVirtualThreads.h).
#include "tessel/lower/InjectVirtualThreads.h"

#include <unordered_map>
#include <unordered_set>

#include "PassUtil.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

bool is_thread_loop(const Stmt& s) {
    const auto* f = s.as<For>();
    return f && f->kind == ForKind::ThreadBound && f->thread_tag.rfind("threadIdx.", 0) == 0;
}

bool has_allreduce(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) {
        found = found || (n->node_type == IRNodeType::Call &&
                          static_cast<const Call*>(n)->op == Intrinsic::thread_allreduce);
    });
    return found;
}

// What depends on the virtual thread index: the variables whose values do, the buffers stored
// with indices or values that do (a fixed point: a value read from such a buffer depends on it
// too), and the buffers allocated inside the loop.
struct Touched {
    std::unordered_set<const Variable*> vars, buffers, allocated;

    // Whether node `n` itself reads a touched variable or accesses a touched buffer.
    bool node(const IRNode* n) const {
        switch (n->node_type) {
            case IRNodeType::Variable: return vars.count(static_cast<const Variable*>(n)) > 0;
            case IRNodeType::BufferLoad:
                return buffers.count(static_cast<const BufferLoad*>(n)->buffer->data.get()) > 0;
            case IRNodeType::BufferStore:
                return buffers.count(static_cast<const BufferStore*>(n)->buffer->data.get()) > 0;
            case IRNodeType::Load:
                return buffers.count(static_cast<const Load*>(n)->buffer_var.get()) > 0;
            case IRNodeType::Store:
                return buffers.count(static_cast<const Store*>(n)->buffer_var.get()) > 0;
            default: return false;
        }
    }
    bool expr(const Expr& e) const {
        bool t = false;
        post_order_visit(e, [&](const IRNode* n) { t = t || node(n); });
        return t;
    }
    bool exprs(const std::vector<Expr>& es) const {
        for (const Expr& e : es)
            if (expr(e)) return true;
        return false;
    }
    // Whether running `s` once differs from running it for each virtual thread.
    bool stmt(const Stmt& s) const {
        bool t = false;
        post_order_visit(s, [&](const IRNode* n) { t = t || node(n); });
        return t;
    }

    static Touched of(const Var& vt, const Stmt& body) {
        Touched t;
        t.vars.insert(vt.get());
        post_order_visit(body, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::Allocate)
                t.allocated.insert(static_cast<const Allocate*>(n)->buffer_var.get());
        });
        for (size_t before = 0; before != t.vars.size() + t.buffers.size();) {
            before = t.vars.size() + t.buffers.size();
            post_order_visit(body, [&](const IRNode* n) {
                switch (n->node_type) {
                    case IRNodeType::LetStmt: {
                        const auto* op = static_cast<const LetStmt*>(n);
                        if (t.expr(op->value)) t.vars.insert(op->var.get());
                        break;
                    }
                    case IRNodeType::For: {
                        const auto* op = static_cast<const For*>(n);
                        if (t.expr(op->min) || t.expr(op->extent))
                            t.vars.insert(op->loop_var.get());
                        break;
                    }
                    case IRNodeType::BufferStore: {
                        const auto* op = static_cast<const BufferStore*>(n);
                        if (t.expr(op->value) || t.exprs(op->indices))
                            t.buffers.insert(op->buffer->data.get());
                        break;
                    }
                    case IRNodeType::Store: {
                        const auto* op = static_cast<const Store*>(n);
                        if (t.expr(op->value) || t.expr(op->index))
                            t.buffers.insert(op->buffer_var.get());
                        break;
                    }
                    default: break;
                }
            });
        }
        return t;
    }
};

// Rewrites the accesses of the expanded buffers: one copy per virtual thread, the copy of
// virtual thread `vt` first in the buffer's new outermost dimension.
class ExpandBuffers : public IRMutator {
public:
    ExpandBuffers(const Var& vt, const std::unordered_map<const Variable*, Buffer>& expanded)
        : vt_(vt), expanded_(expanded) {}
    using IRMutator::visit;

protected:
    Expr visit(const BufferLoad* op) override {
        std::vector<Expr> indices;
        mutate_all(op->indices, &indices);
        auto it = expanded_.find(op->buffer->data.get());
        if (it == expanded_.end()) return BufferLoad::make(op->buffer, std::move(indices));
        indices.insert(indices.begin(), vt_);
        return BufferLoad::make(it->second, std::move(indices));
    }
    Stmt visit(const BufferStore* op) override {
        std::vector<Expr> indices;
        mutate_all(op->indices, &indices);
        Expr value = mutate(op->value);
        auto it = expanded_.find(op->buffer->data.get());
        if (it == expanded_.end()) return BufferStore::make(op->buffer, value, std::move(indices));
        indices.insert(indices.begin(), vt_);
        return BufferStore::make(it->second, value, std::move(indices));
    }

private:
    Var vt_;
    const std::unordered_map<const Variable*, Buffer>& expanded_;
};

// One vthread loop's body with the loop pushed as deep as it goes: work that does not depend on
// the virtual thread (a shared-memory fetch, a barrier) runs once per thread, the loop wraps only
// the statements that do, and each buffer allocated inside becomes one copy per virtual thread.
class Interleave {
public:
    Interleave(const For* loop, int64_t max_unroll)
        : loop_(loop), touched_(Touched::of(loop->loop_var, loop->body)) {
        auto n = as_const_int(loop->extent);
        kind_ = n && *n <= max_unroll ? ForKind::Unrolled : ForKind::Serial;
        std::unordered_set<const Variable*> seen;
        post_order_visit(loop->body, [&](const IRNode* n) {
            const Buffer* b = n->node_type == IRNodeType::BufferLoad
                                  ? &static_cast<const BufferLoad*>(n)->buffer
                              : n->node_type == IRNodeType::BufferStore
                                  ? &static_cast<const BufferStore*>(n)->buffer
                                  : nullptr;
            if (b && expands((*b)->data.get()) && seen.insert((*b)->data.get()).second)
                to_expand_.push_back(*b);
        });
    }

    // Whether every allocation to expand is a compact buffer of a constant-extent loop (the
    // pass leaves other loops as a serial loop around the whole body).
    bool possible() const {
        if (!as_const_int(loop_->extent) || has_allreduce(loop_->body)) return false;
        for (const Buffer& b : to_expand_)
            if (!b->strides.empty() || b->swizzle.defined() ||
                (b->elem_offset.defined() && !is_zero(b->elem_offset)))
                return false;
        return true;
    }

    Stmt run() {
        for (const Buffer& b : to_expand_) expanded_[b->data.get()] = expanded(b);
        return inject(loop_->body);
    }

private:
    bool expands(const Variable* buffer) const {
        return touched_.allocated.count(buffer) && touched_.buffers.count(buffer);
    }

    // `s` inside its own copy of the vthread loop. A buffer allocated inside `s` is allocated
    // once per virtual thread there, so only the buffers allocated outside it are expanded.
    Stmt replicate(const Stmt& s) const {
        std::unordered_map<const Variable*, Buffer> outside = expanded_;
        post_order_visit(s, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::Allocate)
                outside.erase(static_cast<const Allocate*>(n)->buffer_var.get());
        });
        Stmt body = ExpandBuffers(loop_->loop_var, outside).mutate(s);
        return For::make(loop_->loop_var, loop_->min, loop_->extent, kind_, body);
    }

    Stmt inject(const Stmt& s) const {
        if (!touched_.stmt(s)) return s;
        switch (s.node_type()) {
            case IRNodeType::Seq: {
                std::vector<Stmt> out;
                for (const Stmt& c : s.as<Seq>()->stmts) out.push_back(inject(c));
                return Seq::make(std::move(out));
            }
            case IRNodeType::For: {
                const For* op = s.as<For>();
                bool enters = op->kind == ForKind::Serial || op->kind == ForKind::Unrolled ||
                              (op->kind == ForKind::ThreadBound && is_thread_loop(s));
                if (!enters || touched_.expr(op->min) || touched_.expr(op->extent)) break;
                return For::make(op->loop_var, op->min, op->extent, op->kind, inject(op->body),
                                 op->thread_tag);
            }
            case IRNodeType::IfThenElse: {
                const IfThenElse* op = s.as<IfThenElse>();
                if (touched_.expr(op->condition)) break;
                return IfThenElse::make(op->condition, inject(op->then_case),
                                        op->else_case.defined() ? inject(op->else_case) : Stmt());
            }
            case IRNodeType::LetStmt: {
                const LetStmt* op = s.as<LetStmt>();
                if (touched_.expr(op->value)) break;
                return LetStmt::make(op->var, op->value, inject(op->body));
            }
            case IRNodeType::AttrStmt: {
                const AttrStmt* op = s.as<AttrStmt>();
                if (touched_.expr(op->value)) break;
                return AttrStmt::make(op->key, op->value, inject(op->body));
            }
            case IRNodeType::Allocate: {
                const Allocate* op = s.as<Allocate>();
                std::vector<Expr> extents = op->extents;
                if (expands(op->buffer_var.get()))
                    extents.insert(extents.begin(), cast_extent(op->extents));
                return Allocate::make(op->buffer_var, op->dtype, extents, op->scope,
                                      inject(op->body));
            }
            default: break;
        }
        return replicate(s);
    }

    // `b` with one copy per virtual thread: a new outermost dimension.
    Buffer expanded(const Buffer& b) const {
        auto* n = new BufferNode();
        n->data = b->data;
        n->dtype = b->dtype;
        n->shape = b->shape;
        Type t = n->shape.empty() ? loop_->extent.type() : n->shape[0].type();
        n->shape.insert(n->shape.begin(), internal::cast_index(t, loop_->extent));
        n->elem_offset = b->elem_offset;
        n->name = b->name;
        n->scope = b->scope;
        n->alignment = b->alignment;
        return Buffer(n);
    }

    // The vthread count in the type of an allocation's extents.
    Expr cast_extent(const std::vector<Expr>& extents) const {
        Type t = extents.empty() ? loop_->extent.type() : extents[0].type();
        return internal::cast_index(t, loop_->extent);
    }

    const For* loop_;
    Touched touched_;
    ForKind kind_ = ForKind::Serial;
    std::vector<Buffer> to_expand_;  ///< the buffers expands() names, each once
    std::unordered_map<const Variable*, Buffer> expanded_;
};

class VirtualThreads : public IRMutator {
public:
    explicit VirtualThreads(int64_t max_unroll) : max_unroll_(max_unroll) {}
    using IRMutator::visit;

protected:
    Stmt visit(const For* op) override {
        Stmt body = mutate(op->body);
        if (op->kind != ForKind::ThreadBound || op->thread_tag != "vthread") {
            if (body.same_as(op->body)) return Stmt(op);
            return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
        }
        return sink(op, body);
    }

private:
    // The vthread loop `op` around `body`, moved inside the threadIdx loops that body opens with
    // (every thread runs its virtual threads), then pushed into the body (Interleave).
    Stmt sink(const For* op, const Stmt& body) {
        if (is_thread_loop(body)) {
            const For* t = body.as<For>();
            return For::make(t->loop_var, t->min, t->extent, t->kind, sink(op, t->body),
                             t->thread_tag);
        }
        Stmt loop = For::make(op->loop_var, op->min, op->extent, ForKind::ThreadBound, body,
                              op->thread_tag);
        Interleave interleave(loop.as<For>(), max_unroll_);
        if (interleave.possible()) return interleave.run();
        auto n = as_const_int(op->extent);
        ForKind kind = n && *n <= max_unroll_ ? ForKind::Unrolled : ForKind::Serial;
        return For::make(op->loop_var, op->min, op->extent, kind, body);
    }

    int64_t max_unroll_;
};

}  // namespace

Stmt inject_virtual_threads(const Stmt& s, int64_t max_unroll) {
    return VirtualThreads(max_unroll).mutate(s);
}

}  // namespace tessel
