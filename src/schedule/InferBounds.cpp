// Bound inference (see include/tessel/schedule/InferBounds.h).
#include "tessel/schedule/InferBounds.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "ScheduleInternal.h"
#include "tessel/arith/Interval.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/schedule/TensorIntrin.h"
#include "tessel/te/Operation.h"

namespace tessel {

using internal::schedule_fail;

namespace {

// Replaces reads of inlined tensors by their (already inlined) bodies.
class InlineReads : public IRMutator {
public:
    InlineReads(const Schedule& s, const std::vector<std::vector<Expr>>& bodies)
        : s_(s), bodies_(bodies) {}
    using IRMutator::visit;

protected:
    Expr visit(const TensorRead* op) override {
        Expr e = IRMutator::visit(op);
        const auto* read = e.as<TensorRead>();
        int stage = s_.stage_of(read->tensor);
        if (s_.stages()[stage].attach != AttachKind::Inlined) return e;
        const ComputeOpNode* c = as_compute(s_.stages()[stage].op);
        VarMap map;
        for (size_t d = 0; d < c->axis.size(); ++d) {
            Expr index = read->indices[d];
            if (index.type() != c->axis[d].var().type())
                index = Cast::make(c->axis[d].var().type(), index);
            map[c->axis[d].var().get()] = index;
        }
        return substitute(bodies_[stage][read->tensor.value_index()], map);
    }

private:
    const Schedule& s_;
    const std::vector<std::vector<Expr>>& bodies_;
};

// Every read of stage `producer`'s outputs in `body`.
std::vector<const TensorRead*> reads_of(const Expr& body, const Operation& producer) {
    std::vector<const TensorRead*> reads;
    post_order_visit(body, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::TensorRead) return;
        const auto* r = static_cast<const TensorRead*>(n);
        if (r->tensor.op().same_as(producer)) reads.push_back(r);
    });
    return reads;
}

// A constant upper bound of hi - lo: distributes the difference into min/max/additions so that
// `min(io*8 + 7, 28) + 2 - io*8` is bounded by 9, not by the loose bound of each end.
std::optional<int64_t> difference_upper_bound(const Expr& hi, const Expr& lo, const Scope& scope,
                                              int depth = 0) {
    if (depth < 8) {
        if (const auto* m = hi.as<Min>()) {
            auto a = difference_upper_bound(m->a, lo, scope, depth + 1);
            auto b = difference_upper_bound(m->b, lo, scope, depth + 1);
            if (a && b) return std::min(*a, *b);
            return a ? a : b;
        }
        if (const auto* m = hi.as<Max>()) {
            auto a = difference_upper_bound(m->a, lo, scope, depth + 1);
            auto b = difference_upper_bound(m->b, lo, scope, depth + 1);
            if (a && b) return std::max(*a, *b);
            return std::nullopt;
        }
        if (const auto* add = hi.as<Add>()) {
            if (auto c = as_const_int(add->b)) {
                auto d = difference_upper_bound(add->a, lo, scope, depth + 1);
                if (d) return *d + *c;
            }
        }
        if (const auto* ma = hi.as<Mul>(), *mb = lo.as<Mul>(); ma && mb) {  // a*c - b*c
            auto ca = as_const_int(ma->b), cb = as_const_int(mb->b);
            if (ca && cb && *ca == *cb && *ca > 0) {
                auto d = difference_upper_bound(ma->a, mb->a, scope, depth + 1);
                if (d) return *d * *ca;
            }
        }
        if (const auto* m = lo.as<Max>()) {  // hi - max(a, b) <= hi - a and hi - b
            auto a = difference_upper_bound(hi, m->a, scope, depth + 1);
            auto b = difference_upper_bound(hi, m->b, scope, depth + 1);
            if (a && b) return std::min(*a, *b);
            return a ? a : b;
        }
    }
    return const_bounds_of(simplify(Sub::make(hi, lo)), scope).max;
}

// A constant bound of the extent `hi - lo + 1` over the scope, or undefined.
Expr extent_upper_bound(const Expr& lo, const Expr& hi, const Scope& scope) {
    Expr extent = simplify(Add::make(Sub::make(hi, lo), make_one(lo.type())));
    if (as_const_int(extent)) return extent;
    auto d = difference_upper_bound(hi, lo, scope);
    // A bound at the type's limit comes from a variable the scope does not bound: no bound.
    if (!d || *d >= lo.type().max_int()) return Expr();
    return make_const(lo.type(), std::max<int64_t>(*d + 1, 1));
}

Scope leaf_scope(const Stage& st, const StageBounds& b);

class BoundInference {
public:
    explicit BoundInference(const Schedule& s)
        : s_(s), bodies_(inlined_bodies(s)), out_(s.stages().size()) {}

    std::vector<StageBounds> run() {
        state_.assign(s_.stages().size(), 0);
        for (int i = static_cast<int>(s_.stages().size()) - 1; i >= 0; --i) ensure(i);
        return std::move(out_);
    }

private:
    void ensure(int i);
    void infer_stage(int i);
    void infer_region(int i);
    void infer_region_after(int i);
    void derive_loops(int i);
    Interval consumer_root_interval(int c, int target, size_t r, const Scope& inner, bool clamp);
    Scope inner_scope(int target, int attach_pos, bool shared);
    Scope enclosing_scope(int target);

