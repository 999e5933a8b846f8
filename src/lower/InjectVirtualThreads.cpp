// InjectVirtualThreads (see include/tessel/lower/InjectVirtualThreads.h).
#include "tessel/lower/InjectVirtualThreads.h"

#include "PassUtil.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

bool is_thread_loop(const Stmt& s) {
    const auto* f = s.as<For>();
    return f && f->kind == ForKind::ThreadBound && f->thread_tag.rfind("threadIdx.", 0) == 0;
}

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
    // The vthread loop `op` around `body`, moved inside the threadIdx loops that body opens with.
    Stmt sink(const For* op, const Stmt& body) {
        if (is_thread_loop(body) && !internal::has_thread_sync(body)) {
            const For* t = body.as<For>();
            return For::make(t->loop_var, t->min, t->extent, t->kind, sink(op, t->body),
                             t->thread_tag);
        }
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
