// Loop interpreter: an array of the wrong dtype is refused, naming the argument.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, WrongArgumentDtype) {
    Buffer A("A", Float(16), {4});
    Var i("i");
    Stmt s = Store::make(A->data, make_const(Float(16), 1.0), i);
    LoweredFunc f{"fill", {A}, For::make(i, 0, 4, ForKind::Serial, s)};
    HostArray a(Float(32), {4});
    expect_runtime_error([&] { run_lowered(f, {&a}); },
                         {"argument 0 ('A')", "expected float16[4]", "got float32[4]"});
}