    const Schedule& s_;
    std::vector<std::vector<Expr>> bodies_;
    std::vector<StageBounds> out_;
    std::vector<int> state_;  // per stage: 0 not inferred, 1 under way, 2 done
};

// Infers stage i after what its bounds depend on: a stage computed at a loop after its readers
// and every stage its target is computed inside; one computed by reverse_compute_at after its
// target (a producer, whose region does not depend on it). Stage order (readers after what they
// read) gives the first; the second goes against it.
void BoundInference::ensure(int i) {
    if (state_[i] == 2) return;
    if (state_[i] == 1)
        schedule_fail(s_, "lower", i, "its bounds depend on themselves (a cycle of attachments)");
    state_[i] = 1;
    const Stage& st = s_.stages()[i];
    if (st.attach == AttachKind::At) {
        if (!st.attach_after)
            for (int c : internal::consumers_of(s_, i)) ensure(c);
        ensure(st.attach_stage);
    }
    infer_stage(i);
    state_[i] = 2;
}

void BoundInference::infer_stage(int i) {
    const Stage& st = s_.stages()[i];
    StageBounds& b = out_[i];
    const ComputeOpNode* c = as_compute(st.op);
    if (!c) {
        const PlaceholderOpNode* p = as_placeholder(st.op);
        for (const Expr& e : p->shape) {
            b.region_min.push_back(make_zero(e.type()));
            b.region_extent.push_back(e);
            b.storage_extent.push_back(e);
        }
        return;
    }
    if (st.attach == AttachKind::At && st.attach_after) {
        infer_region_after(i);
    } else if (st.attach == AttachKind::At) {
        infer_region(i);
    } else {
        for (size_t r = 0; r < st.root.size(); ++r) {
            const Range& dom =
                r < c->axis.size() ? c->axis[r].dom() : c->reduce_axis[r - c->axis.size()].dom();
            b.region_min.push_back(dom.min);
            b.region_extent.push_back(dom.extent);
        }
    }
    derive_loops(i);
}

// The scope of target's leaf loops strictly inside position `attach_pos`: they run during one
// iteration of the attach loop.
// A shared-scope stage holds what every thread of the block needs: the threadIdx and vthread
// loops outside the attach point, the target's and those of the stages it is computed inside,
// are relaxed too.
Scope BoundInference::inner_scope(int target, int attach_pos, bool shared) {
    Scope scope;
    const Stage& t = s_.stages()[target];
    const StageBounds& tb = out_[target];
    for (size_t pos = 0; pos < t.leaf.size(); ++pos) {
        int id = t.leaf[pos];
        IterAnnotation a = t.iters[id].annotation;
        bool per_thread = a == IterAnnotation::VThread || is_thread_axis(a);
        if (static_cast<int>(pos) <= attach_pos && !(shared && per_thread)) continue;
        scope[tb.iter_vars[id].get()] = Interval(
            make_zero(tb.iter_extents[id].type()),
            simplify(Sub::make(tb.iter_extents[id], make_one(tb.iter_extents[id].type()))));
    }
    if (!shared) return scope;
    // ... and so are the thread loops of every stage the target is computed inside: a shared
    // stage computed inside a thread's loops is filled by all threads of the block together.
    for (int a = t.attach == AttachKind::At ? t.attach_stage : -1, hops = 0;
         a >= 0 && hops <= static_cast<int>(s_.stages().size()); ++hops) {
        const Stage& as = s_.stages()[a];
        const StageBounds& ab = out_[a];
        for (int id : as.leaf) {
            IterAnnotation an = as.iters[id].annotation;
            if (an != IterAnnotation::VThread && !is_thread_axis(an)) continue;
            scope[ab.iter_vars[id].get()] = Interval(
                make_zero(ab.iter_extents[id].type()),
                simplify(Sub::make(ab.iter_extents[id], make_one(ab.iter_extents[id].type()))));
        }
        a = as.attach == AttachKind::At ? as.attach_stage : -1;
    }
    return scope;
}

// The loops of `target` and of every stage it is computed inside, over their whole range: the
// variables that a region attached inside `target` may depend on.
Scope BoundInference::enclosing_scope(int target) {
    Scope scope;
    for (int t = target, hops = 0; t >= 0 && hops <= static_cast<int>(s_.stages().size()); ++hops) {
        const Stage& st = s_.stages()[t];
        for (const auto& [var, interval] : leaf_scope(st, out_[t])) scope.emplace(var, interval);
        t = st.attach == AttachKind::At ? st.attach_stage : -1;
    }
    return scope;
}

// Of two bounds of the same values, the one whose extent has the smaller constant bound over
// `outer` (the first when neither has one).
Interval tighter(const Interval& a, const Interval& b, const Scope& outer) {
    if (!b.is_bounded()) return a;
    if (!a.is_bounded()) return b;
    Expr ea = extent_upper_bound(simplify(a.min), simplify(a.max), outer);
    Expr eb = extent_upper_bound(simplify(b.min), simplify(b.max), outer);
    if (!eb.defined()) return a;
    if (!ea.defined()) return b;
    return *as_const_int(eb) < *as_const_int(ea) ? b : a;
}

