// Loop interpreter: reading a buffer variable nobody allocated or bound.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, UnallocatedBuffer) {
    // The Allocate of `tmp` was dropped (or its scope closed too early).
    Buffer A("A", Float(32), {4});
    Var i("i"), tmp("tmp", Handle());
    Stmt s = Store::make(A->data, Load::make(Float(32), tmp, i), i);
    LoweredFunc f{"lost", {A}, For::make(i, 0, 4, ForKind::Serial, s)};
    HostArray a(Float(32), {4});
    expect_runtime_error([&] { run_lowered(f, {&a}); },
                         {"load from tmp", "neither allocated nor bound", "(i=0)"});
}
