// Loop interpreter: an Allocate whose extent evaluates to zero.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, NonpositiveAllocation) {
    Buffer A("A", Float(32), {4});
    Var tmp("tmp", Handle());
    Stmt s = Allocate::make(tmp, Float(32), {4, make_const(Int(32), 2) - 2}, StorageScope::Local,
                            Store::make(A->data, Load::make(Float(32), tmp, 0), 0));
    LoweredFunc f{"empty", {A}, s};
    HostArray a(Float(32), {4});
    expect_runtime_error([&] { run_lowered(f, {&a}); },
                         {"allocate tmp", "extent 1 is 0", "must be positive"});
}