// The interval of consumer c's root axis r over `inner` (the loops inside the attach point);
// `clamp`: intersected with the consumer's computed region (a padded tile producer is not).
Interval BoundInference::consumer_root_interval(int c, int target, size_t r, const Scope& inner,
                                                bool clamp) {
    const StageBounds& cb = out_[c];
    // The last point c reads at (round-up splits compute past it but read at it, read_values).
    Expr end = cb.region_extent[r];
    Type t = cb.region_min[r].type();
    Expr dom_max = simplify(Sub::make(Add::make(cb.region_min[r], end), make_one(t)));
    if (c != target) {
        // c is computed inside the target's attach loop: its region, over the target's inner loops.
        Interval lo = bounds_of(cb.region_min[r], inner), hi = bounds_of(dom_max, inner);
        return Interval(lo.min, hi.max);
    }
    Interval v = bounds_of(cb.read_values[r], inner);
    if (!clamp) return v;
    // Guards keep the consumer inside its domain; round-up splits compute past it. The domain is
    // relaxed over `inner` too (a shared stage covers every thread's region).
    return interval_intersect(
        v, Interval(bounds_of(cb.region_min[r], inner).min, bounds_of(dom_max, inner).max));
}

void BoundInference::infer_region(int i) {
    const Stage& st = s_.stages()[i];
    const ComputeOpNode* pc = as_compute(st.op);
    int target = st.attach_stage;
    const Stage& t = s_.stages()[target];
    int attach_pos =
        static_cast<int>(std::find(t.leaf.begin(), t.leaf.end(), st.attach_iter) - t.leaf.begin());
    if (attach_pos >= static_cast<int>(t.leaf.size()))
        schedule_fail(s_, "lower", i, "its attach loop is no longer a leaf of '" + t.name() + "'");
    Scope inner = inner_scope(target, attach_pos, st.scope == StorageScope::Shared);
    // A padded tile: a stage inside a GPU kernel (its storage is shared or local) that is not
    // one of the kernel's outputs.
    const bool padded = !st.is_output && internal::computed_inside_kernel(s_, i);
    std::vector<Interval> region(pc->axis.size());
    std::vector<bool> seen(pc->axis.size(), false);
    Scope outer = enclosing_scope(target);  // loops the region may depend on, whole ranges
    for (int c : internal::consumers_of(s_, i)) {
        const Stage& cs = s_.stages()[c];
        if (c != target && !(cs.attach == AttachKind::At && cs.attach_stage == target)) {
            schedule_fail(s_, "lower", i,
                          "it is computed at '" + t.name() + "' but also read by '" + cs.name() +
                              "', which is not computed directly inside '" + t.name() + "'");
        }
        if (c != target) {
            int cpos = static_cast<int>(std::find(t.leaf.begin(), t.leaf.end(), cs.attach_iter) -
                                        t.leaf.begin());
            if (cpos < attach_pos)
                schedule_fail(
                    s_, "lower", i,
                    "its consumer '" + cs.name() + "' is computed outside its attach loop");
        }
        const ComputeOpNode* cc = as_compute(cs.op);
        Scope scope;
        // Where the target fuses loops, a read index is also bounded with the target's root axes
        // written as its leaves' digits (n = f / 49, y = f / 7 % 7, x = f % 7) and simplified:
        // n * 49 + y * 7 + x is f again, a tile of f a tile of the read, where bounding n, y and
        // x one by one gives every row the tile touches.
        const bool fused = std::any_of(cs.relations.begin(), cs.relations.end(), [](auto& rel) {
            return rel.kind == IterRelation::Kind::Fuse;
        });
        VarMap at_leaves;
        for (size_t r = 0; r < cs.root.size(); ++r) {
            const Var& v = r < cc->axis.size() ? cc->axis[r].var()
                                               : cc->reduce_axis[r - cc->axis.size()].var();
            scope[v.get()] = consumer_root_interval(c, target, r, inner, !padded);
            if (c == target && fused) at_leaves[v.get()] = out_[c].read_values[r];
        }
        for (const Expr& body : bodies_[c]) {
            for (const TensorRead* read : reads_of(body, st.op)) {
                for (size_t d = 0; d < read->indices.size(); ++d) {
                    Interval iv = bounds_of(read->indices[d], scope);
                    if (!at_leaves.empty())
                        iv = tighter(
                            iv, bounds_of(simplify(substitute(read->indices[d], at_leaves)), inner),
                            outer);
                    region[d] = seen[d] ? interval_union(region[d], iv) : iv;
                    seen[d] = true;
                }
            }
        }
    }
    StageBounds& b = out_[i];
    Analyzer known;
    for (const auto& [v, range] : outer) known.bind(Var(v), range);
    for (size_t d = 0; d < pc->axis.size(); ++d) {
        const Range& dom = pc->axis[d].dom();
        Type ty = dom.min.type();
        Expr dmax = simplify(Sub::make(Add::make(dom.min, dom.extent), make_one(ty)));
        Interval iv = seen[d] ? interval_intersect(region[d], Interval(dom.min, dmax))
                              : Interval(dom.min, dom.min);
        // A padded tile keeps the unclamped region where it may leave the domain and has a
        // constant extent.
        bool tile = false;
        if (padded && seen[d] && region[d].is_bounded()) {
            Expr lo = known.simplify(region[d].min), hi = known.simplify(region[d].max);
            Expr tile_bound = extent_upper_bound(lo, hi, outer);
            bool inside = can_prove(And::make(GE::make(lo, dom.min), LE::make(hi, dmax)), outer);
            if (!inside && tile_bound.defined() && as_const_int(tile_bound)) {
                iv = Interval(lo, hi);
                tile = true;
            }
        }
        if (padded) b.overcomputed_axes.push_back(tile);
        b.overcomputed = b.overcomputed || tile;
        if (!iv.is_bounded()) {
            std::ostringstream os;
            os << "cannot bound the region of axis " << d << " that its consumers read inside '"
               << t.name() << "'";
            schedule_fail(s_, "lower", i, os.str());
        }
        // Simplify knowing the target's loop ranges: max(io*8, 0) is io*8.
        Expr lo = known.simplify(iv.min), hi = known.simplify(iv.max);
        Expr mn = lo, ext = known.simplify(Add::make(Sub::make(hi, lo), make_one(ty)));
        Expr bound = extent_upper_bound(lo, hi, outer);
        if (!bound.defined()) {
            std::ostringstream os;
            os << "the region of axis " << d << " has extent " << to_string(ext)
               << ", which has no constant bound";
            schedule_fail(s_, "lower", i, os.str());
        }
        b.region_min.push_back(mn);
        b.region_extent.push_back(ext);
        b.region_bound.push_back(bound);
    }
    for (const IterVar& iv : pc->reduce_axis) {
        b.region_min.push_back(iv.dom().min);
        b.region_extent.push_back(iv.dom().extent);
        b.region_bound.push_back(Expr());
    }
}

