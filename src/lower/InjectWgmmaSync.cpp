// InjectWgmmaSync (see the header): each wgmma wrapped in fence / commit / wait, then the
// wrappers of neighbouring wgmmas merged, so that a k tile's unrolled wgmmas form one group, and
// each wait moved past the asynchronous copies that follow it.
#include "tessel/lower/InjectWgmmaSync.h"

#include <optional>
#include <unordered_set>

#include "PassUtil.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

using internal::call_stmt;
using internal::is_call_stmt;

// What a statement does, for the rules below: stores, cp.async copies issued and committed,
// copies landed (cp_async_wait), wgmma's own calls, other calls with effects. Shared
// subexpressions (unrolled tiles share their index arithmetic) are visited once.
struct Effects {
    bool stores = false, copies = false, commits = false, lands = false, other = false;
    bool tma = false;  ///< the copies are TMA's (they complete on mbarriers)
    /// Only issues cp.async copies and commits them (nothing lands, nothing else happens).
    bool async_copies_only() const { return !stores && !lands && !other && (copies || commits); }
    /// May write shared memory through the generic proxy: a store, or copies landing there.
    bool generic_writes() const { return stores || lands || other; }
};

Effects effects_of(const Stmt& s) {
    class Scan : public IRVisitor {
    public:
        Effects effects;
        using IRVisitor::visit;
        void visit(const Expr& e) override {
            if (!e.defined() || !seen_.insert(e.get()).second) return;
            IRVisitor::visit(e);
            const Call* c = e.as<Call>();
            if (!c) return;
            switch (c->op) {
                case Intrinsic::cp_async: effects.copies = true; break;
                case Intrinsic::tma_load: effects.copies = effects.tma = true; break;
                case Intrinsic::cp_async_commit:
                case Intrinsic::mbarrier_expect_tx: effects.commits = true; break;
                case Intrinsic::mbarrier_wait: break;  // TMA lands through the async proxy
                case Intrinsic::cp_async_wait: effects.lands = true; break;
                case Intrinsic::wgmma:
                case Intrinsic::wgmma_fence:
                case Intrinsic::wgmma_commit:
                case Intrinsic::wgmma_wait: break;
                default: effects.other = effects.other || !intrinsic_is_pure(c->op);
            }
        }
        void visit(const Stmt& st) override {
            if (!st.defined()) return;
            if (st.node_type() == IRNodeType::Store || st.node_type() == IRNodeType::BufferStore)
                effects.stores = true;
            IRVisitor::visit(st);
        }

    private:
        std::unordered_set<const IRNode*> seen_;
    };
    Scan scan;
    scan.visit(s);
    return scan.effects;
}

