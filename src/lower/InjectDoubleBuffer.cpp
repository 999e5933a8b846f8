// InjectDoubleBuffer: see the header.
#include "tessel/lower/InjectDoubleBuffer.h"

#include <array>
#include <map>
#include <optional>
#include <set>

#include "PassUtil.h"
#include "TmaCopies.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/StorageFlatten.h"

namespace tessel {

namespace {

using internal::barrier_stmt;
using internal::call_stmt;
using internal::is_barrier_stmt;

/// `depth` 0: double_buffer; else pipeline(depth).
[[noreturn]] void fail(int depth, const std::string& buffer, const std::string& why) {
    TESSEL_THROW(ScheduleError) << (depth ? "pipeline" : "double_buffer") << ": shared stage '"
                                << buffer << "': " << why;
}

/// A multi-buffered buffer: its allocation and its replacement with several copies.
struct Doubled {
    const Allocate* alloc = nullptr;
    Buffer twice;  ///< [copies] + the buffer's shape (and strides)
};

/// The body of a marked loop taken apart: the marked allocations, then the statements in order.
struct Body {
    std::map<const Variable*, Doubled> buffers;
    std::vector<const Variable*> order;  ///< the buffers as marked, outermost first
    std::vector<Stmt> items;
    int depth = -1;        ///< pipeline depth of the marked buffers, 0 for double_buffer (-1: none)
    int ws = -1;           ///< the marked buffers are warp-specialized (1) or not (0); -1: none
    std::string conflict;  ///< the buffer whose mark disagrees with the others' (if any)
};

bool is_pipeline_scope(const std::string& key) {
    return key == "pipeline_scope" || key == "warp_specialized_pipeline_scope";
}

void peel(const Stmt& s, Body* b) {
    const auto* a = s.as<AttrStmt>();
    if (a && (a->key == "double_buffer_scope" || is_pipeline_scope(a->key))) {
        const auto* alloc = a->body.as<Allocate>();
        TESSEL_CHECK(alloc) << a->key << " around a statement that is not an Allocate";
        int depth = is_pipeline_scope(a->key) ? static_cast<int>(*as_const_int(a->value)) : 0;
        int ws = a->key == "warp_specialized_pipeline_scope" ? 1 : 0;
        if (((b->depth >= 0 && b->depth != depth) || (b->ws >= 0 && b->ws != ws)) &&
            b->conflict.empty())
            b->conflict = alloc->buffer_var.name();
        b->depth = b->depth < 0 ? depth : b->depth;
        b->ws = b->ws < 0 ? ws : b->ws;
        b->buffers[alloc->buffer_var.get()].alloc = alloc;
        b->order.push_back(alloc->buffer_var.get());
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
            found = found || k == "double_buffer_scope" || k == "double_buffer_write" ||
                    is_pipeline_scope(k);
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
            if (!ext) fail(0, buffer, "its fetch has a loop of non-constant extent");
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
            fail(0, buffer, "its fetch is not a loop nest around one store into it");
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

Buffer multi_buffer(const Buffer& b, int copies) {
    auto* n = new BufferNode();
    n->data = b->data;
    n->dtype = b->dtype;
    n->shape = b->shape;
    n->strides = b->strides;
    n->elem_offset = b->elem_offset;
    n->name = b->name;
    n->scope = b->scope;
    n->alignment = b->alignment;
    n->swizzle = b->swizzle;  // copies are whole multiples of the swizzle's blocks
    Type t = b.shape().empty() ? Int(32) : b.shape()[0].type();
    n->shape.insert(n->shape.begin(), make_const(t, copies));
    if (!n->strides.empty()) {
        // The outer stride: the size of one copy (the allocation's extent).
        Expr size = n->strides[0] * b.shape()[0];
        n->strides.insert(n->strides.begin(), size);
    }
    return Buffer(n);
}

/// A marked loop taken apart: its fetches (barriers dropped) and its computation.
struct Marked {
    const For* loop = nullptr;
    int64_t lo = 0, n = 0;
    int depth = 0;     ///< 0: double_buffer
    bool tma = false;  ///< the fetches are tma() stages' (all of them)
    bool ws = false;   ///< ... issued by a producer warp group (warp_specialize)
    std::string name;
    Body body;
    std::vector<Stmt> fetches, compute;
};

/// The copy of the buffers iteration `iter` of the marked loop uses.
Expr copy_of(const Marked& m, const Expr& iter, int copies) {
    Type t = iter.type();
    return cast(Int(32), FloorMod::make(iter - make_const(t, m.lo), make_const(t, copies)));
}

/// Two copies; the next fetch staged through registers (see the header).
Stmt double_buffer_loop(const Marked& m) {
    const Var& v = m.loop->loop_var;
    Type t = v.type();
    Expr first = make_const(t, m.lo), next = v + make_const(t, 1);
    std::vector<Stmt> prologue;
    for (const Stmt& x : m.fetches)
        prologue.push_back(
            substitute(Retarget(m.body.buffers, make_const(Int(32), 0)).mutate(x), v, first));
    prologue.push_back(barrier_stmt());
    Stager stager(m.body.buffers, copy_of(m, v, 2));  // stores are then moved to v + 1
    std::vector<Stmt> loads, stores;
    for (const Stmt& x : m.fetches) {
        auto [l, st] = stager.split(x, make_const(Int(32), 0), 1, m.name);
        loads.push_back(substitute(l, v, next));
        stores.push_back(substitute(st, v, next));
    }
    Stmt work = Retarget(m.body.buffers, copy_of(m, v, 2)).mutate(Seq::make(m.compute));
    std::vector<Stmt> iteration = loads;
    iteration.push_back(work);
    iteration.insert(iteration.end(), stores.begin(), stores.end());
    iteration.push_back(barrier_stmt());
    Stmt main =
        For::make(v, m.loop->min, make_const(t, m.n - 1), ForKind::Serial, Seq::make(iteration));
    for (const Buffer& r : stager.registers())
        main = Allocate::make(r->data, r.dtype(), r.shape(), StorageScope::Local, main);
    Stmt last =
        For::make(v, make_const(t, m.lo + m.n - 1), make_const(t, 1), ForKind::Serial, work);
    prologue.push_back(main);
    prologue.push_back(last);
    return Seq::make(prologue);
}

/// The fetches of iteration `iter` into copy `copy`, marked for lower_async_copies (`copy` may
/// use the loop variable: the fetch is moved to `iter` before it is retargeted).
Stmt async_fetch(const Marked& m, const Expr& iter, const Expr& copy) {
    std::vector<Stmt> out;
    for (const Stmt& x : m.fetches)
        out.push_back(AttrStmt::make(
            "async_copy", make_const(Int(32), m.depth),
            Retarget(m.body.buffers, copy).mutate(substitute(x, m.loop->loop_var, iter))));
    return Seq::make(out);
}

/// `depth` copies; the fetches of the next depth - 1 iterations in flight (see the header).
Stmt pipelined_loop(const Marked& m) {
    const Var& v = m.loop->loop_var;
    Type t = v.type();
    const int d = m.depth;
    std::vector<Stmt> prologue;
    for (int k = 0; k + 1 < d; ++k) {  // one group each, empty past the loop's end
        if (k < m.n)
            prologue.push_back(async_fetch(m, make_const(t, m.lo + k), make_const(Int(32), k)));
        prologue.push_back(call_stmt(Intrinsic::cp_async_commit));
    }
    Expr ahead = v + make_const(t, d - 1);
    std::vector<Stmt> iteration = {
        call_stmt(Intrinsic::cp_async_wait, {make_const(Int(32), d - 2)}), barrier_stmt(),
        Retarget(m.body.buffers, copy_of(m, v, d)).mutate(Seq::make(m.compute)),
        IfThenElse::make(ahead < make_const(t, m.lo + m.n),
                         async_fetch(m, ahead, copy_of(m, ahead, d))),
        call_stmt(Intrinsic::cp_async_commit)};
    prologue.push_back(
        For::make(v, m.loop->min, m.loop->extent, ForKind::Serial, Seq::make(iteration)));
    // Nothing is left in flight after the loop: the last groups are empty.
    return Seq::make(prologue);
}

bool is_tma_fetch(const Stmt& s) {
    const auto* a = s.as<AttrStmt>();
    return a && a->key == "tma_copy";
}

/// The elements of one copy of a multi-buffered buffer.
int64_t copy_elements(const Doubled& d) {
    std::vector<Expr> one(d.twice->shape.size(), make_zero(Int(32))), zero = one;
    one[0] = make_one(Int(32));
    Expr e = unswizzled_flat_index(d.twice, one) - unswizzled_flat_index(d.twice, zero);
    return as_const_int(simplify(e)).value();
}

/// The boxes of tma() fetches (each a "tma_copy" mark and the elements of one copy of its
/// buffer) into copy `copy`, issued by one thread after it announces their bytes on the copy's
/// mbarrier (with its arrival).
Stmt issue_boxes(const std::vector<std::pair<Stmt, int64_t>>& fetches, const Var& bar,
                 const Expr& copy, bool first_thread = true) {
    std::vector<Stmt> boxes;
    int64_t bytes = 0;
    for (const auto& [x, elems] : fetches) {
        const auto* a = x.as<AttrStmt>();
        internal::TmaFetch f =
            internal::tma_copies(a->body, a->value.as<Variable>()->name, copy, elems, bar);
        bytes += f.bytes;
        boxes.push_back(f.issue);
    }
    boxes.insert(boxes.begin(),
                 call_stmt(Intrinsic::mbarrier_expect_tx, {bar, copy, make_const(Int(32), bytes)}));
    return first_thread ? internal::on_first_thread(Seq::make(boxes)) : Seq::make(boxes);
}

/// Iteration `iter`'s tma() fetches into copy `copy`, issued by one thread: the bytes announced
/// on the copy's mbarrier (with the thread's arrival), then the boxes. `shift` is substituted in
/// the fetches first (a tile loop's next iteration). Without `first_thread` the caller has chosen
/// the one thread.
Stmt tma_issue(const Marked& m, const Var& bar, const Expr& iter, const Expr& copy,
               const VarMap& shift = {}, bool first_thread = true) {
    std::vector<std::pair<Stmt, int64_t>> fetches;
    for (const Stmt& x : m.fetches) {
        const auto* a = x.as<AttrStmt>();
        const Doubled& d = m.body.buffers.at(a->value.as<Variable>());
        fetches.push_back(
            {AttrStmt::make(a->key, a->value,
                            substitute(substitute(a->body, shift), m.loop->loop_var, iter)),
             copy_elements(d)});
    }
    return issue_boxes(fetches, bar, copy, first_thread);
}

/// A warp-specialized tma() pipeline (Schedule::warp_specialize). The block's warp groups
/// (threadIdx.z, 128 threads each) are its consumers; one more warp group, threadIdx.z ==
/// `consumers`, is the producer, whose first thread runs `producer`: for each fetch g (tile
/// after tile), it waits until the consumers have released copy g % depth of the tiles (its
/// previous use, on barrier `empty`; not for the first round) and issues the copy on barrier
/// `full`. The consumers wait on `full`, compute, and each thread arrives on `empty` once the
/// copy is read (inject_wgmma_sync keeps one wgmma group in flight: the arrival for the
/// previous copy then follows wgmma's wait(1)). What goes before the consumers' region: the
/// barriers' init, a block barrier, the producer; no block barrier may follow (the producer
/// never reaches it). Registers move from the producer to the consumers (setmaxnreg) when that
/// gives the consumers more than the launch's even share.
struct WarpSpecialized {
    Var empty;
    Stmt producer;
    int64_t consumers = 1;  ///< consumer warp groups (the threadIdx.z extent)
    int producer_registers = 0, consumer_registers = 0;  ///< setmaxnreg's counts (0: none)
    bool own_block = false;  ///< no blockIdx loop: the block is given one (of one iteration)
};

/// A serial loop of the block around a tma() pipeline, reached from it through threadIdx loops
/// only (a persistent kernel's loop over its tiles): the pipeline runs on across its iterations,
/// the copies of the next tile's first k tiles issued during this tile's last ones. What goes
/// before the loop: the buffers' and barriers' allocations (hoisted out of the loop, so the
/// copies in flight survive from one tile to the next), the barriers' init and the first tile's
/// first copies.
struct TileLoop {
    const For* loop = nullptr;
    std::vector<Stmt> before;
    std::vector<const Allocate*> buffers;  ///< the multi-buffered allocations, outermost first
    std::vector<std::vector<Expr>> extents;
    Var bar;
    int depth = 0;
    /// Warp specialization (WarpSpecialized): `loop` is then the consumers' region.
    std::optional<WarpSpecialized> ws;
};

/// The multi-buffered allocations of `m` (`copies` of each), to be made around `t`'s loop.
void hoist_buffers(const Marked& m, int copies, TileLoop* t) {
    for (const Variable* var : m.body.order) {
        const Doubled& d = m.body.buffers.at(var);
        std::vector<Expr> extents = d.alloc->extents;
        extents.insert(extents.begin(), make_const(extents[0].type(), copies));
        t->buffers.push_back(d.alloc);
        t->extents.push_back(extents);
    }
}

/// The barriers of a pipeline `d` deep, set up by one thread, then a block barrier.
std::vector<Stmt> init_mbarriers(const Var& bar, int d) {
    std::vector<Stmt> init;
    for (int c = 0; c < d; ++c)
        init.push_back(call_stmt(Intrinsic::mbarrier_init,
                                 {bar, make_const(Int(32), c), make_const(Int(32), 1)}));
    return {internal::on_first_thread(Seq::make(init)), barrier_stmt()};
}

/// pipelined_loop with tma() fetches: one mbarrier a copy of the buffers (one arrival a phase,
/// the issuing thread's, with the bytes of the copies), which every thread waits on before it
/// computes on the copy; the barrier after the wait orders the previous iteration's reads of the
/// copy refilled at the end of this one (see the header). Inside a tile loop (`tile`), the
/// copies count on from tile to tile (fetch g = tile * n + k) and the fetches past this tile's
/// last k tile are the next tile's first ones; `tile->before` gets the set-up.
Stmt tma_pipelined_loop(const Marked& m, TileLoop* tile = nullptr) {
    const Var& v = m.loop->loop_var;
    Type t = v.type();
    const int d = m.depth;
    Var bar(m.name + ".mbar", Handle());
    std::vector<Stmt> out = init_mbarriers(bar, d);
    for (int k = 0; k + 1 < d && k < m.n; ++k)
        out.push_back(tma_issue(m, bar, make_const(t, m.lo + k), make_const(Int(32), k)));
    if (tile) {
        const Var& tt = tile->loop->loop_var;
        const Expr tlo = tile->loop->min, tend = tile->loop->min + tile->loop->extent;
        for (Stmt& x : out) x = substitute(x, tt, tlo);
        tile->before = out;
        tile->bar = bar;
        tile->depth = d;
        // Fetch g of the whole run, its copy and the parity of its phase.
        Expr g = cast(t, tt - tlo) * make_const(t, m.n) + (v - make_const(t, m.lo));
        auto copy = [&](const Expr& x) {
            return cast(Int(32), FloorMod::make(x, make_const(t, d)));
        };
        Expr parity =
            cast(Int(32), FloorMod::make(FloorDiv::make(g, make_const(t, d)), make_const(t, 2)));
        Expr ahead = v + make_const(t, d - 1), next = g + make_const(t, d - 1);
        Stmt next_tile = tma_issue(m, bar, ahead - make_const(t, m.n), copy(next),
                                   {{tt.get(), tt + make_one(tt.type())}});
        std::vector<Stmt> iteration = {
            call_stmt(Intrinsic::mbarrier_wait, {bar, copy(g), parity}), barrier_stmt(),
            Retarget(m.body.buffers, copy(g)).mutate(Seq::make(m.compute)),
            IfThenElse::make(ahead < make_const(t, m.lo + m.n),
                             tma_issue(m, bar, ahead, copy(next)),
                             IfThenElse::make(tt + make_one(tt.type()) < tend, next_tile))};
        return For::make(v, m.loop->min, m.loop->extent, ForKind::Serial, Seq::make(iteration));
    }
    Expr ahead = v + make_const(t, d - 1);
    Expr parity =
        cast(Int(32), FloorMod::make(FloorDiv::make(v - make_const(t, m.lo), make_const(t, d)),
                                     make_const(t, 2)));
    std::vector<Stmt> iteration = {
        call_stmt(Intrinsic::mbarrier_wait, {bar, copy_of(m, v, d), parity}), barrier_stmt(),
        Retarget(m.body.buffers, copy_of(m, v, d)).mutate(Seq::make(m.compute)),
        IfThenElse::make(ahead < make_const(t, m.lo + m.n),
                         tma_issue(m, bar, ahead, copy_of(m, ahead, d)))};
    out.push_back(For::make(v, m.loop->min, m.loop->extent, ForKind::Serial, Seq::make(iteration)));
    return Allocate::make(bar, UInt(64), {make_const(Int(32), d)}, StorageScope::Shared,
                          Seq::make(out));
}

/// The consumers' loop of a warp-specialized pipeline (WarpSpecialized); sets `w`'s producer.
/// `tile` is the tile loop the fetches run on across, if any.
Stmt warp_specialized_loop(const Marked& m, const For* tile, const Var& full, WarpSpecialized* w) {
    const Var& v = m.loop->loop_var;
    Type t = v.type();
    const Expr d = make_const(t, m.depth);
    Expr g = v - make_const(t, m.lo);  // fetch g of the whole run, tile after tile
    if (tile) g = cast(t, tile->loop_var - tile->min) * make_const(t, m.n) + g;
    const Expr copy = cast(Int(32), FloorMod::make(g, d));
    const Expr round = FloorDiv::make(g, d);
    const Expr parity = cast(Int(32), FloorMod::make(round, make_const(t, 2)));
    const Expr released = cast(Int(32), FloorMod::make(round + make_const(t, 1), make_const(t, 2)));
    Stmt produce = Seq::make(
        {IfThenElse::make(g >= d, call_stmt(Intrinsic::mbarrier_wait, {w->empty, copy, released})),
         tma_issue(m, full, v, copy, {}, false)});
    Stmt producer = For::make(v, m.loop->min, m.loop->extent, ForKind::Serial, produce);
    if (tile)
        producer = For::make(tile->loop_var, tile->min, tile->extent, ForKind::Serial, producer);
    w->producer = producer;
    std::vector<Stmt> iteration = {call_stmt(Intrinsic::mbarrier_wait, {full, copy, parity}),
                                   Retarget(m.body.buffers, copy).mutate(Seq::make(m.compute)),
                                   call_stmt(Intrinsic::mbarrier_arrive, {w->empty, copy})};
    return For::make(v, m.loop->min, m.loop->extent, ForKind::Serial, Seq::make(iteration));
}

/// Registers a thread for a block of `threads` threads, one block an SM (65536 registers).
int even_register_share(int64_t threads) {
    return static_cast<int>(std::min<int64_t>(256, 65536 / threads / 8 * 8));
}

/// The block of a warp-specialized pipeline around its consumers' region `region` (the tile
/// loop, or the outermost loop inside the block): barriers, producer, consumers.
Stmt warp_specialized_block(const TileLoop& t, Stmt region) {
    const WarpSpecialized& w = *t.ws;
    // The tile loop's leading barrier ordered the previous tile's reads before this tile's
    // copies: the empty barriers order them now.
    if (const auto* f = region.as<For>(); f && f->kind == ForKind::Serial) {
        std::vector<Stmt> items;
        if (const auto* seq = f->body.as<Seq>())
            for (const Stmt& x : seq->stmts)
                if (!is_barrier_stmt(x) || !items.empty()) items.push_back(x);
        if (!items.empty())
            region =
                For::make(f->loop_var, f->min, f->extent, f->kind, Seq::make(items), f->thread_tag);
    }
    if (internal::has_thread_sync(region))
        TESSEL_THROW(ScheduleError)
            << "warp_specialize: the consumer warp groups of the pipeline on '" << t.bar.name()
            << "' synchronise with a block barrier, which the producer warp group never "
               "reaches; leave barriers out of the consumers' code (an epilogue through shared "
               "memory, say)";
    const Expr groups = make_const(Int(32), w.consumers);
    const int consumer_threads = static_cast<int>(128 * w.consumers);
    std::vector<Stmt> init;
    for (int c = 0; c < t.depth; ++c) {
        init.push_back(call_stmt(Intrinsic::mbarrier_init,
                                 {t.bar, make_const(Int(32), c), make_const(Int(32), 1)}));
        init.push_back(
            call_stmt(Intrinsic::mbarrier_init,
                      {w.empty, make_const(Int(32), c), make_const(Int(32), consumer_threads)}));
    }
    auto thread_loop = [](const char* name, const char* tag, const Expr& extent, Stmt body) {
        return For::make(Var(name, Int(32)), make_zero(Int(32)), extent, ForKind::ThreadBound,
                         std::move(body), tag);
    };
    auto registers = [](int n, int increase) {
        return call_stmt(Intrinsic::setmaxnreg,
                         {make_const(Int(32), n), make_const(Int(32), increase)});
    };
    // The producer: warp group `consumers`, its first thread issuing.
    Stmt issue = thread_loop("ws.x", "threadIdx.x", make_one(Int(32)),
                             thread_loop("ws.y", "threadIdx.y", make_one(Int(32)), w.producer));
    if (w.producer_registers) issue = Seq::make({registers(w.producer_registers, 0), issue});
    Var pz("ws.producer", Int(32));
    Stmt producer = For::make(pz, make_zero(Int(32)), groups + 1, ForKind::ThreadBound,
                              IfThenElse::make(pz == groups, issue), "threadIdx.z");
    if (w.consumer_registers) region = Seq::make({registers(w.consumer_registers, 1), region});
    Stmt consumers = thread_loop("ws.consumer", "threadIdx.z", groups, region);
    Stmt s = Seq::make(
        {internal::on_first_thread(Seq::make(init)), barrier_stmt(), producer, consumers});
    for (const Var& bar : {w.empty, t.bar})
        s = Allocate::make(bar, UInt(64), {make_const(Int(32), t.depth)}, StorageScope::Shared, s);
    return s;
}

/// `s` (the block of a warp-specialized pipeline, with its tiles' allocations) inside a blockIdx
/// loop of one iteration when the kernel had none: the set-up before the thread loops is then
/// part of the kernel.
Stmt in_a_block(const TileLoop& t, Stmt s) {
    if (!t.ws || !t.ws->own_block) return s;
    return For::make(Var("ws.block", Int(32)), make_zero(Int(32)), make_one(Int(32)),
                     ForKind::ThreadBound, std::move(s), "blockIdx.x");
}

/// The computation's first item without the barrier insert_barriers put first inside the
/// allocations of its register buffers (warp or local scope), where they come before the first read
/// of the shared tiles (a k loop of one fragment, no loop around them): the same barrier as an item
/// of its own, which the transform replaces by its own.
Stmt without_leading_barrier(const Stmt& s) {
    if (const auto* a = s.as<Allocate>(); a && a->scope != StorageScope::Shared) {
        Stmt body = without_leading_barrier(a->body);
        if (body.same_as(a->body)) return s;
        return Allocate::make(a->buffer_var, a->dtype, a->extents, a->scope, body);
    }
    const auto* seq = s.as<Seq>();
    if (!seq || seq->stmts.empty() || !is_barrier_stmt(seq->stmts[0])) return s;
    std::vector<Stmt> rest(seq->stmts.begin() + 1, seq->stmts.end());
    return rest.size() == 1 ? rest[0] : Seq::make(rest);
}

/// Splits the marked loop's items into fetches and computation, checking the loop's form.
void take_apart(Marked* m) {
    for (const Stmt& stmt : m->body.items) {
        if (is_barrier_stmt(stmt)) continue;
        const Stmt item = m->compute.empty() ? without_leading_barrier(stmt) : stmt;
        const auto* a = item.as<AttrStmt>();
        if (a && a->key == "double_buffer_write") {
            if (!m->compute.empty())
                fail(m->depth, m->name,
                     "the loop computes something before its fetch of '" +
                         a->value.as<Variable>()->name + "'");
            // insert_barriers may have put the loop's barriers inside the mark.
            Body inner;
            peel(a->body, &inner);
            for (const Stmt& x : inner.items) {
                if (is_barrier_stmt(x)) continue;
                m->fetches.push_back(x);
                m->tma = m->tma || is_tma_fetch(x);
                if (m->tma != is_tma_fetch(x) || (m->tma && !m->depth))
                    fail(m->depth, m->name,
                         "the shared stages computed at '" + m->loop->loop_var.name() +
                             "' are fetched differently; give every one of them tma(), or none");
            }
            continue;
        }
        if (has_mark(item) || internal::has_thread_sync(item))
            fail(m->depth, m->name,
                 "the loop it is computed at holds another shared fetch or a barrier inside its "
                 "computation; " +
                     std::string(m->depth ? "pipeline" : "double-buffer") +
                     " every shared stage computed at '" + m->loop->loop_var.name() + "'");
        m->compute.push_back(item);
    }
}

/// Variables `s` reads that it does not bind itself.
std::set<const Variable*> free_vars(const Stmt& s) {
    std::set<const Variable*> used, bound;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Variable) used.insert(static_cast<const Variable*>(n));
        if (n->node_type == IRNodeType::For)
            bound.insert(static_cast<const For*>(n)->loop_var.get());
        if (n->node_type == IRNodeType::LetStmt)
            bound.insert(static_cast<const LetStmt*>(n)->var.get());
    });
    std::set<const Variable*> out;
    for (const Variable* v : used)
        if (!bound.count(v)) out.insert(v);
    return out;
}

class Injector : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const LetStmt* op) override {
        lets_.push_back({op->var.get(), loops_.size()});
        Stmt s = IRMutator::visit(op);
        lets_.pop_back();
        return s;
    }

    Stmt visit(const For* op) override {
        loops_.push_back(op);
        Stmt s = IRMutator::visit(op);  // inner loops first
        loops_.pop_back();
        s = pipeline(s);
        auto it = tiles_.find(op);
        if (it == tiles_.end()) return s;
        const TileLoop& tile = it->second;
        if (tile.ws) {
            s = warp_specialized_block(tile, s);
        } else {
            std::vector<Stmt> items = tile.before;
            items.push_back(s);
            s = Allocate::make(tile.bar, UInt(64), {make_const(Int(32), tile.depth)},
                               StorageScope::Shared, Seq::make(items));
        }
        for (size_t k = tile.buffers.size(); k-- > 0;) {
            const Allocate* a = tile.buffers[k];
            s = Allocate::make(a->buffer_var, a->dtype, tile.extents[k], a->scope, s);
        }
        s = in_a_block(tile, s);
        tiles_.erase(it);
        return s;
    }

