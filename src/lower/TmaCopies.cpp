// TmaCopies: see the header.
#include "TmaCopies.h"

#include <optional>
#include <utility>

#include "PassUtil.h"
#include "tessel/Error.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/StorageFlatten.h"

namespace tessel::internal {

namespace {

/// A fetch (global tensor -> shared tile) or a store (shared tile -> global tensor) taken apart:
/// its loops (outermost first), guards, and the two sides of the copy.
struct Copy {
    std::vector<const For*> loops;
    std::vector<Expr> guards;
    Buffer tile;  ///< the shared side
    std::vector<Expr> tile_indices;
    Buffer tensor;  ///< the global side
    std::vector<Expr> tensor_indices;
};

/// The one statement of `q` that is not a thread_barrier (undefined if there are more).
Stmt without_barriers(const Seq* q) {
    Stmt only;
    for (const Stmt& x : q->stmts) {
        if (is_barrier_stmt(x)) continue;
        if (only.defined()) return Stmt();
        only = x;
    }
    return only;
}

class TmaBuilder {
public:
    TmaBuilder(std::string stage, bool store) : stage_(std::move(stage)), store_(store) {}

    [[noreturn]] void fail(const std::string& why) const {
        if (store_) TESSEL_THROW(ScheduleError) << "tma_store: stage '" << stage_ << "': " << why;
        TESSEL_THROW(ScheduleError) << "tma: shared stage '" << stage_ << "': " << why;
    }

    /// "fetch" or "copy": what the messages call the nest.
    const char* nest() const { return store_ ? "copy" : "fetch"; }

    Copy take_apart(Stmt s) const {
        Copy c;
        for (;;) {
            if (const auto* f = s.as<For>()) {
                if (!as_const_int(f->extent) || !is_zero(f->min) || f->kind != ForKind::Serial)
                    fail(std::string("its ") + nest() +
                         " has a loop that is not a serial loop of constant extent from 0");
                c.loops.push_back(f);
                s = f->body;
            } else if (const auto* l = s.as<LetStmt>()) {
                s = substitute(l->body, l->var, l->value);
            } else if (const auto* g = s.as<IfThenElse>(); g && !g->else_case.defined()) {
                c.guards.push_back(g->condition);
                s = g->then_case;
            } else if (const auto* a = s.as<AttrStmt>()) {
                s = a->body;
            } else if (const auto* q = s.as<Seq>(); q && without_barriers(q).defined()) {
                s = without_barriers(q);  // insert_barriers' barrier before the fetch
            } else {
                break;
            }
        }
        const auto* store = s.as<BufferStore>();
        if (!store) fail(std::string("its ") + nest() + " is not a loop nest around one store");
        Expr value = store->value;
        if (const auto* call = value.as<Call>();
            !store_ && call && call->op == Intrinsic::if_then_else) {
            auto zero = as_const_float(call->args[2]);
            if (!(zero && *zero == 0.0) && !is_zero(call->args[2]))
                fail("its fetch fills the tile's padding with something other than zero");
            c.guards.push_back(call->args[0]);
            value = call->args[1];
        }
        const auto* load = value.as<BufferLoad>();
        const StorageScope from = store_ ? StorageScope::Shared : StorageScope::Global;
        if (!load || load->buffer->scope != from)
            fail(store_ ? "it is not a plain copy of a shared stage (" + to_string(value) +
                              "); a TMA store moves elements as they are (cache_write the stage "
                              "into \"shared\" and compute the rest there)"
                        : "its fetch is not a plain copy of a global tensor (" + to_string(value) +
                              "); a TMA copy moves elements as they are");
        if (store_ && store->buffer->scope != StorageScope::Global)
            fail("it stores into " + store->buffer->name + ", which is not global memory");
        if (load->buffer->dtype != store->buffer->dtype)
            fail(std::string("its ") + nest() + " converts " + load->buffer->dtype.str() + " to " +
                 store->buffer->dtype.str());
        c.tile = store_ ? load->buffer : store->buffer;
        c.tile_indices = store_ ? load->indices : store->indices;
        c.tensor = store_ ? store->buffer : load->buffer;
        c.tensor_indices = store_ ? store->indices : load->indices;
        return c;
    }

