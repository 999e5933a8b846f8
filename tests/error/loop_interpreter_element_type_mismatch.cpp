// Loop interpreter: storing int32 values into a float32 buffer (a missing Cast).
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, ElementTypeMismatch) {
    Buffer A("A", Float(32), {4});
    Var i("i");
    LoweredFunc f{"fill", {A}, For::make(i, 0, 4, ForKind::Serial, Store::make(A->data, i, i))};
    HostArray a(Float(32), {4});
    expect_runtime_error([&] { run_lowered(f, {&a}); },
                         {"store to A", "accessed as int32 but holds float32", "(i=0)"});
}
