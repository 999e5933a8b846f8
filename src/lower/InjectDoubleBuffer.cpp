// InjectDoubleBuffer: see the header.
#include "tessel/lower/InjectDoubleBuffer.h"

#include <map>

#include "PassUtil.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

bool is_barrier(const Stmt& s) {
    const auto* e = s.as<Evaluate>();
    const auto* c = e ? e->value.as<Call>() : nullptr;
    return c && c->op == Intrinsic::thread_barrier;
}

Stmt barrier() {
    return Evaluate::make(Call::make(Intrinsic::thread_barrier, {}));
}

[[noreturn]] void fail(const std::string& buffer, const std::string& why) {
    TESSEL_THROW(ScheduleError) << "double_buffer: shared stage '" << buffer << "': " << why;
}

/// A double-buffered buffer: its allocation and its two-copy replacement.
struct Doubled {
    const Allocate* alloc = nullptr;
    Buffer twice;  ///< [2] + the buffer's shape (and strides)
};

/// The body of a marked loop taken apart: the marked allocations, then the statements in order.
struct Body {
    std::map<const Variable*, Doubled> buffers;
    std::vector<Stmt> items;
};

void peel(const Stmt& s, Body* b) {
    if (const auto* a = s.as<AttrStmt>(); a && a->key == "double_buffer_scope") {
        const auto* alloc = a->body.as<Allocate>();
        TESSEL_CHECK(alloc) << "double_buffer_scope around a statement that is not an Allocate";
        b->buffers[alloc->buffer_var.get()].alloc = alloc;
        return peel(alloc->body, b);
    }
    if (const auto* seq = s.as<Seq>()) {
        for (const Stmt& x : seq->stmts) peel(x, b);
        return;
    }
    b->items.push_back(s);
}

bool has_mark(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::AttrStmt) {
            const std::string& k = static_cast<const AttrStmt*>(n)->key;
            found = found || k == "double_buffer_scope" || k == "double_buffer_write";
        }
    });
    return found;
}

/// Reads and writes of the doubled buffers indexed by copy `parity` (an Int(32) expression).
class Retarget : public IRMutator {
public:
    Retarget(const std::map<const Variable*, Doubled>& bufs, Expr parity)
        : bufs_(bufs), parity_(std::move(parity)) {}
    using IRMutator::visit;

protected:
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const auto* l = e.as<BufferLoad>();
        auto it = bufs_.find(l->buffer->data.get());
        if (it == bufs_.end()) return e;
        return BufferLoad::make(it->second.twice, with_parity(l->indices));
    }
    Stmt visit(const BufferStore* op) override {
        Stmt s = IRMutator::visit(op);
        const auto* st = s.as<BufferStore>();
        auto it = bufs_.find(st->buffer->data.get());
        if (it == bufs_.end()) return s;
        return BufferStore::make(it->second.twice, st->value, with_parity(st->indices));
    }

private:
    std::vector<Expr> with_parity(const std::vector<Expr>& idx) const {
        std::vector<Expr> out{idx.empty() ? parity_ : cast(idx[0].type(), parity_)};
        out.insert(out.end(), idx.begin(), idx.end());
        return out;
    }
    const std::map<const Variable*, Doubled>& bufs_;
    Expr parity_;
};

/// A fetch nest split into the loads into registers and the stores from them.
struct Staged {
    Stmt load, store;
    std::vector<Stmt> allocs;  ///< the register buffers' allocations (wrapped around the loop)
};

class Stager {
public:
    Stager(const std::map<const Variable*, Doubled>& bufs, Expr parity)
        : bufs_(bufs), parity_(std::move(parity)) {}

