// The loop interpreter's SPMD mode: threads of a block advance in phases between barriers;
// shared memory is one copy per block, local memory one per thread; thread_allreduce combines
// in thread order; divergent barriers and shared-memory races are RuntimeErrors.
#include <gtest/gtest.h>

#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;

namespace {

Stmt tfor(const Var& v, int64_t extent, Stmt body, const char* tag = "threadIdx.x") {
    return For::make(v, 0, static_cast<int>(extent), ForKind::ThreadBound, std::move(body), tag);
}
Stmt barrier() {
    return Evaluate::make(Call::make(Intrinsic::thread_barrier, {}));
}
Expr load(const Var& buf, Expr index) {
    return Load::make(Float(32), buf, std::move(index));
}

}  // namespace

TEST(SpmdInterpreter, PhasesBetweenBarriers) {
    // Each thread writes S[tx], then (after the barrier) reads its neighbour's element.
    Var A("A", Handle()), B("B", Handle()), S("S", Handle()), tx("tx");
    Stmt body = Seq::make({Store::make(S, load(A, tx) * 2.0f, tx), barrier(),
                           Store::make(B, load(S, floormod(tx + 1, 32)), tx)});
    Stmt s = For::make(Var("bx"), 0, 1, ForKind::ThreadBound,
                       Allocate::make(S, Float(32), {make_const(Int(32), 32)}, StorageScope::Shared,
                                      tfor(tx, 32, body)),
                       "blockIdx.x");
    HostArray a = HostArray::random(Float(32), {32}, 1), b(Float(32), {32});
    run_stmt(s, {{A, &a}, {B, &b}});
    for (int i = 0; i < 32; ++i)
        EXPECT_EQ(b.get(i), static_cast<float>(a.get((i + 1) % 32)) * 2.0f) << i;
}

TEST(SpmdInterpreter, LocalMemoryIsPerThread) {
    Var B("B", Handle()), L("L", Handle()), tx("tx");
    Stmt body = Allocate::make(L, Float(32), {make_const(Int(32), 1)}, StorageScope::Local,
                               Seq::make({Store::make(L, cast(Float(32), tx), 0), barrier(),
                                          Store::make(B, load(L, 0), tx)}));
    HostArray b(Float(32), {8});
    run_stmt(tfor(tx, 8, body), {{B, &b}});
    for (int i = 0; i < 8; ++i) EXPECT_EQ(b.get(i), i);
}

TEST(SpmdInterpreter, AllreduceSumsEachGroupInThreadOrder) {
    // 4 x 8 threads; reduce over threadIdx.x within each threadIdx.y row.
    Var A("A", Handle()), B("B", Handle()), R("R", Handle()), tx("tx"), ty("ty");
    Var lhs("lhs", Float(32)), rhs("rhs", Float(32));
    Expr zero = make_const(Float(32), 0.0);
    Expr call = Call::make(Intrinsic::thread_allreduce,
                           {make_const(Int(32), 1), make_const(Int(32), 1), load(A, ty * 8 + tx),
                            zero, lhs, rhs, lhs + rhs, R, tx});
    Stmt body =
        Allocate::make(R, Float(32), {make_const(Int(32), 1)}, StorageScope::Local,
                       Seq::make({Evaluate::make(call), Store::make(B, load(R, 0), ty * 8 + tx)}));
    HostArray a = HostArray::random(Float(32), {32}, 2), b(Float(32), {32});
    run_stmt(tfor(ty, 4, tfor(tx, 8, body), "threadIdx.y"), {{A, &a}, {B, &b}});
    for (int y = 0; y < 4; ++y) {
        float sum = 0.0f;
        for (int x = 0; x < 8; ++x) sum += static_cast<float>(a.get(y * 8 + x));
        for (int x = 0; x < 8; ++x) EXPECT_EQ(b.get(y * 8 + x), sum) << y << " " << x;
    }
}

TEST(SpmdInterpreter, DivergentBarrierIsAnError) {
    Var B("B", Handle()), tx("tx");
    Stmt body = IfThenElse::make(tx < 4, barrier());
    HostArray b(Float(32), {8});
    try {
        run_stmt(tfor(tx, 8, Seq::make({body, Store::make(B, make_const(Float(32), 1.0), tx)})),
                 {{B, &b}});
        ADD_FAILURE() << "no error";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("divergent barrier"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("finished without reaching it"), std::string::npos)
            << e.what();
    }
}