    /// For each source dimension, the fetch loop running along it (-1: none, the box is 1 wide).
    std::vector<int> loop_of_dims(const Copy& c) const {
        std::vector<int> out;
        std::vector<bool> used(c.loops.size(), false);
        for (const Expr& idx : c.tensor_indices) {
            Expr d = simplify(idx - at_origin(c, idx));
            int which = -1;
            for (size_t k = 0; k < c.loops.size(); ++k)
                if (d.same_as(c.loops[k]->loop_var) ||
                    (d.as<Variable>() && d.as<Variable>() == c.loops[k]->loop_var.get()))
                    which = static_cast<int>(k);
            if (which < 0 && !is_zero(d))
                fail(std::string("its ") + nest() + (store_ ? " writes " : " reads ") +
                     c.tensor->name + " at " + to_string(idx) +
                     ", not at the tile's origin plus one of the tile's loops (a box covers "
                     "consecutive elements along each dimension)");
            if (which >= 0 && used[which])
                fail("two dimensions of its tensor run along one loop of the tile");
            if (which >= 0) used[which] = true;
            out.push_back(which);
        }
        for (size_t k = 0; k < used.size(); ++k)
            if (!used[k])
                fail("its loop '" + c.loops[k]->loop_var.name() +
                     "' runs along no dimension of the tensor (the tile repeats elements)");
        return out;
    }

    static Expr at_origin(const Copy& c, const Expr& e) {
        VarMap zero;
        for (const For* f : c.loops) zero[f->loop_var.get()] = make_zero(f->loop_var.type());
        return simplify(substitute(e, zero));
    }

    /// The tile's unswizzled storage offset of the element at the loops' values `at`.
    std::optional<int64_t> offset(const Copy& c, const std::vector<int64_t>& at) const {
        VarMap m;
        for (size_t k = 0; k < c.loops.size(); ++k)
            m[c.loops[k]->loop_var.get()] = make_const(c.loops[k]->loop_var.type(), at[k]);
        Expr f = unswizzled_flat_index(c.tile, c.tile_indices);
        return as_const_int(simplify(substitute(f, m)));
    }

