// Loop interpreter: one parallel iteration reads an element that a later iteration overwrites.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, ParallelReadThenWriteRace) {
    // B[i] = B[i + 1] + 1 over i in [0, 4): iteration 1 writes B[1], which iteration 0 read.
    Buffer B("B", Float(32), {5});
    Var i("i");
    Stmt s = Store::make(B->data, Load::make(Float(32), B->data, i + 1) + 1.0f, i);
    LoweredFunc f{"shift", {B}, For::make(i, 0, 4, ForKind::Parallel, s)};
    HostArray b = HostArray::random(Float(32), {5}, 1);
    expect_runtime_error(
        [&] { run_lowered(f, {&b}); },
        {"race in parallel loop i: iteration 1 writes element 1 of B", "which iteration 0 read"});
}