TEST(SpmdInterpreter, SharedRaceNamesBufferElementAndThreads) {
    Var S("S", Handle()), B("B", Handle()), tx("tx");
    Stmt body = Seq::make({Store::make(S, make_const(Float(32), 1.0), tx),
                           Store::make(B, load(S, floormod(tx + 1, 4)), tx)});
    Stmt s = Allocate::make(S, Float(32), {make_const(Int(32), 4)}, StorageScope::Shared,
                            tfor(tx, 4, body));
    HostArray b(Float(32), {4});
    try {
        run_stmt(tfor(Var("t0"), 1, s, "blockIdx.x"), {{B, &b}});
        ADD_FAILURE() << "no error";
    } catch (const RuntimeError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("race on shared memory S: thread (1, 0, 0) writes element 1, which "
                         "thread (0, 0, 0) read since the last barrier"),
                  std::string::npos)
            << m;
    }
}

TEST(SpmdInterpreter, BlocksRunOneAfterAnother) {
    Var B("B", Handle()), bx("bx"), tx("tx");
    Stmt s = For::make(bx, 0, 3, ForKind::ThreadBound,
                       tfor(tx, 5, Store::make(B, cast(Float(32), bx * 10 + tx), bx * 5 + tx)),
                       "blockIdx.x");
    HostArray b(Float(32), {15});
    run_stmt(s, {{B, &b}});
    for (int i = 0; i < 15; ++i) EXPECT_EQ(b.get(i), i / 5 * 10 + i % 5);
}

namespace {

// S[tx] = A[tx]; a sum over threadIdx.x (all-reduce); B[tx] = S[threads - 1 - tx] + the sum:
// the all-reduce is the only thing between a thread's write and another thread's read.
Stmt write_allreduce_read(const Var& A, const Var& B, const Var& S, int threads) {
    Var R("R", Handle()), tx("tx"), lhs("lhs", Float(32)), rhs("rhs", Float(32));
    Expr call = Call::make(Intrinsic::thread_allreduce,
                           {make_const(Int(32), 1), make_const(Int(32), 1), load(A, tx),
                            make_const(Float(32), 0.0), lhs, rhs, lhs + rhs, R, tx});
    Stmt body = Seq::make({Store::make(S, load(A, tx), tx), Evaluate::make(call),
                           Store::make(B, load(S, (threads - 1) - tx) + load(R, 0), tx)});
    body = Allocate::make(R, Float(32), {make_const(Int(32), 1)}, StorageScope::Local, body);
    Stmt s = Allocate::make(S, Float(32), {make_const(Int(32), threads)}, StorageScope::Shared,
                            tfor(tx, threads, body));
    return tfor(Var("bx"), 1, s, "blockIdx.x");
}

}  // namespace

// An all-reduce within one warp is shuffles on CUDA, with no __syncthreads(): it orders no shared
// memory, so the race detector sees the write before it and the read after it in one phase.
TEST(SpmdInterpreter, WarpAllreduceIsNoBarrierForTheRaceDetector) {
    Var A("A", Handle()), B("B", Handle()), S("S", Handle());
    HostArray a = HostArray::random(Float(32), {32}, 1), b(Float(32), {32});
    try {
        run_stmt(write_allreduce_read(A, B, S, 32), {{A, &a}, {B, &b}});
        ADD_FAILURE() << "no race reported across a warp's all-reduce";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("race on shared memory S"), std::string::npos)
            << e.what();
    }
}

// Across warps the all-reduce goes through shared memory and ends with __syncthreads(): a barrier.
TEST(SpmdInterpreter, MultiWarpAllreduceIsABarrier) {
    Var A("A", Handle()), B("B", Handle()), S("S", Handle());
    HostArray a = HostArray::random(Float(32), {64}, 2), b(Float(32), {64});
    run_stmt(write_allreduce_read(A, B, S, 64), {{A, &a}, {B, &b}});
    double total = 0;
    for (int i = 0; i < 64; ++i) total += static_cast<float>(a.get(i));
    for (int i = 0; i < 64; ++i)
        EXPECT_NEAR(b.get(i), static_cast<float>(a.get(63 - i)) + total, 1e-4) << i;
}