    std::string stage_;
    bool store_ = false;
};

/// TMA reads rows whose byte strides are multiples of 16: a source whose constant shape gives
/// another stride cannot be fetched so (a symbolic one is checked at launch).
void check_row_strides(const TmaBuilder& b, const Buffer& src, int64_t size) {
    int64_t stride = size;
    for (size_t d = src->shape.size(); d-- > 1;) {
        std::optional<int64_t> extent = as_const_int(src->shape[d]);
        if (!src->strides.empty()) extent.reset();
        if (!extent) return;
        stride *= *extent;
        if (stride % 16 != 0)
            b.fail("its tensor " + src->name + " has rows of " + std::to_string(stride) +
                   " bytes along dimension " + std::to_string(d - 1) +
                   ", not a multiple of 16: TMA cannot copy it (schedule this shape without "
                   "TMA)");
    }
}

/// `e` is one of the source's bounds, `idx < extent` or `idx >= 0` (TMA's zero fill covers it):
/// as `u < 0` with u equal to idx - extent or -idx - 1.
bool is_bound_of(const Expr& cond, const Copy& c) {
    Expr u;
    if (const auto* c = cond.as<LT>()) u = c->a - c->b;
    if (const auto* c = cond.as<LE>()) u = c->a - c->b - 1;
    if (const auto* c = cond.as<GT>()) u = c->b - c->a;
    if (const auto* c = cond.as<GE>()) u = c->b - c->a - 1;
    if (!u.defined()) return false;
    for (size_t d = 0; d < c.tensor_indices.size(); ++d) {
        const Expr& idx = c.tensor_indices[d];
        Expr extent = cast(idx.type(), c.tensor->shape[d]);
        if (is_zero(simplify(u - (idx - extent))) || is_zero(simplify(u - (0 - idx - 1))))
            return true;
    }
    return false;
}

void conjuncts(const Expr& e, std::vector<Expr>* out) {
    if (const auto* a = e.as<And>()) {
        conjuncts(a->a, out);
        conjuncts(a->b, out);
    } else if (const auto* c = e.as<Call>(); c && c->op == Intrinsic::likely) {
        conjuncts(c->args[0], out);
    } else if (!is_one(e)) {
        out->push_back(e);
    }
}

/// The boxes of a copy: the swizzle, the box (innermost first) and, per box, where it starts in
/// the tile and its coordinates in the tensor (innermost first).
struct Boxes {
    int swizzle = 0;
    int64_t align = 128;  ///< bytes: a box's start in shared memory (TMA's alignment)
    std::vector<int64_t> box;
    std::vector<int64_t> bases;
    std::vector<std::vector<Expr>> coords;
    int64_t elems() const {
        int64_t n = 1;
        for (int64_t e : box) n *= e;
        return n;
    }
};

Boxes boxes_of(const TmaBuilder& b, const Copy& c) {
    for (const Expr& g : c.guards) {
        std::vector<Expr> terms;
        conjuncts(g, &terms);
        for (const Expr& t : terms)
            if (!is_bound_of(t, c))
                b.fail(std::string("its ") + b.nest() + " is guarded by " + to_string(t) +
                       ", which is not a bound of the tensor (TMA " +
                       (b.nest()[0] == 'c' ? "skips elements" : "reads zeros") +
                       " only past the tensor's edges)");
    }
    const std::vector<int> loop_of = b.loop_of_dims(c);
    const int rank = static_cast<int>(loop_of.size());
    if (rank < 1 || rank > 5)
        b.fail("its tensor has " + std::to_string(rank) + " dimensions (TMA: 1 to 5)");
    const int64_t size = c.tile->dtype.bytes();
    check_row_strides(b, c.tensor, size);
    // Extents innermost first, and the loop each runs along.
    std::vector<int64_t> extent(rank, 1);
    std::vector<int> loop(rank, -1);
    for (int t = 0; t < rank; ++t) {
        loop[t] = loop_of[rank - 1 - t];
        if (loop[t] >= 0) extent[t] = *as_const_int(c.loops[loop[t]]->extent);
    }
    const size_t nloops = c.loops.size();
    auto point = [&](int t, int64_t v, std::vector<int64_t> at) {
        if (loop[t] >= 0) at[loop[t]] = v;
        return at;
    };
    const std::vector<int64_t> origin(nloops, 0);
    // The box's width: the widest divisor of the inner extent along which the layout is dense.
    auto dense = [&](int64_t w, int64_t q) {
        std::optional<int64_t> base = b.offset(c, point(0, q * w, origin));
        if (!base) return false;
        for (int64_t x = 1; x < w; ++x)
            if (b.offset(c, point(0, q * w + x, origin)) != *base + x) return false;
        int64_t stride = w;
        for (int t = 1; t < rank; ++t) {
            for (int64_t k = 1; k < extent[t]; ++k)
                if (b.offset(c, point(t, k, point(0, q * w, origin))) != *base + k * stride)
                    return false;
            stride *= extent[t];
        }
        return true;
    };
    int64_t w = extent[0];
    while (w > 0 && (extent[0] % w != 0 || !dense(w, 0))) --w;
    if (w == 0 || w * size % 16 != 0)
        b.fail("its layout is dense for " + std::to_string(w * size) +
               " bytes along the tensor's innermost dimension (a TMA box needs rows of a multiple "
               "of 16 bytes, each row's tile elements consecutive; padded rows (storage_align) "
               "cannot be copied by TMA)");
    for (int t = 1; t < rank; ++t)
        if (extent[t] > 256)
            b.fail("its tile is " + std::to_string(extent[t]) +
                   " elements along a dimension; a TMA box is at most 256");
    if (w > 256) w = 256;  // a box of at most 256 elements, each of them dense
    while (extent[0] % w != 0) --w;
    Boxes out;
    const BufferSwizzle& z = c.tile->swizzle;
    if (z.defined()) {
        if (z.vector * size != 16 || z.span * size != 128 || z.phases * 16 != w * size ||
            (z.phases != 2 && z.phases != 4 && z.phases != 8))
            b.fail(
                "its swizzle is not one TMA copies: rows of 32, 64 or 128 bytes swizzled by "
                "storage_swizzle() (bits 3), each row one box row of the tensor (the rows "
                "here are " +
                std::to_string(w * size) + " bytes)");
        out.swizzle = static_cast<int>(z.phases * 16);
    }
    out.align = out.swizzle ? 8 * out.swizzle : 128;
    out.box = extent;
    out.box[0] = w;
    for (int64_t q = 0; q < extent[0] / w; ++q) {
        if (q > 0 && !dense(w, q))
            b.fail("its layout is not dense within box " + std::to_string(q) + " of " +
                   std::to_string(w) + " elements a row");
        const int64_t base = *b.offset(c, point(0, q * w, origin));
        if (base * size % out.align != 0)
            b.fail("its box " + std::to_string(q) + " starts " + std::to_string(base * size) +
                   " bytes into the tile, not a multiple of " + std::to_string(out.align) +
                   " (TMA's shared-memory alignment" +
                   (out.swizzle ? " for the swizzle's 8-row cycle)" : ")"));
        std::vector<Expr> coords;
        for (int t = 0; t < rank; ++t) {
            Expr coord = TmaBuilder::at_origin(c, c.tensor_indices[rank - 1 - t]);
            if (t == 0 && q > 0) coord = coord + make_const(coord.type(), q * w);
            coords.push_back(simplify(cast(Int(32), coord)));
        }
        out.bases.push_back(base);
        out.coords.push_back(std::move(coords));
    }
    return out;
}

/// A tma_load's or tma_store's arguments after its first `head`: the swizzle, rank, box and
/// coordinates of box `q`.
std::vector<Expr> box_args(const Boxes& x, size_t q, std::vector<Expr> head) {
    head.push_back(make_const(Int(32), x.swizzle));
    head.push_back(make_const(Int(32), static_cast<int64_t>(x.box.size())));
    for (int64_t e : x.box) head.push_back(make_const(Int(32), e));
    for (const Expr& e : x.coords[q]) head.push_back(e);
    return head;
}

}  // namespace

TmaFetch tma_copies(const Stmt& nest, const std::string& stage, const Expr& copy,
                    int64_t copy_elems, const Var& bar) {
    TmaBuilder b(stage, false);
    const Copy c = b.take_apart(nest);
    const Boxes x = boxes_of(b, c);
    const int64_t size = c.tile->dtype.bytes();
    if (copy_elems * size % x.align != 0)
        b.fail("its tile is " + std::to_string(copy_elems * size) + " bytes, not a multiple of " +
               std::to_string(x.align) +
               ": the pipeline's copies of it would not all start aligned for TMA");
    const Expr offset = cast(Int(32), copy) * make_const(Int(32), copy_elems);
    std::vector<Stmt> calls;
    for (size_t q = 0; q < x.bases.size(); ++q)
        calls.push_back(call_stmt(Intrinsic::tma_load,
                                  box_args(x, q,
                                           {c.tile->data, offset + make_const(Int(32), x.bases[q]),
                                            c.tensor->data, bar, cast(Int(32), copy)})));
    return {calls.size() == 1 ? calls[0] : Seq::make(calls),
            static_cast<int64_t>(x.bases.size()) * x.elems() * size};
}

Stmt tma_stores(const Stmt& nest, const std::string& stage) {
    TmaBuilder b(stage, true);
    const Copy c = b.take_apart(nest);
    const Boxes x = boxes_of(b, c);
    std::vector<Stmt> calls;
    for (size_t q = 0; q < x.bases.size(); ++q)
        calls.push_back(call_stmt(
            Intrinsic::tma_store,
            box_args(x, q, {c.tile->data, make_const(Int(32), x.bases[q]), c.tensor->data})));
    calls.push_back(call_stmt(Intrinsic::tma_store_wait));
    return Seq::make(calls);
}

Stmt on_first_thread(const Stmt& body) {
    Stmt s = body;
    for (const char* tag : {"threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
        std::string name = std::string("tma.") + tag[10];
        s = For::make(Var(name, Int(32)), make_zero(Int(32)), make_one(Int(32)),
                      ForKind::ThreadBound, s, tag);
    }
    return s;
}

}  // namespace tessel::internal
