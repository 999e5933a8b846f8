// Loop interpreter: scratch allocated outside a parallel loop is shared by its iterations.
#include "error/ExpectRuntimeError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(LoopInterpreterError, ParallelSharedScratch) {
    // The accumulator's Allocate sits above the parallel loop instead of inside it.
    Buffer A("A", Float(32), {8}), C("C", Float(32), {8});
    Var i("i"), acc("acc", Handle());
    Stmt body = Seq::make({Store::make(acc, Load::make(Float(32), A->data, i), 0),
                           Store::make(C->data, Load::make(Float(32), acc, 0), i)});
    Stmt s = Allocate::make(acc, Float(32), {1}, StorageScope::Local,
                            For::make(i, 0, 8, ForKind::Parallel, body));
    LoweredFunc f{"scratch", {A, C}, s};
    HostArray a = HostArray::random(Float(32), {8}, 1), c(Float(32), {8});
    expect_runtime_error(
        [&] {
            run_lowered(f, {&a, &c});
        },
        {"race in parallel loop i: iteration 1 writes element 0 of acc"});
}
