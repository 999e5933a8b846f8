// InsertBarriers (see include/tessel/lower/InsertBarriers.h).
#include "tessel/lower/InsertBarriers.h"

#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

#include "PassUtil.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

using VarSet = std::set<const Variable*>;

/// Shared-memory accesses since the last barrier.
struct Pending {
    VarSet reads, writes;
    void clear() {
        reads.clear();
        writes.clear();
    }
    void add(const Pending& o) {
        reads.insert(o.reads.begin(), o.reads.end());
        writes.insert(o.writes.begin(), o.writes.end());
    }
    // The shared buffer that makes `next` conflict with what is pending, or nullptr.
    const Variable* conflict(const Pending& next) const {
        for (const Variable* v : next.reads)
            if (writes.count(v)) return v;
        for (const Variable* v : next.writes)
            if (reads.count(v)) return v;
        return nullptr;
    }
};

int thread_axis(const std::string& tag) {
    if (tag == "threadIdx.x") return 0;
    if (tag == "threadIdx.y") return 1;
    if (tag == "threadIdx.z") return 2;
    return -1;
}

class BarrierPlanner {
public:
    Stmt run(const Stmt& s) {
        post_order_visit(s, [&](const IRNode* n) {
            if (n->node_type != IRNodeType::Allocate) return;
            const auto* a = static_cast<const Allocate*>(n);
            if (a->scope == StorageScope::Shared) shared_.insert(a->buffer_var.get());
        });
        if (shared_.empty()) return s;
        return outside(s);
    }

private:
    // Outside kernels: look for blocks.
    Stmt outside(const Stmt& s) {
        if (const auto* f = s.as<For>(); f && f->kind == ForKind::ThreadBound) {
            if (thread_axis(f->thread_tag) >= 0) return block(s);
            if (f->thread_tag.rfind("blockIdx.", 0) == 0) {
                bool nested = false;
                post_order_visit(f->body, [&](const IRNode* n) {
                    if (n->node_type != IRNodeType::For) return;
                    const auto* g = static_cast<const For*>(n);
                    nested = nested || (g->kind == ForKind::ThreadBound &&
                                        g->thread_tag.rfind("blockIdx.", 0) == 0);
                });
                Stmt body = nested ? outside(f->body) : block(f->body);
                if (body.same_as(f->body)) return s;
                return For::make(f->loop_var, f->min, f->extent, f->kind, body, f->thread_tag);
            }
        }
        if (const auto* q = s.as<Seq>()) {
            std::vector<Stmt> out;
            bool changed = false;
            for (const Stmt& c : q->stmts) {
                out.push_back(outside(c));
                changed = changed || !out.back().same_as(c);
            }
            return changed ? Seq::make(out) : s;
        }
        if (const auto* f = s.as<For>()) {
            Stmt b = outside(f->body);
            return b.same_as(f->body)
                       ? s
                       : For::make(f->loop_var, f->min, f->extent, f->kind, b, f->thread_tag);
        }
        if (const auto* a = s.as<Allocate>()) {
            Stmt b = outside(a->body);
            return b.same_as(a->body)
                       ? s
                       : Allocate::make(a->buffer_var, a->dtype, a->extents, a->scope, b);
        }
        if (const auto* l = s.as<LetStmt>()) {
            Stmt b = outside(l->body);
            return b.same_as(l->body) ? s : LetStmt::make(l->var, l->value, b);
        }
        if (const auto* a = s.as<AttrStmt>()) {
            Stmt b = outside(a->body);
            return b.same_as(a->body) ? s : AttrStmt::make(a->key, a->value, b);
        }
        if (const auto* i = s.as<IfThenElse>()) {
            Stmt t = outside(i->then_case);
            Stmt e = i->else_case.defined() ? outside(i->else_case) : Stmt();
            if (t.same_as(i->then_case) && e.same_as(i->else_case)) return s;
            return IfThenElse::make(i->condition, t, e);
        }
        return s;
    }

    // One block: its thread extents, then the plan.
    Stmt block(const Stmt& body) {
        dims_[0] = dims_[1] = dims_[2] = 1;
        axis_of_.clear();
        post_order_visit(body, [&](const IRNode* n) {
            if (n->node_type != IRNodeType::For) return;
            const auto* f = static_cast<const For*>(n);
            int a = f->kind == ForKind::ThreadBound ? thread_axis(f->thread_tag) : -1;
            if (a < 0) return;
            auto e = as_const_int(f->extent);
            dims_[a] = std::max(dims_[a], e ? *e : -1);  // -1: unknown (never uniform)
            axis_of_[f->loop_var.get()] = a;
        });
        thread_vars_.clear();
        Pending p;
        return plan(body, p);
    }

