// Loop interpreter: one lane of a vector load past the end names the lane.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, OutOfBoundsVectorLane) {
    // 10 elements read in vectors of 4 without a tail predicate: lane 2 of the last is A[10].
    Buffer A("A", Float(32), {10}), B("B", Float(32), {12});
    Var io("io");
    Expr idx = Ramp::make(io * 4, 1, 4);
    Stmt s = Store::make(B->data, Load::make(Float(32, 4), A->data, idx), idx);
    LoweredFunc f{"copy", {A, B}, For::make(io, 0, 3, ForKind::Serial, s)};
    HostArray a = HostArray::random(Float(32), {10}, 1), b(Float(32), {12});
    expect_runtime_error(
        [&] {
            run_lowered(f, {&a, &b});
        },
        {"load from A out of bounds", "lane 2 of 4", "index 10", "size 10", "(io=2)"});
}
