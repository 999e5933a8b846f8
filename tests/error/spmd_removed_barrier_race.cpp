// SPMD loop interpreter: the shared-memory GEMM with its barriers removed is reported as a race.
#include "correctness/SharedGemm.h"
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

namespace {

class RemoveBarriers : public IRMutator {
public:
    using IRMutator::visit;

protected:
    Stmt visit(const Evaluate* op) override {
        const Call* c = op->value.as<Call>();
        if (c && c->op == Intrinsic::thread_barrier) return Evaluate::make(make_const(Int(32), 0));
        return IRMutator::visit(op);
    }
};

}  // namespace

TEST(LoopInterpreterError, RemovedBarrierIsARace) {
    tessel::testing::SharedGemm g(16, 16, 16, 8);
    LoweredFunc f = lower(g.s, {g.A, g.B, g.C});
    f.body = RemoveBarriers().mutate(f.body);
    HostArray a = HostArray::random(Float(32), {16, 16}, 1),
              b = HostArray::random(Float(32), {16, 16}, 2);
    HostArray c(Float(32), {16, 16});
    expect_runtime_error(
        [&] {
            run_lowered(f, {&a, &b, &c});
        },
        {"race on shared memory", "since the last barrier", "thread ("});
}