    // The shared-memory accesses of `s`.
    Pending accesses(const Stmt& s) const {
        Pending p;
        // A fragment store's destination tiles (D, D') are operands written, not read: loads at
        // their origins that read nothing.
        std::unordered_set<const IRNode*> written;
        post_order_visit(s, [&](const IRNode* n) {
            const auto* c =
                n->node_type == IRNodeType::Call ? static_cast<const Call*>(n) : nullptr;
            if (c && c->op == Intrinsic::fragment_store) {
                written.insert(c->args[1].get());
                written.insert(c->args[2].get());
            }
        });
        post_order_visit(s, [&](const IRNode* n) {
            const Variable* r = nullptr;
            const Variable* w = nullptr;
            switch (n->node_type) {
                case IRNodeType::BufferLoad:
                    if (!written.count(n))
                        r = static_cast<const BufferLoad*>(n)->buffer->data.get();
                    break;
                case IRNodeType::Load:
                    if (!written.count(n)) r = static_cast<const Load*>(n)->buffer_var.get();
                    break;
                case IRNodeType::BufferStore:
                    w = static_cast<const BufferStore*>(n)->buffer->data.get();
                    break;
                case IRNodeType::Store: w = static_cast<const Store*>(n)->buffer_var.get(); break;
                case IRNodeType::Call: {
                    // A fragment store's destination tile is an operand (a load at its origin,
                    // not a read): the lanes write it.
                    const auto* c = static_cast<const Call*>(n);
                    if (c->op != Intrinsic::fragment_store) break;
                    if (const auto* l = c->args[1].as<Load>()) w = l->buffer_var.get();
                    if (const auto* l = c->args[1].as<BufferLoad>()) w = l->buffer->data.get();
                    break;
                }
                default: break;
            }
            if (r && shared_.count(r)) p.reads.insert(r);
            if (w && shared_.count(w)) p.writes.insert(w);
        });
        return p;
    }

    // Whether `s` is a barrier of the whole block: a thread_barrier, or a thread_allreduce that
    // is not within warps (a warp's all-reduce orders no memory: internal::allreduce_within_warps).
    bool is_sync(const Stmt& s) const {
        const auto* e = s.as<Evaluate>();
        const auto* c = e ? e->value.as<Call>() : nullptr;
        if (!c) return false;
        if (c->op == Intrinsic::thread_barrier) return true;
        if (c->op != Intrinsic::thread_allreduce) return false;
        const int64_t n = as_const_int(c->args[0]).value(), m = as_const_int(c->args[1]).value();
        std::vector<int> axes;
        for (int64_t k = 0; k < m; ++k) {
            auto it = axis_of_.find(c->args[2 + 6 * n + k].as<Variable>());
            axes.push_back(it == axis_of_.end() ? -1 : it->second);
        }
        return !internal::allreduce_within_warps(dims_, axes);
    }