private:
    /// The tile loop the pipeline of `m` can run across (see TileLoop), or null: the innermost
    /// enclosing serial loop of constant bounds inside the block, only threadIdx loops between,
    /// no variable bound between it and the pipelined loop read by the fetches, and at least
    /// depth - 1 k tiles (the next tile's first copies come from this tile's last iterations;
    /// a warp-specialized pipeline's producer runs ahead by any number).
    const For* tile_loop(const Marked& m) const {
        if (!m.ws && m.n + 1 < m.depth) return nullptr;
        size_t k = loops_.size();
        while (k > 0 && loops_[k - 1]->kind == ForKind::ThreadBound &&
               loops_[k - 1]->thread_tag.rfind("threadIdx.", 0) == 0)
            --k;
        if (k < 2 || loops_[k - 1]->kind != ForKind::Serial || !as_const_int(loops_[k - 1]->min) ||
            !as_const_int(loops_[k - 1]->extent))
            return nullptr;
        bool in_block = false;
        for (size_t j = 0; j + 1 < k; ++j)
            in_block = in_block || loops_[j]->kind == ForKind::ThreadBound;
        if (!in_block) return nullptr;
        std::set<const Variable*> between;
        for (size_t j = k; j < loops_.size(); ++j) between.insert(loops_[j]->loop_var.get());
        for (const auto& [var, depth] : lets_)
            if (depth >= k) between.insert(var);
        for (const Stmt& x : m.fetches)
            for (const Variable* v : free_vars(x))
                if (between.count(v)) return nullptr;
        return loops_[k - 1];
    }

    Stmt pipeline(Stmt s) {
        Marked m;
        m.loop = s.as<For>();
        peel(m.loop->body, &m.body);
        if (m.body.buffers.empty()) return s;
        m.depth = m.body.depth;
        m.name = m.body.order.front()->name;
        if (!m.body.conflict.empty())
            fail(m.depth, m.name,
                 "shared stage '" + m.body.conflict + "' computed at the same loop '" +
                     m.loop->loop_var.name() +
                     "' is buffered differently; give every shared stage computed there the same "
                     "double_buffer() or pipeline(depth), and warp_specialize() all or none");
        auto lo = as_const_int(m.loop->min), n = as_const_int(m.loop->extent);
        if (m.loop->kind != ForKind::Serial || !lo || !n)
            fail(m.depth, m.name,
                 "it must be computed at a serial loop with constant bounds (it is at '" +
                     m.loop->loop_var.name() + "')");
        m.lo = *lo;
        m.n = *n;
        const int copies = m.depth ? m.depth : 2;
        // The buffers: find one Buffer object per allocation (from its accesses).
        std::map<const Variable*, Buffer> seen;
        post_order_visit(m.loop->body, [&](const IRNode* node) {
            if (node->node_type == IRNodeType::BufferStore) {
                const auto* st = static_cast<const BufferStore*>(node);
                seen.emplace(st->buffer->data.get(), st->buffer);
            }
        });
        for (auto& [var, d] : m.body.buffers) {
            auto it = seen.find(var);
            TESSEL_CHECK(it != seen.end()) << "multi-buffered " << var->name << " is never stored";
            d.twice = multi_buffer(it->second, copies);
        }
        take_apart(&m);
        m.ws = m.body.ws == 1;
        if (m.ws) return warp_specialized(m, copies);
        Stmt result;
        const For* tile = m.tma ? tile_loop(m) : nullptr;
        if (tile) {
            TileLoop& t = tiles_[tile];
            t.loop = tile;
            result = tma_pipelined_loop(m, &t);
            hoist_buffers(m, copies, &t);
            return result;
        } else if (m.tma) {
            result = tma_pipelined_loop(m);
        } else if (m.n == 1) {
            // Nothing to overlap: the loop as it was, without the marks.
            std::vector<Stmt> items = m.fetches;
            items.push_back(barrier_stmt());
            items.insert(items.end(), m.compute.begin(), m.compute.end());
            const For* f = m.loop;
            result =
                Retarget(m.body.buffers, make_const(Int(32), 0))
                    .mutate(For::make(f->loop_var, f->min, f->extent, f->kind, Seq::make(items)));
        } else {
            result = m.depth ? pipelined_loop(m) : double_buffer_loop(m);
        }
        // Innermost first, so that the allocations nest as they did (deterministic IR: the map
        // is ordered by address).
        for (auto it = m.body.order.rbegin(); it != m.body.order.rend(); ++it) {
            const Doubled& d = m.body.buffers.at(*it);
            std::vector<Expr> extents = d.alloc->extents;
            extents.insert(extents.begin(), make_const(extents[0].type(), copies));
            result = Allocate::make(d.alloc->buffer_var, d.alloc->dtype, extents, d.alloc->scope,
                                    result);
        }
        return result;
    }

    /// A warp-specialized pipeline (WarpSpecialized): the consumers' loop; the block around the
    /// consumers' region (the tile loop, else the outermost loop inside the block) is built when
    /// the visit returns to that loop.
    Stmt warp_specialized(const Marked& m, int copies) {
        auto refuse = [&](const std::string& why) {
            fail(m.depth, m.name, "warp_specialize: " + why);
        };
        if (!m.tma) refuse("it is not fetched by tma()");
        // The consumers' region: the tile loop, else the outermost loop inside the block (a
        // kernel without blockIdx loops is one block: its outermost thread loop).
        std::optional<size_t> at, first_thread;
        for (size_t j = 0; j < loops_.size(); ++j) {
            if (loops_[j]->kind != ForKind::ThreadBound) continue;
            if (loops_[j]->thread_tag.rfind("blockIdx.", 0) == 0) at = j + 1;
            if (!first_thread && loops_[j]->thread_tag.rfind("threadIdx.", 0) == 0)
                first_thread = j;
        }
        const bool own_block = !at;
        if (!at) at = first_thread;
        if (!first_thread || *at >= loops_.size())
            refuse("the loop it is computed at is not inside a GPU block's thread loops");
        const For* tile = tile_loop(m);
        while (tile && loops_[*at] != tile) ++*at;
        const std::array<int64_t, 3> dims = block_threads(refuse);
        check_producer_inputs(m, *at, tile, refuse);
        TileLoop& t = tiles_[loops_[*at]];
        if (t.loop) refuse("the block has another warp-specialized pipeline");
        t.loop = loops_[*at];
        t.depth = m.depth;
        t.bar = Var(m.name + ".full", Handle());
        WarpSpecialized w;
        w.empty = Var(m.name + ".empty", Handle());
        w.consumers = dims[2];
        w.own_block = own_block;
        share_registers(&w);
        Stmt result = warp_specialized_loop(m, tile, t.bar, &w);
        t.ws = w;
        hoist_buffers(m, copies, &t);
        return result;
    }

    /// The block's thread extents (x, y, z), checked for warp groups along threadIdx.z: x * y
    /// = 128 threads each.
    template <class Refuse>
    std::array<int64_t, 3> block_threads(const Refuse& refuse) const {
        std::array<int64_t, 3> dims = {1, 1, 1};
        for (const For* f : loops_) {
            if (f->kind != ForKind::ThreadBound || f->thread_tag.rfind("threadIdx.", 0) != 0)
                continue;
            auto extent = as_const_int(f->extent);
            if (!extent) refuse("the block's thread extents are not constant");
            int64_t& d = dims[static_cast<size_t>(f->thread_tag.back() - 'x')];
            d = std::max(d, *extent);
        }
        if (dims[0] * dims[1] != 128)
            refuse(
                "the consumers' warp groups lie along threadIdx.z, each threadIdx.x * "
                "threadIdx.y = 128 threads; the block has " +
                std::to_string(dims[0]) + " x " + std::to_string(dims[1]));
        return dims;
    }

    /// Refuses copies that read a variable the consumers' region binds (its loops from `at`, but
    /// the tile and k loops the producer runs too, and the lets inside): the producer warp group
    /// runs the block's loops above the region only.
    template <class Refuse>
    void check_producer_inputs(const Marked& m, size_t at, const For* tile,
                               const Refuse& refuse) const {
        std::set<const Variable*> inside;
        for (size_t j = at; j < loops_.size(); ++j) inside.insert(loops_[j]->loop_var.get());
        if (tile) inside.erase(tile->loop_var.get());
        inside.erase(m.loop->loop_var.get());
        for (const auto& [var, depth] : lets_)
            if (depth > at) inside.insert(var);
        for (const Stmt& x : m.fetches)
            for (const Variable* v : free_vars(x))
                if (inside.count(v))
                    refuse("its copy reads '" + v->name +
                           "', which the consumers' loops bind; the producer warp group cannot "
                           "compute it");
    }

    /// setmaxnreg's counts: the producer down to 40 registers a thread, the consumers up to what
    /// the register file leaves them (a multiple of 8, at most 256), where that beats the even
    /// share; else both keep the even share.
    static void share_registers(WarpSpecialized* w) {
        constexpr int kProducerRegisters = 40;
        const int64_t consumer = std::min<int64_t>(
            256, (65536 - 128 * kProducerRegisters) / (128 * w->consumers) / 8 * 8);
        if (consumer > even_register_share(128 * (w->consumers + 1))) {
            w->producer_registers = kProducerRegisters;
            w->consumer_registers = static_cast<int>(consumer);
        }
    }

    std::vector<const For*> loops_;  ///< the loops around the one visited, outermost first
    std::vector<std::pair<const Variable*, size_t>>
        lets_;                              ///< lets around it, and loops_'s size then
    std::map<const For*, TileLoop> tiles_;  ///< tile loops whose pipelines run across them
};

