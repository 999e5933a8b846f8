// InjectVirtualThreads: vthread loops sink inside the threadIdx loops they enclose and become
// unrolled (or, past the unroll cap, serial) work of each thread; results are unchanged.
#include <gtest/gtest.h>

#include "PassTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/InjectVirtualThreads.h"

namespace tessel {
namespace {

TEST(InjectVirtualThreads, SinksBelowThreadLoopsAndUnrolls) {
    Var A("A", Handle()), B("B", Handle()), v("v"), tx("tx");
    Expr i = v * 8 + tx;
    Stmt in =
        For::make(v, 0, 2, ForKind::ThreadBound,
                  For::make(tx, 0, 8, ForKind::ThreadBound,
                            Store::make(B, Load::make(Float(32), A, i) * 2.0f, i), "threadIdx.x"),
                  "vthread");
    Stmt out = inject_virtual_threads(in, 16);
    EXPECT_EQ(to_string(out),
              "for tx in thread_binding(0, 8, \"threadIdx.x\"):\n"
              "    for v in unrolled(0, 2):\n"
              "        B[v * 8 + tx] = A[v * 8 + tx] * 2.0f\n");
    test::expect_same_results(in, out, {{A, Float(32), 16}, {B, Float(32), 16}});
}

TEST(InjectVirtualThreads, SerialPastTheUnrollCapAndAroundBarriers) {
    Var A("A", Handle()), v("v"), tx("tx");
    Stmt body = Seq::make({Store::make(A, make_const(Float(32), 1.0), v * 4 + tx),
                           Evaluate::make(Call::make(Intrinsic::thread_barrier, {}))});
    Stmt in = For::make(v, 0, 40, ForKind::ThreadBound,
                        For::make(tx, 0, 4, ForKind::ThreadBound, body, "threadIdx.x"), "vthread");
    Stmt out = inject_virtual_threads(in, 16);
    // The barrier does not depend on the virtual thread: each thread reaches it once, after
    // running its 40 virtual threads' stores.
    EXPECT_EQ(to_string(out),
              "for tx in thread_binding(0, 4, \"threadIdx.x\"):\n"
              "    for v in range(0, 40):\n"
              "        A[v * 4 + tx] = 1.0f\n"
              "    thread_barrier()\n");
}

}  // namespace
}  // namespace tessel
