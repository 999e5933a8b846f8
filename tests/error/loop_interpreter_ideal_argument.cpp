// Loop interpreter: arrays must hold the dtype's own bytes (ArrayStorage::Native).
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, IdealArgument) {
    Buffer A("A", Float(32), {4});
    Var i("i");
    Stmt s = Store::make(A->data, make_const(Float(32), 1.0), i);
    LoweredFunc f{"fill", {A}, For::make(i, 0, 4, ForKind::Serial, s)};
    HostArray a(Float(32), {4}, ArrayStorage::Ideal);
    expect_runtime_error([&] { run_lowered(f, {&a}); },
                         {"argument 0 ('A')", "must be a Native array"});
}