/// A pipeline whose loop was simplified away (one iteration) with tma() fetches: the copies
/// issued into the single buffer, then awaited on one mbarrier, then the computation.
Stmt tma_without_loop(const AttrStmt* scope) {
    Body body;
    peel(Stmt(scope), &body);
    std::vector<Stmt> fetches, rest;
    for (const Stmt& item : body.items) {
        const auto* a = item.as<AttrStmt>();
        if (a && a->key == "double_buffer_write") {
            Body inner;
            peel(a->body, &inner);
            for (const Stmt& x : inner.items)
                if (!is_barrier_stmt(x)) fetches.push_back(x);
        } else {
            rest.push_back(item);
        }
    }
    if (fetches.empty() || !is_tma_fetch(fetches[0])) return Stmt();
    Var bar(body.order.front()->name + ".mbar", Handle());
    std::vector<std::pair<Stmt, int64_t>> copies;
    for (const Stmt& x : fetches) {
        const auto* a = x.as<AttrStmt>();
        if (!a || a->key != "tma_copy")
            fail(1, a ? a->value.as<Variable>()->name : "?", "mixes tma() and cp.async fetches");
        int64_t elems = 1;
        for (const Expr& e : body.buffers.at(a->value.as<Variable>()).alloc->extents)
            elems *= as_const_int(e).value();
        copies.push_back({x, elems});
    }
    std::vector<Stmt> out = init_mbarriers(bar, 1);
    out.push_back(issue_boxes(copies, bar, make_zero(Int(32))));
    out.push_back(
        call_stmt(Intrinsic::mbarrier_wait, {bar, make_zero(Int(32)), make_zero(Int(32))}));
    out.insert(out.end(), rest.begin(), rest.end());
    Stmt result =
        Allocate::make(bar, UInt(64), {make_one(Int(32))}, StorageScope::Shared, Seq::make(out));
    for (auto it = body.order.rbegin(); it != body.order.rend(); ++it) {
        const Allocate* a = body.buffers.at(*it).alloc;
        result = Allocate::make(a->buffer_var, a->dtype, a->extents, a->scope, result);
    }
    return result;
}

/// Removes the marks left where no loop was pipelined (a loop of one iteration is simplified
/// away before this pass); tma() fetches there are still TMA copies (tma_without_loop).
class StripMarks : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const AttrStmt* op) override {
        if (is_pipeline_scope(op->key)) {
            Stmt tma = tma_without_loop(op);
            if (tma.defined()) return mutate(tma);
        }
        if (op->key == "double_buffer_scope" || op->key == "double_buffer_write" ||
            is_pipeline_scope(op->key) || op->key == "tma_copy")
            return mutate(op->body);
        return IRMutator::visit(op);
    }
};

}  // namespace

Stmt inject_double_buffer(const Stmt& s) {
    return StripMarks().mutate(Injector().mutate(s));
}

}  // namespace tessel