class WgmmaSync : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const Evaluate* op) override {
        if (!is_call_stmt(op, Intrinsic::wgmma)) return IRMutator::visit(op);
        return Seq::make({call_stmt(Intrinsic::wgmma_fence), op, call_stmt(Intrinsic::wgmma_commit),
                          call_stmt(Intrinsic::wgmma_wait, {make_zero(Int(32))})});
    }

    // commit, wait(0), fence between two wgmmas: dropped (one group).
    Stmt visit(const Seq* op) override {
        Stmt m = IRMutator::visit(op);
        const auto* seq = m.as<Seq>();
        if (!seq) return m;
        const std::vector<Stmt>& in = seq->stmts;
        std::vector<Stmt> out;
        bool changed = false;
        for (size_t i = 0; i < in.size(); ++i) {
            if (i + 3 < in.size() && !out.empty() && is_call_stmt(out.back(), Intrinsic::wgmma) &&
                is_call_stmt(in[i], Intrinsic::wgmma_commit) &&
                is_call_stmt(in[i + 1], Intrinsic::wgmma_wait) &&
                is_call_stmt(in[i + 2], Intrinsic::wgmma_fence) &&
                is_call_stmt(in[i + 3], Intrinsic::wgmma)) {
                i += 2;
                changed = true;
                continue;
            }
            out.push_back(in[i]);
        }
        // The wait sinks past the pipelined copies that follow (their stage is never the one
        // this iteration's wgmmas read): the copies are issued while the tensor cores work.
        for (size_t i = 0; i + 1 < out.size(); ++i) {
            if (!is_call_stmt(out[i], Intrinsic::wgmma_wait) ||
                !effects_of(out[i + 1]).async_copies_only())
                continue;
            std::swap(out[i], out[i + 1]);
            changed = true;
        }
        return changed ? Seq::make(std::move(out)) : m;
    }

    // In a serial loop whose body ends a wgmma group with [commit, copies..., wait(0)], the group
    // stays in flight into the next iteration: [commit, wait(1), barrier, copies...], and
    // wait(0) after the loop. wait(1) retires the previous iteration's group (the tensor cores
    // then always hold the next group while the threads copy, wait and synchronise); the barrier
    // orders every warp group's wait(1) before the copies overwrite the stage that group read.
    // Without copies (only commits) the barrier is not needed.
    Stmt visit(const For* op) override {
        Stmt m = IRMutator::visit(op);
        const auto* loop = m.as<For>();
        const auto* body = loop ? loop->body.as<Seq>() : nullptr;
        if (!body || loop->kind != ForKind::Serial) return m;
        if (Stmt r = release_after_next_group(loop, body->stmts); r.defined()) return r;
        std::vector<Stmt> out = body->stmts;
        for (size_t i = 0; i < out.size(); ++i) {
            if (!is_call_stmt(out[i], Intrinsic::wgmma_commit)) continue;
            size_t w = i + 1;
            bool copies = false, tma = false;
            for (Effects e; w < out.size() && (e = effects_of(out[w])).async_copies_only(); ++w) {
                copies = copies || e.copies;
                tma = tma || e.tma;
            }
            if (w == i + 1 || w >= out.size() || !is_call_stmt(out[w], Intrinsic::wgmma_wait) ||
                !is_zero(out[w].as<Evaluate>()->value.as<Call>()->args[0]))
                continue;
            out.erase(out.begin() + static_cast<std::ptrdiff_t>(w));
            std::vector<Stmt> sync = {call_stmt(Intrinsic::wgmma_wait, {make_const(Int(32), 1)})};
            if (copies) sync.push_back(call_stmt(Intrinsic::thread_barrier));
            out.insert(out.begin() + static_cast<std::ptrdiff_t>(i) + 1, sync.begin(), sync.end());
            // TMA's pipeline: each thread waits for its tiles on the mbarrier, so the barrier
            // after that wait only ordered the previous iteration's reads before the refill,
            // which the barrier after wait(1) now does.
            if (copies && tma && out.size() > 1 && is_call_stmt(out[0], Intrinsic::mbarrier_wait) &&
                is_call_stmt(out[1], Intrinsic::thread_barrier))
                out.erase(out.begin() + 1);
            Stmt l = For::make(loop->loop_var, loop->min, loop->extent, loop->kind,
                               Seq::make(std::move(out)), loop->thread_tag);
            return Seq::make({l, call_stmt(Intrinsic::wgmma_wait, {make_zero(Int(32))})});
        }
        return m;
    }

    // A warp-specialized consumer's loop (inject_double_buffer) ends [commit, wait(0),
    // mbarrier_arrive(empty, copy)]: the copy it read is released once its group is done. The
    // group stays in flight into the next iteration instead: [commit, wait(1), release of the
    // previous iteration's copy (from the second iteration on)], and after the loop wait(0) and
    // the release of the last iteration's copy.
    static Stmt release_after_next_group(const For* loop, const std::vector<Stmt>& in) {
        const size_t n = in.size();
        if (n < 3 || !is_call_stmt(in[n - 1], Intrinsic::mbarrier_arrive) ||
            !is_call_stmt(in[n - 2], Intrinsic::wgmma_wait) ||
            !is_zero(in[n - 2].as<Evaluate>()->value.as<Call>()->args[0]) ||
            !is_call_stmt(in[n - 3], Intrinsic::wgmma_commit))
            return Stmt();
        const Var& v = loop->loop_var;
        const Stmt& release = in[n - 1];
        std::vector<Stmt> out(in.begin(), in.end() - 2);
        out.push_back(call_stmt(Intrinsic::wgmma_wait, {make_const(Int(32), 1)}));
        out.push_back(
            IfThenElse::make(v > loop->min, substitute(release, v, v - make_one(v.type()))));
        Stmt l = For::make(v, loop->min, loop->extent, loop->kind, Seq::make(std::move(out)),
                           loop->thread_tag);
        Expr last = loop->min + loop->extent - make_one(v.type());
        return Seq::make({l, call_stmt(Intrinsic::wgmma_wait, {make_zero(Int(32))}),
                          substitute(release, v, last)});
    }
};

