// Loop interpreter: run_lowered with too few arrays.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, WrongArgumentCount) {
    Buffer A("A", Float(32), {4}), B("B", Float(32), {4});
    Var i("i");
    Stmt s = Store::make(B->data, Load::make(Float(32), A->data, i), i);
    LoweredFunc f{"copy", {A, B}, For::make(i, 0, 4, ForKind::Serial, s)};
    HostArray a(Float(32), {4});
    expect_runtime_error([&] { run_lowered(f, {&a}); },
                         {"run_lowered 'copy'", "expected 2 arguments, got 1"});
}
