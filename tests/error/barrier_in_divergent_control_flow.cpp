// insert_barriers: shared memory written and then read by other threads inside a branch that
// depends on threadIdx; no barrier can be placed there or hoisted out.
#include "error/ExpectScheduleError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/InsertBarriers.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, BarrierInDivergentControlFlow) {
    Var S("S", Handle()), A("A", Handle()), tx("tx");
    // for tx in threadIdx.x(16): if tx < 10: { S[tx] = A[tx]; A[tx] = S[(tx + 1) % 10] }
    Stmt body = Seq::make({Store::make(S, Load::make(Float(32), A, tx), tx),
                           Store::make(A, Load::make(Float(32), S, floormod(tx + 1, 10)), tx)});
    Stmt kernel =
        For::make(tx, 0, 16, ForKind::ThreadBound, IfThenElse::make(tx < 10, body), "threadIdx.x");
    Stmt s = Allocate::make(S, Float(32), {make_const(Int(32), 16)}, StorageScope::Shared, kernel);
    expect_schedule_error(
        [&] { insert_barriers(s); },
        {"insert_barriers: shared memory 'S'", "thread-divergent control flow", "if tx < 10:"});
}
