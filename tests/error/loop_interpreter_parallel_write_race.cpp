// Loop interpreter: two parallel iterations writing one element (without reading it).
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, ParallelWriteRace) {
    // B[i / 2] = i: iterations 0 and 1 both write B[0].
    Buffer B("B", Int(32), {4});
    Var i("i");
    Stmt s = Store::make(B->data, i, floordiv(i, 2));
    LoweredFunc f{"halves", {B}, For::make(i, 0, 8, ForKind::Parallel, s)};
    HostArray b(Int(32), {4});
    expect_runtime_error(
        [&] { run_lowered(f, {&b}); },
        {"race in parallel loop i: iteration 1 writes element 0 of B", "which iteration 0 wrote"});
}
