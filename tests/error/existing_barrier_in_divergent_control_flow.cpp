// insert_barriers: a barrier already inside a branch that depends on threadIdx cannot be hoisted.
#include "error/ExpectScheduleError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/InsertBarriers.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, ExistingBarrierInDivergentControlFlow) {
    Var tx("tx");
    Var S("S", Handle());
    Stmt body = Seq::make({Store::make(S, make_const(Float(32), 1.0), tx),
                           Evaluate::make(Call::make(Intrinsic::thread_barrier, {}))});
    Stmt kernel =
        For::make(tx, 0, 16, ForKind::ThreadBound, IfThenElse::make(tx < 10, body), "threadIdx.x");
    Stmt s = Allocate::make(S, Float(32), {make_const(Int(32), 16)}, StorageScope::Shared, kernel);
    expect_schedule_error([&] { insert_barriers(s); },
                          {"inside thread-divergent control flow cannot be hoisted"});
}
