// Loop interpreter: a symbolic extent bound by one argument must match the next one.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, SymbolicExtentMismatch) {
    // A and B share the extent n: A binds n = 6, B has 5 elements.
    Var n("n"), i("i");
    Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
    Stmt s = Store::make(B->data, Load::make(Float(32), A->data, i), i);
    LoweredFunc f{"copy", {A, B}, For::make(i, 0, n, ForKind::Serial, s)};
    HostArray a(Float(32), {6}), b(Float(32), {5});
    expect_runtime_error(
        [&] {
            run_lowered(f, {&a, &b});
        },
        {"argument 1 ('B')", "expected float32[n]", "got float32[5]"});
}
