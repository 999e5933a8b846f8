// InjectWgmmaSync (see the header): each wgmma wrapped in fence / commit / wait, then the
// wrappers of neighbouring wgmmas merged, so that a k tile's unrolled wgmmas form one group, and
// each wait moved past the asynchronous copies that follow it.
#include "tessel/lower/InjectWgmmaSync.h"

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
            if (!is_call(out[i], Intrinsic::wgmma_wait) || !async_copies_only(out[i + 1]))
                continue;
            std::swap(out[i], out[i + 1]);
            changed = true;
        }
        return changed ? Seq::make(std::move(out)) : m;
    }

    // Whether `s` only issues cp.async copies (and commits them): no stores, no other effects.
    static bool async_copies_only(const Stmt& s) {
        bool only = true, copies = false;
        post_order_visit(s, [&](const IRNode* n) {
            if (n->node_type == IRNodeType::Store || n->node_type == IRNodeType::BufferStore)
                only = false;
            if (n->node_type != IRNodeType::Call) return;
            const Intrinsic op = static_cast<const Call*>(n)->op;
            if (op == Intrinsic::cp_async || op == Intrinsic::cp_async_commit)
                copies = true;
            else if (!intrinsic_is_pure(op))
                only = false;
        });
        return only && copies;
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
