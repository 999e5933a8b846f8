// Loop interpreter: an array of the wrong shape is refused before anything runs.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, WrongArgumentShape) {
    Buffer A("A", Float(32), {4, 8}), B("B", Float(32), {4, 8});
    Var i("i");
    Stmt s = Store::make(B->data, Load::make(Float(32), A->data, i), i);
    LoweredFunc f{"copy", {A, B}, For::make(i, 0, 32, ForKind::Serial, s)};
    HostArray a(Float(32), {4, 8}), b = HostArray::full(Float(32), {8, 4}, 0);
    expect_runtime_error(
        [&] {
            run_lowered(f, {&a, &b});
        },
        {"argument 1 ('B')", "expected float32[4, 8]", "got float32[8, 4]"});
    EXPECT_EQ(b.get(0), 0.0);  // nothing ran
}
