// SPMD loop interpreter: the shared-memory GEMM with its barriers removed is reported as a race
// (plain and swizzled shared tiles).
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

// Lowers g, removes its barriers, and expects the interpreter to report the race.
void expect_race_without_barriers(tessel::testing::SharedGemm& g) {
    LoweredFunc f = lower(g.s, {g.A, g.B, g.C});
    f.body = RemoveBarriers().mutate(f.body);
    HostArray a = HostArray::random(Float(32), {16, 16}, 1),
              b = HostArray::random(Float(32), {16, 16}, 2);
    HostArray c(Float(32), {16, 16});
    expect_runtime_error([&] { run_lowered(f, {&a, &b, &c}); },
                         {"race on shared memory", "since the last barrier", "thread ("});
}

}  // namespace

TEST(LoopInterpreterError, RemovedBarrierIsARace) {
    tessel::testing::SharedGemm g(16, 16, 16, 8);
    expect_race_without_barriers(g);
}

// With swizzled shared tiles (storage_swizzle) the race detector sees the swizzled addresses the
// threads really use.
TEST(LoopInterpreterError, RemovedBarrierIsARaceInSwizzledTiles) {
    tessel::testing::SharedGemm g(16, 16, 16, 8);
    g.s.storage_swizzle(g.s.stage_of(g.As));
    g.s.storage_swizzle(g.s.stage_of(g.Bs));
    ASSERT_NE(to_string(lower(g.s, {g.A, g.B, g.C})).find("swizzle("), std::string::npos);
    expect_race_without_barriers(g);
}