// A stage computed by reverse_compute_at (see the file comment and Schedule.h): its region along
// each data-parallel axis is what one iteration of the attach loop writes of the target axis it
// reads; the target's axes it sums whole count the iterations that write one tile of it.
void BoundInference::infer_region_after(int i) {
    const Stage& st = s_.stages()[i];
    const ComputeOpNode* xc = as_compute(st.op);
    const int target = st.attach_stage;
    const Stage& t = s_.stages()[target];
    const ComputeOpNode* tc = as_compute(t.op);
    const int attach_pos =
        static_cast<int>(std::find(t.leaf.begin(), t.leaf.end(), st.attach_iter) - t.leaf.begin());
    if (attach_pos >= static_cast<int>(t.leaf.size()))
        schedule_fail(s_, "lower", i, "its attach loop is no longer a leaf of '" + t.name() + "'");
    if (t.attach != AttachKind::Root)
        schedule_fail(s_, "lower", i,
                      "it is computed after '" + t.name() +
                          "' (reverse_compute_at), which is no longer computed at the root");
    const internal::ReverseReads reads = internal::reverse_reads(s_.stages(), i, target);
    if (!reads.error.empty()) schedule_fail(s_, "lower", i, reads.error);
    for (int b : reads.between) {
        const Stage& bs = s_.stages()[b];
        const bool inside =
            bs.attach == AttachKind::Inlined ||
            (bs.attach == AttachKind::At && bs.attach_stage == i && !bs.attach_after);
        if (!inside)
            schedule_fail(s_, "lower", i,
                          "'" + bs.name() + "', between it and '" + t.name() +
                              "', is not computed inside it (compute_at it at one of its loops, "
                              "or inline it)");
    }
    for (int pos = 0; pos <= attach_pos; ++pos)
        if (t.iters[t.leaf[pos]].kind == IterKind::Reduction)
            schedule_fail(s_, "lower", i,
                          "it is computed after '" + t.name() +
                              "' at a loop inside its "
                              "reduction, where the values it reads are not final");
    if (t.tma_store)
        schedule_fail(
            s_, "lower", i,
            "it is computed after '" + t.name() +
                "', whose TMA stores complete asynchronously (store it from the threads)");
    for (const IterRelation& rel : t.relations)
        if (rel.kind == IterRelation::Kind::Split && rel.tail == TailStrategy::ShiftInwards)
            schedule_fail(s_, "lower", i,
                          "'" + t.name() +
                              "' splits with shift_inwards, which writes some points twice; "
                              "reverse_compute_at needs each point written once");
    const StageBounds& tb = out_[target];
    const Scope inner = inner_scope(target, attach_pos, false);
    const Scope outer = enclosing_scope(target);
    Analyzer known;
    for (const auto& [v, range] : outer) known.bind(Var(v), range);
    StageBounds& b = out_[i];
    std::vector<Expr> lo(tc->axis.size()), hi(tc->axis.size());
    std::vector<int64_t> bound(tc->axis.size());
    Expr valid = const_true();
    int64_t arrivals = 1;
    for (size_t d = 0; d < tc->axis.size(); ++d) {
        const Range& dom = tc->axis[d].dom();
        Interval iv = bounds_of(tb.root_values[d], inner);
        if (!iv.is_bounded())
            schedule_fail(s_, "lower", i,
                          "cannot bound what one iteration of '" + t.name() + "' writes");
        lo[d] = known.simplify(iv.min);
        hi[d] = known.simplify(iv.max);
        Expr e = extent_upper_bound(lo[d], hi[d], outer);
        if (!e.defined())
            schedule_fail(s_, "lower", i,
                          "what one iteration of '" + t.name() + "' writes along axis " +
                              std::to_string(d) + " has no constant bound");
        bound[d] = *as_const_int(e);
        Expr end = simplify(Add::make(dom.min, dom.extent));
        if (!can_prove(LT::make(lo[d], end), outer)) valid = And::make(valid, LT::make(lo[d], end));
        if (!reads.summed[d]) continue;
        const std::optional<int64_t> whole = as_const_int(dom.extent);
        if (!whole || *whole % bound[d] != 0)
            schedule_fail(s_, "lower", i,
                          "it sums axis " + std::to_string(d) + " of '" + t.name() +
                              "', which one iteration writes " + std::to_string(bound[d]) +
                              " points of at a time: that must divide a constant extent");
        arrivals *= *whole / bound[d];
    }
    // What one iteration writes must be the whole box just bounded (a fused loop split across
    // rows writes a ragged part of one): the loops inside it, one point each, fill it.
    int64_t points = 1, box = 1;
    for (size_t pos = static_cast<size_t>(attach_pos) + 1; pos < t.leaf.size(); ++pos) {
        const int id = t.leaf[pos];
        const std::optional<int64_t> e = as_const_int(tb.iter_extents[id]);
        if (t.iters[id].kind == IterKind::Spatial) points *= e.value_or(-1);
    }
    for (int64_t e : bound) box *= e;
    if (points != box)
        schedule_fail(s_, "lower", i,
                      "one iteration of '" + t.name() + "''s loop writes " +
                          std::to_string(points) + " points, not the whole box of " +
                          std::to_string(box) +
                          " around them (reverse_compute_at needs a tile per iteration)");
    // The tile's index: each axis's first point in units of the tile, in row-major order.
    Expr tile = make_const(Int(32), 0);
    int64_t tiles = 1;
    for (size_t k = 0; k < xc->axis.size(); ++k) {
        const size_t d = static_cast<size_t>(reads.target_axis[k]);
        const Range& dom = tc->axis[d].dom();
        const Range& own = xc->axis[k].dom();
        Type ty = own.min.type();
        Expr dmax = simplify(Sub::make(Add::make(own.min, own.extent), make_one(ty)));
        Interval iv = interval_intersect(Interval(lo[d], hi[d]), Interval(own.min, dmax));
        Expr mn = known.simplify(iv.min), mx = known.simplify(iv.max);
        b.region_min.push_back(mn);
        b.region_extent.push_back(known.simplify(Add::make(Sub::make(mx, mn), make_one(ty))));
        b.region_bound.push_back(make_const(ty, bound[d]));
        if (arrivals == 1) continue;
        const std::optional<int64_t> extent = as_const_int(dom.extent);
        Expr start = simplify(Sub::make(lo[d], dom.min));
        if (!extent ||
            !can_prove(EQ::make(FloorMod::make(start, make_const(start.type(), bound[d])),
                                make_zero(start.type())),
                       outer))
            schedule_fail(s_, "lower", i,
                          "the tiles one iteration of '" + t.name() + "' writes along axis " +
                              std::to_string(d) +
                              " do not start at multiples of their size in a constant extent "
                              "(the last to finish a tile is counted per tile)");
        const int64_t n = (*extent + bound[d] - 1) / bound[d];
        tile = simplify(
            Add::make(Mul::make(tile, make_const(Int(32), n)),
                      cast(Int(32), FloorDiv::make(start, make_const(start.type(), bound[d])))));
        tiles *= n;
    }
    for (const IterVar& iv : xc->reduce_axis) {
        b.region_min.push_back(iv.dom().min);
        b.region_extent.push_back(iv.dom().extent);
        b.region_bound.push_back(Expr());
    }
    b.arrivals = arrivals;
    b.arrival_tiles = tiles;
    b.arrival_tile = tile;
    b.arrival_valid = simplify(valid);
}

