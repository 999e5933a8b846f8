// InsertBarriers: barriers between shared-memory writes and reads of other threads, at the
// outermost uniform position; hoisted before thread-divergent statements; none without shared
// memory. Results run race-free in the SPMD loop interpreter.
#include <gtest/gtest.h>

#include "PassTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/InsertBarriers.h"
#include "tessel/lower/LoopInterpreter.h"

namespace tessel {
namespace {

Expr load(const Var& buf, Expr index) {
    return Load::make(Float(32), buf, std::move(index));
}

Stmt tfor(const Var& v, int64_t extent, Stmt body, const char* tag = "threadIdx.x") {
    return For::make(v, 0, static_cast<int>(extent), ForKind::ThreadBound, std::move(body), tag);
}

Stmt shared(const Var& buf, int64_t size, Stmt body) {
    return Allocate::make(buf, Float(32), {make_const(Int(32), size)}, StorageScope::Shared,
                          std::move(body));
}

// for bx in blockIdx.x(4): allocate S shared; S[tx] = A[..]; B[..] = S[15 - tx]
struct Reverse {
    Var A{"A", Handle()}, B{"B", Handle()}, S{"S", Handle()}, bx{"bx"}, t1{"t1"}, t2{"t2"};
    Stmt stmt() const {
        Stmt copy = tfor(t1, 16, Store::make(S, load(A, bx * 16 + t1), t1));
        Stmt use = tfor(t2, 16, Store::make(B, load(S, 15 - t2), bx * 16 + t2));
        return For::make(bx, 0, 4, ForKind::ThreadBound, shared(S, 16, Seq::make({copy, use})),
                         "blockIdx.x");
    }
};

TEST(InsertBarriers, BetweenWriteAndReadOfOtherThreads) {
    Reverse r;
    Stmt out = insert_barriers(r.stmt());
    EXPECT_EQ(to_string(out),
              "for bx in thread_binding(0, 4, \"blockIdx.x\"):\n"
              "    allocate S: float32[16] (shared)\n"
              "    for t1 in thread_binding(0, 16, \"threadIdx.x\"):\n"
              "        S[t1] = A[bx * 16 + t1]\n"
              "    thread_barrier()\n"
              "    for t2 in thread_binding(0, 16, \"threadIdx.x\"):\n"
              "        B[bx * 16 + t2] = S[15 - t2]\n");
    // The result is race-free; the input is not.
    HostArray a = HostArray::random(Float(32), {64}, 3), b(Float(32), {64});
    run_stmt(out, {{r.A, &a}, {r.B, &b}});
    for (int i = 0; i < 64; ++i) EXPECT_EQ(b.get(i), a.get(i / 16 * 16 + 15 - i % 16));
    EXPECT_THROW(run_stmt(r.stmt(), {{r.A, &a}, {r.B, &b}}), RuntimeError);
}

TEST(InsertBarriers, LoopCarriedOverwriteGetsABarrierAtTheTopOfTheBody) {
    Var A("A", Handle()), B("B", Handle()), S("S", Handle()), k("k"), t1("t1"), t2("t2");
    Var bx("bx");
    Stmt copy = tfor(t1, 8, Store::make(S, load(A, k * 8 + t1), t1));
    Stmt use = tfor(t2, 8, Store::make(B, load(B, t2) + load(S, 7 - t2), t2));
    Stmt in = shared(S, 8, For::make(k, 0, 3, ForKind::Serial, Seq::make({copy, use})));
    in = For::make(bx, 0, 1, ForKind::ThreadBound, in, "blockIdx.x");
    Stmt out = insert_barriers(in);
    EXPECT_EQ(to_string(out),
              "for bx in thread_binding(0, 1, \"blockIdx.x\"):\n"
              "    allocate S: float32[8] (shared)\n"
              "    for k in range(0, 3):\n"
              "        thread_barrier()\n"
              "        for t1 in thread_binding(0, 8, \"threadIdx.x\"):\n"
              "            S[t1] = A[k * 8 + t1]\n"
              "        thread_barrier()\n"
              "        for t2 in thread_binding(0, 8, \"threadIdx.x\"):\n"
              "            B[t2] = B[t2] + S[7 - t2]\n");
    HostArray a = HostArray::random(Float(32), {24}, 3), b = HostArray::random(Float(32), {8}, 4);
    HostArray expect = b;
    for (int kk = 0; kk < 3; ++kk)
        for (int t = 0; t < 8; ++t)
            expect.set(
                t, static_cast<float>(expect.get(t)) + static_cast<float>(a.get(kk * 8 + 7 - t)));
    run_stmt(out, {{A, &a}, {B, &b}});
    for (int t = 0; t < 8; ++t) EXPECT_EQ(b.get(t), expect.get(t));
}

TEST(InsertBarriers, HoistedBeforeADivergentBranch) {
    Var A("A", Handle()), B("B", Handle()), S("S", Handle()), tx("tx");
    // for tx in threadIdx.x(16): { S[tx] = A[tx]; if tx < 10: B[tx] = S[tx + 1] }
    Stmt body = Seq::make({Store::make(S, load(A, tx), tx),
                           IfThenElse::make(tx < 10, Store::make(B, load(S, tx + 1), tx))});
    Stmt out = insert_barriers(shared(S, 16, tfor(tx, 16, body)));
    EXPECT_EQ(to_string(out),
              "allocate S: float32[16] (shared)\n"
              "for tx in thread_binding(0, 16, \"threadIdx.x\"):\n"
              "    S[tx] = A[tx]\n"
              "    thread_barrier()\n"
              "    if tx < 10:\n"
              "        B[tx] = S[tx + 1]\n");
    HostArray a = HostArray::random(Float(32), {16}, 5), b(Float(32), {16});
    run_stmt(out, {{A, &a}, {B, &b}});
    for (int i = 0; i < 10; ++i) EXPECT_EQ(b.get(i), a.get(i + 1));
}

TEST(InsertBarriers, NothingWithoutSharedMemoryOrConflicts) {
    Var A("A", Handle()), B("B", Handle()), S("S", Handle()), t1("t1"), t2("t2");
    Stmt plain = tfor(t1, 8, Store::make(B, load(A, t1), t1));
    EXPECT_TRUE(insert_barriers(plain).same_as(plain));
    // Only writes to S: nothing to order.
    Stmt writes = shared(S, 8,
                         Seq::make({tfor(t1, 8, Store::make(S, load(A, t1), t1)),
                                    tfor(t2, 8, Store::make(S, load(A, t2), t2))}));
    EXPECT_EQ(to_string(insert_barriers(writes)).find("thread_barrier"), std::string::npos);
}

// S[tx] = A[tx]; R = the sum of A over the block (thread_allreduce); B[tx] = S[threads-1-tx] + R.
struct WriteReduceRead {
    Var A{"A", Handle()}, B{"B", Handle()}, S{"S", Handle()}, R{"R", Handle()}, tx{"tx"};
    Stmt stmt(int threads) const {
        Var lhs("lhs", Float(32)), rhs("rhs", Float(32));
        Expr call = Call::make(Intrinsic::thread_allreduce,
                               {make_const(Int(32), 1), make_const(Int(32), 1), load(A, tx),
                                make_const(Float(32), 0.0), lhs, rhs, lhs + rhs, R, tx});
        Stmt body = Seq::make({Store::make(S, load(A, tx), tx), Evaluate::make(call),
                               Store::make(B, load(S, (threads - 1) - tx) + load(R, 0), tx)});
        body = Allocate::make(R, Float(32), {make_const(Int(32), 1)}, StorageScope::Local, body);
        return For::make(Var("bx"), 0, 1, ForKind::ThreadBound,
                         shared(S, threads, tfor(tx, threads, body)), "blockIdx.x");
    }
    void check(const Stmt& s, int threads) const {
        HostArray a = HostArray::random(Float(32), {threads}, 5), b(Float(32), {threads});
        run_stmt(s, {{A, &a}, {B, &b}});
        double total = 0;
        for (int i = 0; i < threads; ++i) total += static_cast<float>(a.get(i));
        for (int i = 0; i < threads; ++i)
            EXPECT_NEAR(b.get(i), static_cast<float>(a.get(threads - 1 - i)) + total, 1e-4) << i;
    }
};

// An all-reduce within a warp (shuffles on CUDA, no __syncthreads()) is no barrier: the read of
// another thread's write after it needs a thread_barrier of its own.
TEST(InsertBarriers, WarpAllreduceIsNoBarrier) {
    WriteReduceRead w;
    Stmt out = insert_barriers(w.stmt(32));
    std::string text = to_string(out);
    size_t reduce = text.find("thread_allreduce("), barrier = text.find("thread_barrier()");
    ASSERT_NE(reduce, std::string::npos) << text;
    ASSERT_NE(barrier, std::string::npos) << text;
    EXPECT_LT(reduce, barrier) << text;
    EXPECT_LT(barrier, text.find("B[tx]")) << text;
    w.check(out, 32);
    EXPECT_THROW(w.check(w.stmt(32), 32), RuntimeError);  // without it: a race
}

// Across warps the all-reduce is a barrier of the block (its CUDA code ends with __syncthreads()).
TEST(InsertBarriers, MultiWarpAllreduceIsABarrier) {
    WriteReduceRead w;
    Stmt out = insert_barriers(w.stmt(64));
    EXPECT_EQ(to_string(out).find("thread_barrier"), std::string::npos) << to_string(out);
    w.check(out, 64);
}

}  // namespace
}  // namespace tessel
