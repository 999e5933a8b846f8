// Loop interpreter: a flat store one row past the end names the buffer, index, size and loops.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, OutOfBoundsStore) {
    // The i loop runs one row too far: C[32 * 32 + 0] is the first element outside.
    Buffer C("C", Float(32), {32, 32});
    Var i("i"), j("j");
    Stmt store = Store::make(C->data, make_const(Float(32), 1.0), i * 32 + j);
    Stmt body = For::make(i, 0, 33, ForKind::Serial, For::make(j, 0, 32, ForKind::Serial, store));
    LoweredFunc f{"fill", {C}, body};
    HostArray c(Float(32), {32, 32});
    expect_runtime_error([&] { run_lowered(f, {&c}); },
                         {"store to C out of bounds: index 1024, size 1024 (i=32, j=0)"});
}