// Iterators derived from `id` by later relations (the parts of its splits, the fusions).
std::vector<bool> derived_from(const Stage& st, int id) {
    std::vector<bool> d(st.iters.size(), false);
    d[id] = true;
    for (const IterRelation& rel : st.relations) {
        bool split = rel.kind == IterRelation::Kind::Split;
        if (split && d[rel.parent]) d[rel.outer] = d[rel.inner] = true;
        if (!split && (d[rel.outer] || d[rel.inner])) d[rel.fused] = true;
    }
    return d;
}

// Whether a shift-inwards split may recompute points instead of guarding them. It needs one
// whole inner tile. A recomputed point is visited at two (outer, inner) pairs, so no loop derived
// from the split iterator may be parallel, vectorized or bound to a GPU block or thread axis (two
// iterations would write one element at once); and in a
// reduction no loop derived from the outer part may run inside a reduction loop (the two visits
// would accumulate into one initialisation). A vthread loop counts as inside every loop of its
// stage: inject_virtual_threads sinks it below the loops whose headers do not depend on it.
bool shift_inwards_is_safe(const Stage& st, const StageBounds& b, const IterRelation& rel) {
    if (rel.tail != TailStrategy::ShiftInwards) return false;
    if (!can_prove(GE::make(b.iter_extents[rel.parent], b.iter_extents[rel.inner]), Scope()))
        return false;
    std::vector<bool> split = derived_from(st, rel.parent), outer = derived_from(st, rel.outer);
    bool reduces = false;
    for (int id : st.leaf) reduces = reduces || st.iters[id].kind == IterKind::Reduction;
    bool inside_reduction = false;
    for (int id : st.leaf) {
        inside_reduction = inside_reduction || st.iters[id].kind == IterKind::Reduction;
        if (outer[id] && reduces && st.iters[id].annotation == IterAnnotation::VThread)
            return false;
        // Parallel iterations, vector lanes (which update in lock step) or GPU threads and blocks
        // would both visit a recomputed point.
        IterAnnotation a = st.iters[id].annotation;
        if (split[id] && (a == IterAnnotation::Parallel || a == IterAnnotation::Vectorize ||
                          a >= IterAnnotation::BlockX))
            return false;
        if (outer[id] && inside_reduction) return false;
    }
    return true;
}