    bool thread_dependent(const Expr& e) const {
        bool dep = false;
        post_order_visit(e, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::Variable)
                dep = dep || thread_vars_.count(static_cast<const Variable*>(n));
        });
        return dep;
    }

    // Whether `s`, entered by every thread that reaches it, is left by some of them.
    bool divergent(const Stmt& s) const {
        if (const auto* i = s.as<IfThenElse>()) return thread_dependent(i->condition);
        if (const auto* f = s.as<For>()) {
            if (thread_dependent(f->min) || thread_dependent(f->extent)) return true;
            int a = f->kind == ForKind::ThreadBound ? thread_axis(f->thread_tag) : -1;
            if (a < 0) return false;
            auto e = as_const_int(f->extent);
            return !e || *e != dims_[a] || !is_zero(f->min);
        }
        return false;
    }

    [[noreturn]] void fail(const Stmt& region, const Variable* buffer) const {
        std::ostringstream os;
        os << "insert_barriers: shared memory '" << buffer->name
           << "' is written and read by different statements inside thread-divergent control "
              "flow, where no barrier can be placed (the threads that skip it would never reach "
              "it) and none can be hoisted out (both statements are inside). Bind the loops so "
              "that every thread runs it (a split factor that divides the extent), or compute "
              "the shared stage outside it. The statement:\n"
           << to_string(region);
        throw ScheduleError(os.str());
    }

    // `s` in uniform control flow, after the accesses `p`; updates p.
    Stmt plan(const Stmt& s, Pending& p) {
        if (const auto* q = s.as<Seq>()) {
            std::vector<Stmt> out;
            for (const Stmt& c : q->stmts) {
                // Allocations, lets and attributes are transparent: the barrier goes inside,
                // before the first statement that needs it.
                bool wrapper = c.as<Allocate>() || c.as<LetStmt>() || c.as<AttrStmt>();
                Pending acc = accesses(c);
                if (!wrapper && p.conflict(acc)) {
                    out.push_back(internal::barrier_stmt());
                    p.clear();
                }
                out.push_back(plan_child(c, p));
            }
            return Seq::make(out);
        }
        Pending acc = accesses(s);
        bool wrapper = s.as<Allocate>() || s.as<LetStmt>() || s.as<AttrStmt>();
        if (!wrapper && p.conflict(acc)) {
            p.clear();
            return Seq::make({internal::barrier_stmt(), plan_child(s, p)});
        }
        return plan_child(s, p);
    }

    // `s` (its accesses not conflicting with `p` as a whole), planned inside.
    Stmt plan_child(const Stmt& s, Pending& p) {
        if (is_sync(s)) {
            p.clear();
            return s;
        }
        if (divergent(s)) {
            check_divergent(s, s);
            p.add(accesses(s));
            return s;
        }
        if (s.as<Seq>()) return plan(s, p);
        if (const auto* f = s.as<For>()) {
            bool thread = f->kind == ForKind::ThreadBound && thread_axis(f->thread_tag) >= 0;
            if (thread) thread_vars_.insert(f->loop_var.get());
            // Loop-carried conflicts: plan the body after what an earlier iteration may have left
            // pending (conservatively, every access of the body).
            // Iterations of a threadIdx loop are other threads, at the same time: none.
            Pending entry = p, start = p;
            if (!thread) start.add(accesses(f->body));
            Stmt b = plan(f->body, start);
            if (thread) thread_vars_.erase(f->loop_var.get());
            p = entry;
            p.add(start);
            return b.same_as(f->body)
                       ? s
                       : For::make(f->loop_var, f->min, f->extent, f->kind, b, f->thread_tag);
        }
        if (const auto* a = s.as<Allocate>()) {
            Stmt b = plan(a->body, p);
            return b.same_as(a->body)
                       ? s
                       : Allocate::make(a->buffer_var, a->dtype, a->extents, a->scope, b);
        }
        if (const auto* l = s.as<LetStmt>()) {
            bool dep = thread_dependent(l->value);
            if (dep) thread_vars_.insert(l->var.get());
            Stmt b = plan(l->body, p);
            if (dep) thread_vars_.erase(l->var.get());
            return b.same_as(l->body) ? s : LetStmt::make(l->var, l->value, b);
        }
        if (const auto* a = s.as<AttrStmt>()) {
            Stmt b = plan(a->body, p);
            return b.same_as(a->body) ? s : AttrStmt::make(a->key, a->value, b);
        }
        if (const auto* i = s.as<IfThenElse>()) {
            Pending pt = p, pe = p;
            Stmt t = plan(i->then_case, pt);
            Stmt e = i->else_case.defined() ? plan(i->else_case, pe) : Stmt();
            p = pt;
            p.add(pe);
            if (t.same_as(i->then_case) && e.same_as(i->else_case)) return s;
            return IfThenElse::make(i->condition, t, e);
        }
        p.add(accesses(s));
        return s;
    }

    // A divergent statement may contain no barrier and need none inside.
    void check_divergent(const Stmt& s, const Stmt& region) {
        if (internal::has_thread_sync(s)) {
            std::ostringstream os;
            os << "insert_barriers: a barrier (or cross-thread reduction) inside thread-divergent "
                  "control flow cannot be hoisted: the threads that skip the statement would "
                  "never reach it. The statement:\n"
               << to_string(region);
            throw ScheduleError(os.str());
        }
        // Conflicts between statements inside: any Seq with a later access conflicting with an
        // earlier one, or a loop whose iterations conflict.
        check_inside(s, region);
    }

    void check_inside(const Stmt& s, const Stmt& region) {
        if (const auto* q = s.as<Seq>()) {
            Pending p;
            for (const Stmt& c : q->stmts) {
                Pending acc = accesses(c);
                if (const Variable* v = p.conflict(acc)) fail(region, v);
                p.add(acc);
                check_inside(c, region);
            }
        } else if (const auto* f = s.as<For>()) {
            bool thread = f->kind == ForKind::ThreadBound && thread_axis(f->thread_tag) >= 0;
            Pending acc = accesses(f->body);
            // Iterations of a serial loop run in one thread after another: a conflict between
            // them needs no barrier only when a thread touches its own elements, which this
            // by-buffer analysis cannot tell; it is left to the race detector.
            (void)thread;
            (void)acc;
            check_inside(f->body, region);
        } else if (const auto* a = s.as<Allocate>()) {
            check_inside(a->body, region);
        } else if (const auto* l = s.as<LetStmt>()) {
            check_inside(l->body, region);
        } else if (const auto* a = s.as<AttrStmt>()) {
            check_inside(a->body, region);
        } else if (const auto* i = s.as<IfThenElse>()) {
            check_inside(i->then_case, region);
            if (i->else_case.defined()) check_inside(i->else_case, region);
        }
    }

    VarSet shared_, thread_vars_;
    int64_t dims_[3] = {1, 1, 1};
    std::map<const Variable*, int> axis_of_;  // threadIdx loop variables of the block: their axis
};

}  // namespace

Stmt insert_barriers(const Stmt& s) {
    return BarrierPlanner().run(s);
}

}  // namespace tessel