// Whether a statement may write shared memory through the generic proxy: a store into a shared
// buffer (registers, fragments and global memory are not what the asynchronous proxy reads), a
// cp.async copy landing, or a call with other effects. Issuing copies (cp.async, TMA), waiting
// on an mbarrier, wgmma's calls, barriers and proxy fences write nothing there.
class SharedWrites {
public:
    explicit SharedWrites(const Stmt& s) {
        post_order_visit(s, [&](const IRNode* n) {
            if (n->node_type != IRNodeType::Allocate) return;
            const auto* a = static_cast<const Allocate*>(n);
            if (a->scope == StorageScope::Shared) shared_.insert(a->buffer_var.get());
        });
    }

    bool operator()(const Stmt& s) const {
        bool writes = false;
        post_order_visit(s, [&](const IRNode* n) {
            if (writes) return;
            if (n->node_type == IRNodeType::Store)
                writes = shared_.count(static_cast<const Store*>(n)->buffer_var.get()) > 0;
            else if (n->node_type == IRNodeType::BufferStore)
                writes = static_cast<const BufferStore*>(n)->buffer->scope == StorageScope::Shared;
            else if (n->node_type == IRNodeType::Call)
                writes = writes_shared(static_cast<const Call*>(n));
        });
        return writes;
    }

private:
    bool shared_tile(const Expr& e) const {
        const auto* l = e.as<Load>();
        return !l || shared_.count(l->buffer_var.get()) > 0;  // not a tile: assume it is
    }

    bool writes_shared(const Call* c) const {
        switch (c->op) {
            // The tensor-core calls write the tile or fragment they name first (ir/IR.h).
            case Intrinsic::mma_sync: return shared_tile(c->args[0]);
            case Intrinsic::ldmatrix: return shared_tile(c->args[2]);
            case Intrinsic::fragment_load:
            case Intrinsic::fragment_store:
            case Intrinsic::fragment_fill: return shared_tile(c->args[1]);
            case Intrinsic::cp_async:
            case Intrinsic::cp_async_commit:
            case Intrinsic::tma_load:
            case Intrinsic::mbarrier_expect_tx:
            case Intrinsic::mbarrier_wait:
            case Intrinsic::wgmma:
            case Intrinsic::wgmma_fence:
            case Intrinsic::wgmma_commit:
            case Intrinsic::wgmma_wait:
            case Intrinsic::thread_barrier:
            case Intrinsic::fence_proxy_async: return false;
            case Intrinsic::cp_async_wait: return true;
            default: return !intrinsic_is_pure(c->op);
        }
    }

    std::unordered_set<const IRNode*> shared_;  ///< the shared buffers' variables
};