// Whether the points a round-up split of iterator `id` computes past its extent lie past the
// region (into padding): true for a root axis and the outer parts of its splits. Past the end
// of an inner part (or a fused loop) they would alias the next outer iteration's points, which
// would be computed twice (a race under parallel loops, a double update in reductions), so such
// splits are guarded instead.
bool round_up_pads(const Stage& st, int id) {
    if (std::find(st.root.begin(), st.root.end(), id) != st.root.end()) return true;
    for (const IterRelation& rel : st.relations)
        if (rel.kind == IterRelation::Kind::Split && rel.outer == id)
            return round_up_pads(st, rel.parent);
    return false;
}

// [0, extent - 1] for every leaf of `stage` (or only those in `positions` when given).
Scope leaf_scope(const Stage& st, const StageBounds& b) {
    Scope scope;
    for (int id : st.leaf) {
        Type t = b.iter_extents[id].type();
        scope[b.iter_vars[id].get()] =
            Interval(make_zero(t), simplify(Sub::make(b.iter_extents[id], make_one(t))));
    }
    return scope;
}

// The index the body reads at for root axis r (see StageBounds::read_values): `value` (relative
// to the region) clamped to the region's last point where a round-up split may run past it.
// region_min[r] + v (v simplified), folded without the simplifier where it is trivial.
Expr offset_by_region_min(const StageBounds& b, size_t r, const Expr& v) {
    if (is_zero(b.region_min[r])) return v;
    return simplify(Add::make(b.region_min[r], v));
}

// The index the body reads at for root axis r, whose value in the leaves is `v` (simplified).
Expr clamped_read_value(const StageBounds& b, size_t r, const Expr& v, const Expr& root_value,
                        const Scope& leaves, bool has_round_up) {
    if (!has_round_up) return root_value;
    Expr last = simplify(Sub::make(b.region_extent[r], make_one(v.type())));
    if (can_prove(LE::make(v, last), leaves)) return root_value;
    return offset_by_region_min(b, r, simplify(Min::make(v, last)));
}

// The extent of the part of split `rel` whose length it gives (the inner part of a split by
// factor, the outer of one by nparts): the given count, or the parent's constant extent where
// that is smaller (a stage computed at a consumer's tile may need less than a level of its own
// tiles: its loops then cover the region rather than the tile, with no guard), unless a loop
// derived from that part is bound to a GPU axis (the count is then the launch's thread count,
// which other stages of the kernel share).
int64_t tightened_count(const Stage& st, const IterRelation& rel, const Expr& parent) {
    auto p = as_const_int(parent);
    if (!p || *p >= rel.count || *p < 1) return rel.count;
    std::vector<bool> part = derived_from(st, rel.by_nparts ? rel.outer : rel.inner);
    for (int id : st.leaf)
        if (part[id] && st.iters[id].annotation >= IterAnnotation::VThread) return rel.count;
    return *p;
}

// a * b, ceil(a / f) and a == b for extents: integer arithmetic when they are constants (the
// common case, and the search replays and lowers many states), the simplifier otherwise.
Expr extent_mul(const Expr& a, const Expr& b) {
    auto x = as_const_int(a), y = as_const_int(b);
    if (x && y) return make_const(a.type(), *x * *y);
    return simplify(Mul::make(a, b));
}
Expr extent_ceil_div(const Expr& a, int64_t f) {
    Expr q = internal::ceil_div(a, f);
    return as_const_int(q) ? q : simplify(q);
}
bool extents_equal(const Expr& a, const Expr& b) {
    auto x = as_const_int(a), y = as_const_int(b);
    if (x && y) return *x == *y;
    return is_zero(simplify(Sub::make(a, b)));
}