    /// Splits `s` (thread loops, constant loops, lets and guards around one store into a doubled
    /// buffer); `lin` is the register index of the enclosing loops, `size` their trip count.
    std::pair<Stmt, Stmt> split(const Stmt& s, const Expr& lin, int64_t size,
                                const std::string& buffer) {
        if (const auto* f = s.as<For>()) {
            if (f->kind == ForKind::ThreadBound) {
                auto [l, st] = split(f->body, lin, size, buffer);
                return {For::make(f->loop_var, f->min, f->extent, f->kind, l, f->thread_tag),
                        For::make(f->loop_var, f->min, f->extent, f->kind, st, f->thread_tag)};
            }
            auto ext = as_const_int(f->extent);
            if (!ext) fail(buffer, "its fetch has a loop of non-constant extent");
            Expr i = f->loop_var - f->min;
            Expr inner = is_zero(lin) ? i : lin * make_const(lin.type(), *ext) + i;
            auto [l, st] = split(f->body, cast(lin.type(), inner), size * *ext, buffer);
            return {For::make(f->loop_var, f->min, f->extent, f->kind, l, f->thread_tag),
                    For::make(f->loop_var, f->min, f->extent, f->kind, st, f->thread_tag)};
        }
        if (const auto* let = s.as<LetStmt>()) {
            auto [l, st] = split(let->body, lin, size, buffer);
            return {LetStmt::make(let->var, let->value, l),
                    LetStmt::make(let->var, let->value, st)};
        }
        if (const auto* g = s.as<IfThenElse>(); g && !g->else_case.defined()) {
            auto [l, st] = split(g->then_case, lin, size, buffer);
            return {IfThenElse::make(g->condition, l), IfThenElse::make(g->condition, st)};
        }
        if (const auto* a = s.as<AttrStmt>()) {
            auto [l, st] = split(a->body, lin, size, buffer);
            return {AttrStmt::make(a->key, a->value, l), AttrStmt::make(a->key, a->value, st)};
        }
        const auto* store = s.as<BufferStore>();
        if (!store || !bufs_.count(store->buffer->data.get()))
            fail(buffer, "its fetch is not a loop nest around one store into it");
        Buffer regs(store->buffer.name() + ".stage", store->buffer.dtype(),
                    {make_const(Int(32), size)}, StorageScope::Local);
        staged_.push_back(regs);
        Stmt load = BufferStore::make(regs, store->value, {lin});
        Stmt back = Retarget(bufs_, parity_)
                        .mutate(BufferStore::make(store->buffer, BufferLoad::make(regs, {lin}),
                                                  store->indices));
        return {load, back};
    }
    const std::vector<Buffer>& registers() const { return staged_; }

private:
    const std::map<const Variable*, Doubled>& bufs_;
    Expr parity_;
    std::vector<Buffer> staged_;
};

Buffer doubled_buffer(const Buffer& b) {
    auto* n = new BufferNode();
    n->data = b->data;
    n->dtype = b->dtype;
    n->shape = b->shape;
    n->strides = b->strides;
    n->elem_offset = b->elem_offset;
    n->name = b->name;
    n->scope = b->scope;
    n->alignment = b->alignment;
    Type t = b.shape().empty() ? Int(32) : b.shape()[0].type();
    n->shape.insert(n->shape.begin(), make_const(t, 2));
    if (!n->strides.empty()) {
        // The outer stride: the size of one copy (the allocation's extent).
        Expr size = n->strides[0] * b.shape()[0];
        n->strides.insert(n->strides.begin(), size);
    }
    return Buffer(n);
}

