// Counting the arithmetic of operations (Operation.h documents what counts).
#include "TeInternal.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {
class FlopCounter : public IRVisitor {
public:
    double count = 0;
    using IRVisitor::visit;

protected:
#define TESSEL_COUNT_ARITH(T)          \
    void visit(const T* op) override { \
        count += op->type.lanes;       \
        IRVisitor::visit(op);          \
    }
    TESSEL_COUNT_ARITH(Add)
    TESSEL_COUNT_ARITH(Sub)
    TESSEL_COUNT_ARITH(Mul)
    TESSEL_COUNT_ARITH(Div)
    TESSEL_COUNT_ARITH(Mod)
    TESSEL_COUNT_ARITH(FloorDiv)
    TESSEL_COUNT_ARITH(FloorMod)
    TESSEL_COUNT_ARITH(Min)
    TESSEL_COUNT_ARITH(Max)
#undef TESSEL_COUNT_ARITH

    void visit(const Call* op) override {
        switch (op->op) {
            case Intrinsic::fma: count += 2.0 * op->type.lanes; break;
            case Intrinsic::isnan:
            case Intrinsic::if_then_else:
            case Intrinsic::likely:
            case Intrinsic::swizzle:
            case Intrinsic::thread_barrier:
            case Intrinsic::thread_allreduce:
            case Intrinsic::cp_async:
            case Intrinsic::cp_async_commit:
            case Intrinsic::cp_async_wait: break;
            case Intrinsic::mma_sync: count += 2.0 * 16 * 8 * 16; break;
            case Intrinsic::wgmma:  // one warp's share: 16 x n x 16
                count += 2.0 * 16 * static_cast<double>(*as_const_int(op->args[7])) * 16;
                break;
            case Intrinsic::wgmma_fence:
            case Intrinsic::wgmma_commit:
            case Intrinsic::wgmma_wait:
            case Intrinsic::fence_proxy_async:
            case Intrinsic::ldmatrix:
            case Intrinsic::fragment_load:
            case Intrinsic::fragment_store:
            case Intrinsic::fragment_fill: break;
            default: count += op->type.lanes; break;
        }
        IRVisitor::visit(op);
    }
    // Index expressions do not count.
    void visit(const TensorRead*) override {}
    // A reduction counts its sources and one combine per point; the caller multiplies by the
    // reduction's domain, so only the top-level Reduce (the only one compute allows) is counted.
    void visit(const Reduce* op) override {
        for (const Expr& s : op->source) visit(s);
        for (const Expr& r : op->combiner->result) visit(r);
    }
};

double count_expr(const Expr& e) {
    FlopCounter c;
    c.visit(e);
    return c.count;
}

// The number of points of `axes`; throws if an extent is not constant.
double domain_size(const std::vector<IterVar>& axes, const std::string& op_name) {
    double n = 1;
    for (const IterVar& iv : axes) {
        std::optional<int64_t> e = as_const_int(iv.dom().extent);
        if (!e)
            TESSEL_THROW(DSLError) << "flop_count: operation '" << op_name << "' has a symbolic "
                                   << "extent on axis '" << iv.var().name()
                                   << "'; flops can only be counted for constant shapes";
        n *= static_cast<double>(*e);
    }
    return n;
}
}  // namespace

double flop_count(const Operation& op) {
    const ComputeOpNode* c = as_compute(op);
    if (!c) return 0;
    double points = domain_size(c->axis, c->name);
    if (const Reduce* r = c->body[0].as<Reduce>()) {
        // Every output of a multi-output reduction shares one reduction: count it once.
        return points * domain_size(r->axis, c->name) * count_expr(c->body[0]);
    }
    double per_point = 0;
    for (const Expr& b : c->body) per_point += count_expr(b);
    return points * per_point;
}

double flop_count(const std::vector<Tensor>& outputs) {
    double total = 0;
    for (const Operation& op : topo_order(outputs)) total += flop_count(op);
    return total;
}

}  // namespace tessel