// A plain copy's read of its source at its own axes, or nullptr (the op computes something).
const TensorRead* pure_copy(const Operation& op) {
    const ComputeOpNode* cc = as_compute(op);
    if (!cc || cc->body.size() != 1 || !cc->reduce_axis.empty()) return nullptr;
    const auto* r = cc->body[0].as<TensorRead>();
    if (!r || r->indices.size() != cc->axis.size()) return nullptr;
    for (size_t d = 0; d < cc->axis.size(); ++d)
        if (!r->indices[d].same_as(cc->axis[d].var())) return nullptr;
    return r;
}

// Whether stage i's reduction may run past its extent unguarded because every point past it
// adds zero: the stage is an mma inside a GPU kernel, and one of its operands is read with the
// reduction variable itself as index d and reads zero past the reduction's length
// (internal::reads_zero_past). The mma then multiplies whole k tiles of any reduction length
// (docs/cuda.md, "Padded reductions"). Where the index is not the variable itself (a split-K
// part's `p * len + k`), the points past the end would read real elements, and the guard stays.
bool zero_padded_reduction(const Schedule& s, int i) {
    const Stage& st = s.stages()[static_cast<size_t>(i)];
    const TensorIntrin* in =
        st.tensorize_intrin.empty() ? nullptr : find_tensor_intrin(st.tensorize_intrin);
    const ComputeOpNode* c = as_compute(st.op);
    if (!in || (in->kind != TensorIntrinKind::Mma && in->kind != TensorIntrinKind::Wgmma) || !c ||
        c->reduce_axis.size() != 1 || !internal::computed_inside_kernel(s, i))
        return false;
    const std::optional<int64_t> length = as_const_int(c->reduce_axis[0].dom().extent);
    if (!length) return false;
    bool pads = false;
    post_order_visit(c->body[0], [&](const IRNode* n) {
        if (pads || n->node_type != IRNodeType::TensorRead) return;
        const auto* read = static_cast<const TensorRead*>(n);
        for (size_t d = 0; d < read->indices.size(); ++d)
            if (read->indices[d].same_as(c->reduce_axis[0].var()))
                pads = internal::reads_zero_past(s, read, d, *length);
    });
    return pads;
}

void BoundInference::derive_loops(int i) {
    const Stage& st = s_.stages()[i];
    StageBounds& b = out_[i];
    size_t n = st.iters.size();
    b.iter_vars.resize(n);
    b.iter_extents.assign(n, Expr());
    for (size_t id = 0; id < n; ++id)
        b.iter_vars[id] = Var(st.iters[id].name, st.iters[id].extent.type());
    // Root extents: the region's constant bound (loops cover it; a guard trims the rest).
    for (size_t r = 0; r < st.root.size(); ++r) {
        bool bounded = r < b.region_bound.size() && b.region_bound[r].defined();
        b.iter_extents[st.root[r]] = bounded ? b.region_bound[r] : b.region_extent[r];
    }
    // Forward through the relations: the extents of derived iterators.
    for (const IterRelation& rel : st.relations) {
        if (rel.kind == IterRelation::Kind::Fuse) {
            b.iter_extents[rel.fused] =
                extent_mul(b.iter_extents[rel.outer], b.iter_extents[rel.inner]);
            continue;
        }
        Expr parent = b.iter_extents[rel.parent];
        Expr given = make_const(parent.type(), tightened_count(st, rel, parent));
        Expr other = extent_ceil_div(parent, rel.count);
        b.iter_extents[rel.inner] = rel.by_nparts ? other : given;
        b.iter_extents[rel.outer] = rel.by_nparts ? given : other;
    }
    // Backward: the value of every iterator in terms of the leaves, and the split guards.
    std::vector<Expr> value(n);
    for (int id : st.leaf) value[id] = b.iter_vars[id];
    for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
        const IterRelation& rel = *it;
        if (rel.kind == IterRelation::Kind::Fuse) {
            value[rel.outer] = FloorDiv::make(value[rel.fused], b.iter_extents[rel.inner]);
            value[rel.inner] = FloorMod::make(value[rel.fused], b.iter_extents[rel.inner]);
            continue;
        }
        Expr outer_v = Mul::make(value[rel.outer], b.iter_extents[rel.inner]);
        if (shift_inwards_is_safe(st, b, rel))  // else it is guarded, unshifted
            outer_v = Max::make(Min::make(outer_v, Sub::make(b.iter_extents[rel.parent],
                                                             b.iter_extents[rel.inner])),
                                make_zero(outer_v.type()));
        value[rel.parent] = Add::make(outer_v, value[rel.inner]);
    }
    const bool pads_reduction = zero_padded_reduction(s_, i);
    for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
        const IterRelation& rel = *it;
        if (rel.kind == IterRelation::Kind::Fuse) continue;
        Expr covered = extent_mul(b.iter_extents[rel.outer], b.iter_extents[rel.inner]);
        if (extents_equal(covered, b.iter_extents[rel.parent])) continue;
        // Round-up points store into padding and read at the region's last point (read_values).
        bool unguarded = (rel.tail == TailStrategy::RoundUp && round_up_pads(st, rel.parent)) ||
                         shift_inwards_is_safe(st, b, rel) ||
                         (st.iters[rel.parent].kind == IterKind::Reduction && pads_reduction);
        if (!unguarded)
            b.guards.push_back({LT::make(value[rel.parent], b.iter_extents[rel.parent]),
                                st.iters[rel.parent].kind == IterKind::Reduction});
    }
    Scope leaves = leaf_scope(st, b);
    bool has_round_up = false;
    for (const IterRelation& rel : st.relations)
        has_round_up = has_round_up ||
                       (rel.kind == IterRelation::Kind::Split && rel.tail == TailStrategy::RoundUp);
    for (size_t r = 0; r < st.root.size(); ++r) {
        int id = st.root[r];
        Expr v = simplify(value[id]);
        b.root_values.push_back(offset_by_region_min(b, r, v));
        b.read_values.push_back(
            clamped_read_value(b, r, v, b.root_values.back(), leaves, has_round_up));
        // Loops cover a constant bound of the region; skip the points past its real extent.
        if (!extents_equal(b.iter_extents[id], b.region_extent[r]))
            b.guards.push_back({LT::make(value[id], b.region_extent[r]),
                                st.iters[id].kind == IterKind::Reduction});
        // Storage covers what the loops touch (round-up splits compute past the region).
        Expr storage = b.iter_extents[id];
        ConstInterval ci = const_bounds_of(v, leaves);
        if (ci.max && as_const_int(storage) && *ci.max + 1 > *as_const_int(storage))
            storage = make_const(storage.type(), *ci.max + 1);
        b.storage_extent.push_back(storage);
    }
    for (StageGuard& g : b.guards) g.condition = simplify(g.condition);
}

}  // namespace

