// Loop interpreter: parallel iterations writing the same element are a race.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, ParallelRace) {
    // A reduction over a parallel loop: every iteration accumulates into S[0].
    Buffer A("A", Float(32), {8}), S("S", Float(32), {1});
    Var i("i");
    Stmt s = Store::make(S->data,
                         Load::make(Float(32), S->data, 0) + Load::make(Float(32), A->data, i), 0);
    Stmt body = Seq::make({Store::make(S->data, make_const(Float(32), 0.0), 0),
                           For::make(i, 0, 8, ForKind::Parallel, s)});
    LoweredFunc f{"sum", {A, S}, body};
    HostArray a = HostArray::random(Float(32), {8}, 1), out(Float(32), {1});
    expect_runtime_error(
        [&] {
            run_lowered(f, {&a, &out});
        },
        {"race in parallel loop i", "iteration 1", "element 0 of S", "iteration 0 wrote"});
}