// A fence_proxy_async before every barrier, except where nothing since the previous barrier
// writes shared memory through the generic proxy: in a sequence, the barrier after a k loop's
// wgmma_wait(1) when the fence before the loop's first barrier covered the tiles; in a loop whose
// body writes no shared memory through the generic proxy (tiles that TMA fills, accumulators
// in registers), the fences of its barriers become one before the loop, which covers what was
// written before it (the fence orders this thread's earlier writes before any later barrier).
class ProxyFences : public IRMutator {
public:
    explicit ProxyFences(const Stmt& body) : writes_(body) {}
    using IRMutator::visit;

protected:
    Stmt visit(const Evaluate* op) override {
        if (!is_call_stmt(op, Intrinsic::thread_barrier)) return IRMutator::visit(op);
        return Seq::make({call_stmt(Intrinsic::fence_proxy_async), op});
    }

    Stmt visit(const For* op) override {
        Stmt m = IRMutator::visit(op);
        const auto* loop = m.as<For>();
        if (!loop || loop->kind != ForKind::Serial || writes_(loop->body)) return m;
        bool fenced = false;
        post_order_visit(loop->body, [&](const IRNode* n) {
            fenced = fenced || (n->node_type == IRNodeType::Call &&
                                static_cast<const Call*>(n)->op == Intrinsic::fence_proxy_async);
        });
        if (!fenced) return m;
        Stmt body = Remove(Intrinsic::fence_proxy_async).mutate(loop->body);
        return Seq::make({call_stmt(Intrinsic::fence_proxy_async),
                          For::make(loop->loop_var, loop->min, loop->extent, loop->kind, body,
                                    loop->thread_tag)});
    }

    Stmt visit(const Seq* op) override {
        Stmt m = IRMutator::visit(op);
        const auto* seq = m.as<Seq>();
        if (!seq) return m;
        std::vector<Stmt> out;
        std::optional<size_t> last_barrier;  // in `out`
        bool changed = false;
        for (const Stmt& st : seq->stmts) {
            if (is_call_stmt(st, Intrinsic::fence_proxy_async) && !out.empty() &&
                is_call_stmt(out.back(), Intrinsic::fence_proxy_async)) {
                changed = true;  // two fences in a row (a hoisted one after another)
                continue;
            }
            if (is_call_stmt(st, Intrinsic::thread_barrier)) {
                const bool fenced =
                    !out.empty() && is_call_stmt(out.back(), Intrinsic::fence_proxy_async);
                if (fenced && last_barrier) {
                    bool writes = false;
                    for (size_t i = *last_barrier + 1; i + 1 < out.size() && !writes; ++i)
                        writes = writes_(out[i]);
                    if (!writes) {
                        out.pop_back();
                        changed = true;
                    }
                }
                last_barrier = out.size();
            }
            out.push_back(st);
        }
        return changed ? Seq::make(std::move(out)) : m;
    }

private:
    // The calls of one intrinsic dropped from every sequence (fences are statements of one).
    class Remove : public IRMutator {
    public:
        explicit Remove(Intrinsic op) : op_(op) {}
        using IRMutator::visit;

    protected:
        Stmt visit(const Seq* op) override {
            Stmt m = IRMutator::visit(op);
            const auto* seq = m.as<Seq>();
            if (!seq) return m;
            std::vector<Stmt> out;
            for (const Stmt& st : seq->stmts)
                if (!is_call_stmt(st, op_)) out.push_back(st);
            if (out.size() == seq->stmts.size()) return m;
            return out.empty() ? Evaluate::make(make_zero(Int(32))) : Seq::make(std::move(out));
        }

    private:
        Intrinsic op_;
    };

    SharedWrites writes_;
};

}  // namespace

Stmt inject_wgmma_sync(const Stmt& s) {
    bool any = false;
    post_order_visit(s, [&](const IRNode* n) {
        any = any || (n->node_type == IRNodeType::Call &&
                      static_cast<const Call*>(n)->op == Intrinsic::wgmma);
    });
    if (!any) return s;
    return ProxyFences(s).mutate(WgmmaSync().mutate(s));
}

}  // namespace tessel
