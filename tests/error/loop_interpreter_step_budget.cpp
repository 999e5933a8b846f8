// Loop interpreter: a runaway loop stops at the step budget instead of hanging the test.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, StepBudget) {
    // 2^31 - 1 iterations of an empty store: a broken extent.
    Buffer A("A", Int(32), {1});
    Var i("i");
    Stmt s = Store::make(A->data, i, 0);
    LoweredFunc f{"forever", {A}, For::make(i, 0, 0x7fffffff, ForKind::Serial, s)};
    HostArray a(Int(32), {1});
    LoopInterpreterOptions opts;
    opts.max_steps = 10000;
    expect_runtime_error([&] { run_lowered(f, {&a}, opts); }, {"step budget exceeded", "10000"});
}
