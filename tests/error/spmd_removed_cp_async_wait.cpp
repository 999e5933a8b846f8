// SPMD loop interpreter: the shared-memory GEMM pipelined with cp.async (pipeline(3)) computes
// the product; with its cp_async_wait calls removed (the barriers kept) the first read of a tile
// whose copy has not landed is reported, naming the buffer.
#include "correctness/SharedGemm.h"
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

namespace {

class RemoveWaits : public IRMutator {
public:
    using IRMutator::visit;
    int removed = 0;

protected:
    Stmt visit(const Evaluate* op) override {
        const Call* c = op->value.as<Call>();
        if (!c || c->op != Intrinsic::cp_async_wait) return IRMutator::visit(op);
        ++removed;
        return Evaluate::make(make_const(Int(32), 0));
    }
};

bool has_cp_async(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const IRNode* n) {
        found = found || (n->node_type == IRNodeType::Call &&
                          static_cast<const Call*>(n)->op == Intrinsic::cp_async);
    });
    return found;
}

}  // namespace

TEST(LoopInterpreterError, RemovedCpAsyncWaitIsReported) {
    tessel::testing::SharedGemm g(16, 16, 32, 8);  // k.outer runs 4 times
    g.s.pipeline(g.s.stage_of(g.As), 3);
    g.s.pipeline(g.s.stage_of(g.Bs), 3);
    LoweredFunc f = lower(g.s, {g.A, g.B, g.C});
    ASSERT_TRUE(has_cp_async(f.body));
    HostArray a = HostArray::random(Float(32), {16, 32}, 1),
              b = HostArray::random(Float(32), {32, 16}, 2);
    HostArray c(Float(32), {16, 16});
    run_lowered(f, {&a, &b, &c});
    for (int i = 0; i < 16; ++i) {
        for (int j = 0; j < 16; ++j) {
            double want = 0;
            for (int k = 0; k < 32; ++k) want += a.get(i * 32 + k) * b.get(k * 16 + j);
            EXPECT_NEAR(c.get(i * 16 + j), want, 1e-4) << i << " " << j;
        }
    }
    RemoveWaits remover;
    f.body = remover.mutate(f.body);
    EXPECT_GE(remover.removed, 1);  // one per iteration (a loop partition may copy it)
    expect_runtime_error(
        [&] {
            run_lowered(f, {&a, &b, &c});
        },
        {"before cp.async landed; a cp_async_wait is missing", "shared memory", "thread ("});
}
