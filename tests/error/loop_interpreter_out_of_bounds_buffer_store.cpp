// Loop interpreter: a multi-dimensional store names the index per dimension and the shape.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, OutOfBoundsBufferStore) {
    // B[i, j + 1]: the column runs past the end although the flat element would exist.
    Buffer B("B", Int(32), {3, 4});
    Var i("i"), j("j");
    Stmt s = BufferStore::make(B, i + j, {i, j + 1});
    LoweredFunc f{
        "shift", {B}, For::make(i, 0, 3, ForKind::Serial, For::make(j, 0, 4, ForKind::Serial, s))};
    HostArray b(Int(32), {3, 4});
    expect_runtime_error([&] { run_lowered(f, {&b}); },
                         {"store to B out of bounds: index [0, 4]", "dimension 1: 4 not in [0, 4)",
                          "shape [3, 4]", "(i=0, j=3)"});
}
