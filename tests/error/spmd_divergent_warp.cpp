// SPMD interpreter: a warp-collective intrinsic (mma_sync) that not every lane of the warp
// reaches is an error naming the intrinsic: a lane skipping it, a lane at a barrier instead, and
// a block whose last warp is not full.
#include "correctness/WarpKernel.h"
#include "error/ExpectRuntimeError.h"
#include "tessel/HostArray.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// An mma on zero fragments by the lanes where `who` holds, `other` (or nothing) elsewhere, in a
// block of `lanes` threads.
void run_mma(int64_t lanes, Expr (*who)(const Var&), Stmt other) {
    const Type h = Float(16), f = Float(32);
    Var af("af", Handle()), bf("bf", Handle()), cf("cf", Handle()), tx("tx", Int(32));
    Stmt mma = call(Intrinsic::mma_sync, {},
                    {tile(cf, f, 8), tile(af, h, 16), tile(bf, h, 8), tile(cf, f, 8)});
    Stmt body = IfThenElse::make(who(tx), mma, other);
    body =
        Allocate::make(af, h, {i32(256)}, StorageScope::Warp,
                       Allocate::make(bf, h, {i32(128)}, StorageScope::Warp,
                                      Allocate::make(cf, f, {i32(128)}, StorageScope::Warp, body)));
    Buffer D("D", f, {i32(1)});
    LoweredFunc fn{"divergent", {D}, lanes_loop(tx, lanes, body)};
    HostArray d(f, {1});
    run_lowered(fn, {&d});
}

Expr lower_half(const Var& tx) {
    return tx < i32(16);
}
Expr everyone(const Var& tx) {
    return tx >= i32(0);
}

}  // namespace

TEST(LoopInterpreterError, LaneSkippingMmaIsADivergentWarp) {
    expect_runtime_error(
        [] { run_mma(32, lower_half, Stmt()); },
        {"divergent warp", "warp-collective mma_sync", "lane 16", "finished without reaching it"});
}

TEST(LoopInterpreterError, LaneAtABarrierInsteadOfMmaIsADivergentWarp) {
    expect_runtime_error(
        [] { run_mma(32, lower_half, Evaluate::make(Call::make(Intrinsic::thread_barrier, {}))); },
        {"divergent warp", "mma_sync", "waits at thread_barrier instead"});
}

TEST(LoopInterpreterError, MmaInAPartialWarp) {
    expect_runtime_error([] { run_mma(48, everyone, Stmt()); },
                         {"mma_sync is warp-collective", "warp 1 of the block has 16 threads"});
}