namespace internal {

bool reads_zero_past(const Schedule& s, const TensorRead* read, size_t d, int64_t length) {
    // The padded shared copy: what the read reads, a shared operand (wgmma's), or for a fragment
    // loaded from one (mma.sync's, by a copy intrinsic) that fragment's source.
    int copy = s.stage_of(read->tensor);
    const Stage& f = s.stages()[static_cast<size_t>(copy)];
    if (!f.tensorize_intrin.empty()) {
        const TensorIntrin* load = find_tensor_intrin(f.tensorize_intrin);
        const TensorRead* r = pure_copy(f.op);
        if ((load->kind != TensorIntrinKind::LdMatrix &&
             load->kind != TensorIntrinKind::LoadFragment) ||
            !r)
            return false;
        copy = s.stage_of(r->tensor);
    } else if (f.scope != StorageScope::Shared) {
        return false;
    }
    const TensorRead* src = pure_copy(s.stages()[static_cast<size_t>(copy)].op);
    if (!src || !internal::computed_inside_kernel(s, copy)) return false;
    // What the copy reads is stored (a placeholder or a stage of its own, not inlined into the
    // copy) and ends where the reduction does: the copy's reads past it are zero.
    const Stage& from = s.stages()[static_cast<size_t>(s.stage_of(src->tensor))];
    const std::optional<int64_t> extent = as_const_int(src->tensor.shape()[d]);
    return (as_placeholder(from.op) || from.attach == AttachKind::Root) && extent &&
           *extent <= length;
}

}  // namespace internal

std::vector<std::vector<Expr>> inlined_bodies(const Schedule& s) {
    std::vector<std::vector<Expr>> bodies(s.stages().size());
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const ComputeOpNode* c = as_compute(s.stages()[i].op);
        if (!c) continue;
        InlineReads inliner(s, bodies);
        for (const Expr& e : c->body) bodies[i].push_back(inliner.mutate(e));
    }
    return bodies;
}

std::vector<StageBounds> infer_bounds(const Schedule& s) {
    if (Schedule::BoundsMemo::Bounds known = s.bounds_memo_.get()) return *known;
    // A schedule may be left incomplete between steps (compute_at before the stage's other
    // readers are attached): bound inference needs every attachment complete.
    std::string error = internal::attachment_error(s);
    if (!error.empty()) TESSEL_THROW(ScheduleError) << "infer_bounds: " << error;
    auto bounds = std::make_shared<const std::vector<StageBounds>>(BoundInference(s).run());
    s.bounds_memo_.set(bounds);
    return *bounds;
}

std::vector<std::vector<Expr>> leaf_extents(const Schedule& s,
                                            const std::vector<StageBounds>& bounds) {
    std::vector<std::vector<Expr>> result(s.stages().size());
    for (size_t i = 0; i < s.stages().size(); ++i)
        for (int id : s.stages()[i].leaf) result[i].push_back(bounds[i].iter_extents[id]);
    return result;
}

std::vector<std::vector<Expr>> Schedule::infer_extents() const {
    return leaf_extents(*this, infer_bounds(*this));
}

}  // namespace tessel