class Injector : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const For* op) override {
        Stmt s = IRMutator::visit(op);  // inner loops first
        const auto* f = s.as<For>();
        Body body;
        peel(f->body, &body);
        if (body.buffers.empty()) return s;
        std::string name = body.buffers.begin()->second.alloc->buffer_var.name();
        auto lo = as_const_int(f->min), n = as_const_int(f->extent);
        if (f->kind != ForKind::Serial || !lo || !n)
            fail(name, "it must be computed at a serial loop with constant bounds (it is at '" +
                           f->loop_var.name() + "')");
        // The doubled buffers: find one Buffer object per allocation (from its accesses).
        std::map<const Variable*, Buffer> seen;
        post_order_visit(f->body, [&](const IRNode* node) {
            if (node->node_type == IRNodeType::BufferStore) {
                const auto* st = static_cast<const BufferStore*>(node);
                seen.emplace(st->buffer->data.get(), st->buffer);
            }
        });
        for (auto& [var, d] : body.buffers) {
            auto it = seen.find(var);
            TESSEL_CHECK(it != seen.end()) << "double-buffered " << var->name << " is never stored";
            d.twice = doubled_buffer(it->second);
        }
        // Fetches first, then the computation; barriers between them are dropped.
        std::vector<Stmt> fetches, compute;
        for (const Stmt& item : body.items) {
            if (is_barrier(item)) continue;
            const auto* a = item.as<AttrStmt>();
            if (a && a->key == "double_buffer_write") {
                if (!compute.empty())
                    fail(name, "the loop computes something before its fetch of '" +
                                   a->value.as<Variable>()->name + "'");
                // insert_barriers may have put the loop's barriers inside the mark.
                Body inner;
                peel(a->body, &inner);
                for (const Stmt& x : inner.items)
                    if (!is_barrier(x)) fetches.push_back(x);
                continue;
            }
            if (has_mark(item) || internal::has_thread_sync(item))
                fail(name,
                     "the loop it is computed at holds another shared fetch or a barrier inside "
                     "its computation; double-buffer every shared stage computed at '" +
                         f->loop_var.name() + "'");
            compute.push_back(item);
        }
        const Var& v = f->loop_var;
        Type t = v.type();
        auto parity_of = [&](const Expr& iter) {
            return cast(Int(32), FloorMod::make(iter - make_const(t, *lo), make_const(t, 2)));
        };
        Stmt result;
        if (*n == 1) {
            // Nothing to overlap: the loop as it was, without the marks.
            std::vector<Stmt> items = fetches;
            items.push_back(barrier());
            items.insert(items.end(), compute.begin(), compute.end());
            result = Retarget(body.buffers, make_const(Int(32), 0))
                         .mutate(For::make(v, f->min, f->extent, f->kind, Seq::make(items)));
        } else {
            Expr first = make_const(t, *lo), next = v + make_const(t, 1);
            std::vector<Stmt> prologue;
            for (const Stmt& x : fetches)
                prologue.push_back(
                    substitute(Retarget(body.buffers, make_const(Int(32), 0)).mutate(x), v, first));
            prologue.push_back(barrier());
            Stager stager(body.buffers, parity_of(v));  // stores are then moved to v + 1
            std::vector<Stmt> loads, stores;
            for (const Stmt& x : fetches) {
                auto [l, st] = stager.split(x, make_const(Int(32), 0), 1, name);
                loads.push_back(substitute(l, v, next));
                stores.push_back(substitute(st, v, next));
            }
            Stmt work = Retarget(body.buffers, parity_of(v)).mutate(Seq::make(compute));
            std::vector<Stmt> iteration = loads;
            iteration.push_back(work);
            iteration.insert(iteration.end(), stores.begin(), stores.end());
            iteration.push_back(barrier());
            Stmt main =
                For::make(v, f->min, make_const(t, *n - 1), ForKind::Serial, Seq::make(iteration));
            for (const Buffer& r : stager.registers())
                main = Allocate::make(r->data, r.dtype(), r.shape(), StorageScope::Local, main);
            Stmt last =
                For::make(v, make_const(t, *lo + *n - 1), make_const(t, 1), ForKind::Serial, work);
            prologue.push_back(main);
            prologue.push_back(last);
            result = Seq::make(prologue);
        }
        for (auto& [var, d] : body.buffers) {
            std::vector<Expr> extents = d.alloc->extents;
            extents.insert(extents.begin(), make_const(extents[0].type(), 2));
            result = Allocate::make(d.alloc->buffer_var, d.alloc->dtype, extents, d.alloc->scope,
                                    result);
        }
        return result;
    }
};

/// Removes the marks left where no loop was pipelined (a loop of one iteration is simplified
/// away before this pass).
class StripMarks : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const AttrStmt* op) override {
        if (op->key == "double_buffer_scope" || op->key == "double_buffer_write")
            return mutate(op->body);
        return IRMutator::visit(op);
    }
};

}  // namespace

Stmt inject_double_buffer(const Stmt& s) {
    return StripMarks().mutate(Injector().mutate(s));
}

}  // namespace tessel
