// InjectWgmmaSync (see the header): each wgmma wrapped in fence / commit / wait, then the
// wrappers of neighbouring wgmmas merged, so that a k tile's unrolled wgmmas form one group, and
// each wait moved past the asynchronous copies that follow it.
#include "tessel/lower/InjectWgmmaSync.h"

#include <unordered_set>

#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

bool is_call(const Stmt& s, Intrinsic op) {
    const auto* e = s.as<Evaluate>();
    const auto* c = e ? e->value.as<Call>() : nullptr;
    return c && c->op == op;
}

Stmt call(Intrinsic op, std::vector<Expr> args = {}) {
    return Evaluate::make(Call::make(op, std::move(args)));
}

class WgmmaSync : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const Evaluate* op) override {
        if (!is_call(op, Intrinsic::wgmma)) return IRMutator::visit(op);
        return Seq::make({call(Intrinsic::wgmma_fence), op, call(Intrinsic::wgmma_commit),
                          call(Intrinsic::wgmma_wait, {make_zero(Int(32))})});
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
            if (i + 3 < in.size() && !out.empty() && is_call(out.back(), Intrinsic::wgmma) &&
                is_call(in[i], Intrinsic::wgmma_commit) &&
                is_call(in[i + 1], Intrinsic::wgmma_wait) &&
                is_call(in[i + 2], Intrinsic::wgmma_fence) &&
                is_call(in[i + 3], Intrinsic::wgmma)) {
                i += 2;
                changed = true;
                continue;
            }
            out.push_back(in[i]);
        }
        // The wait sinks past the pipelined copies that follow (their stage is never the one
        // this iteration's wgmmas read): the copies are issued while the tensor cores work.
        for (size_t i = 0; i + 1 < out.size(); ++i) {
            if (!is_call(out[i], Intrinsic::wgmma_wait) || !async_copies_only(out[i + 1])) continue;
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
        std::vector<Stmt> out = body->stmts;
        for (size_t i = 0; i < out.size(); ++i) {
            if (!is_call(out[i], Intrinsic::wgmma_commit)) continue;
            size_t w = i + 1;
            bool copies = false;
            for (; w < out.size() && async_copies_only(out[w]); ++w)
                copies = copies || issues_copy(out[w]);
            if (w == i + 1 || w >= out.size() || !is_call(out[w], Intrinsic::wgmma_wait) ||
                !is_zero(out[w].as<Evaluate>()->value.as<Call>()->args[0]))
                continue;
            out.erase(out.begin() + static_cast<std::ptrdiff_t>(w));
            std::vector<Stmt> sync = {call(Intrinsic::wgmma_wait, {make_const(Int(32), 1)})};
            if (copies) sync.push_back(call(Intrinsic::thread_barrier));
            out.insert(out.begin() + static_cast<std::ptrdiff_t>(i) + 1, sync.begin(), sync.end());
            Stmt l = For::make(loop->loop_var, loop->min, loop->extent, loop->kind,
                               Seq::make(std::move(out)), loop->thread_tag);
            return Seq::make({l, call(Intrinsic::wgmma_wait, {make_zero(Int(32))})});
        }
        return m;
    }

    // What a statement does, for the rules above: whether it only issues cp.async copies (and
    // commits them; no stores, no other effects), and whether it issues a copy at all. Shared
    // subexpressions (unrolled tiles share their index arithmetic) are visited once.
    struct Effects {
        bool only = true, copies = false, commits = false;
    };
    class EffectScan : public IRVisitor {
    public:
        Effects effects;
        using IRVisitor::visit;
        void visit(const Expr& e) override {
            if (!e.defined() || !seen_.insert(e.get()).second) return;
            IRVisitor::visit(e);
            if (const Call* c = e.as<Call>()) {
                if (c->op == Intrinsic::cp_async)
                    effects.copies = true;
                else if (c->op == Intrinsic::cp_async_commit)
                    effects.commits = true;
                else if (!intrinsic_is_pure(c->op))
                    effects.only = false;
            }
        }
        void visit(const Stmt& st) override {
            if (!st.defined()) return;
            if (st.node_type() == IRNodeType::Store || st.node_type() == IRNodeType::BufferStore)
                effects.only = false;
            IRVisitor::visit(st);
        }

    private:
        std::unordered_set<const IRNode*> seen_;
    };
    static Effects effects(const Stmt& s) {
        EffectScan scan;
        scan.visit(s);
        return scan.effects;
    }
    static bool issues_copy(const Stmt& s) { return effects(s).copies; }
    static bool async_copies_only(const Stmt& s) {
        const Effects e = effects(s);
        return e.only && (e.copies || e.commits);
    }
};

class ProxyFences : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const Evaluate* op) override {
        if (!is_call(op, Intrinsic::thread_barrier)) return IRMutator::visit(op);
        return Seq::make({call(Intrinsic::fence_proxy_async), op});
    }
};

}  // namespace

Stmt inject_wgmma_sync(const Stmt& s) {
    bool any = false;
    post_order_visit(s, [&](const IRNode* n) {
        any = any || (n->node_type == IRNodeType::Call &&
                      static_cast<const Call*>(n)->op == Intrinsic::wgmma);
    });
    if (!any) return s;
    return ProxyFences().mutate(WgmmaSync().mutate(s));
}

}  // namespace tessel
