// Loop interpreter: a false AssertStmt throws its message.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, AssertFailure) {
    Buffer A("A", Int(32), {8});
    Var i("i");
    Stmt s =
        Seq::make({AssertStmt::make(i < 5, "i must stay below 5"), Store::make(A->data, i, i)});
    LoweredFunc f{"guarded", {A}, For::make(i, 0, 8, ForKind::Serial, s)};
    HostArray a(Int(32), {8});
    expect_runtime_error([&] { run_lowered(f, {&a}); }, {"i must stay below 5", "(i=5)"});
}
