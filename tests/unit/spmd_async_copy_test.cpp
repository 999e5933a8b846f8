// The SPMD interpreter's asynchronous copies (ir/IR.h, cp_async): a copy lands when its thread
// waits for its group, not at a barrier; zero fill; cp_async_wait(n) keeps the newest n groups in
// flight; reading or writing an element in flight is an error naming the buffer, so a missing
// wait is caught even where the barrier is present.
#include <gtest/gtest.h>

#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"

using namespace tessel;

namespace {

constexpr int kThreads = 8;

Stmt tfor(const Var& v, Stmt body) {
    return For::make(v, 0, kThreads, ForKind::ThreadBound, std::move(body), "threadIdx.x");
}
Stmt call(Intrinsic op, std::vector<Expr> args = {}) {
    return Evaluate::make(Call::make(op, std::move(args)));
}
Stmt barrier() {
    return call(Intrinsic::thread_barrier);
}
Stmt commit() {
    return call(Intrinsic::cp_async_commit);
}
Stmt wait(int n) {
    return call(Intrinsic::cp_async_wait, {make_const(Int(32), n)});
}
/// 16 bytes (4 floats) from A[src] into S[dst], `src_bytes` of them read.
Stmt copy16(const Var& S, Expr dst, const Var& A, Expr src, Expr src_bytes = 16) {
    return call(Intrinsic::cp_async, {S, std::move(dst), A, std::move(src), make_const(Int(32), 16),
                                      std::move(src_bytes)});
}

/// A block of kThreads threads with shared S of 2 * 4 * kThreads floats around `body`.
struct Kernel {
    Var A{"A", Handle()}, B{"B", Handle()}, S{"S", Handle()}, tx{"tx"};
    HostArray a = HostArray::random(Float(32), {8 * kThreads}, 7);
    HostArray b{Float(32), {4 * kThreads}};

    Stmt block(const Stmt& body) const {
        Stmt alloc = Allocate::make(S, Float(32), {make_const(Int(32), 8 * kThreads)},
                                    StorageScope::Shared, tfor(tx, body));
        return For::make(Var("bx"), 0, 1, ForKind::ThreadBound, alloc, "blockIdx.x");
    }
    /// Each thread copies its 4 floats of A (at `offset`) into S[4 * tx + dst_offset].
    Stmt issue(int offset = 0, int dst_offset = 0, Expr src_bytes = 16) const {
        return copy16(S, tx * 4 + dst_offset, A, tx * 4 + offset, std::move(src_bytes));
    }
    /// Each thread reads its neighbour's 4 floats of S (at `offset`) into B.
    Stmt read_neighbour(int offset = 0) const {
        std::vector<Stmt> out;
        for (int j = 0; j < 4; ++j)
            out.push_back(Store::make(
                B, Load::make(Float(32), S, floormod(tx + 1, kThreads) * 4 + j + offset),
                tx * 4 + j));
        return Seq::make(out);
    }
    void run(const Stmt& body) { run_stmt(block(body), {{A, &a}, {B, &b}}); }
};

std::string error_of(Kernel& k, const Stmt& body) {
    try {
        k.run(body);
    } catch (const RuntimeError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST(SpmdAsyncCopy, LandsAtTheWaitAndIsSeenAfterTheBarrier) {
    Kernel k;
    k.run(Seq::make({k.issue(), commit(), wait(0), barrier(), k.read_neighbour()}));
    for (int t = 0; t < kThreads; ++t)
        for (int j = 0; j < 4; ++j)
            EXPECT_EQ(k.b.get(t * 4 + j), k.a.get(((t + 1) % kThreads) * 4 + j)) << t << " " << j;
}

TEST(SpmdAsyncCopy, SourceBytesBelowTheSizeFillZeros) {
    Kernel k;
    // Threads below 4 read all 16 bytes, the others 8 (two floats, then zeros); src_bytes 0
    // reads nothing, so its source index may be anything in bounds.
    Expr bytes = select(k.tx < 4, make_const(Int(32), 16), make_const(Int(32), 8));
    k.run(Seq::make({k.issue(0, 0, bytes), commit(), wait(0), barrier(), k.read_neighbour()}));
    for (int t = 0; t < kThreads; ++t) {
        int n = (t + 1) % kThreads;
        for (int j = 0; j < 4; ++j) {
            double want = (n < 4 || j < 2) ? k.a.get(n * 4 + j) : 0.0;
            EXPECT_EQ(k.b.get(t * 4 + j), want) << t << " " << j;
        }
    }
    Kernel z;
    z.run(Seq::make(
        {z.issue(0, 0, make_const(Int(32), 0)), commit(), wait(0), barrier(), z.read_neighbour()}));
    for (int i = 0; i < 4 * kThreads; ++i) EXPECT_EQ(z.b.get(i), 0.0) << i;
}

TEST(SpmdAsyncCopy, MissingWaitIsCaughtDespiteTheBarrier) {
    // The pipeline's iteration without its cp_async_wait: the barrier lands nothing.
    Kernel k;
    std::string e = error_of(k, Seq::make({k.issue(), commit(), barrier(), k.read_neighbour()}));
    EXPECT_NE(e.find("read before cp.async landed; a cp_async_wait is missing"), std::string::npos)
        << e;
    EXPECT_NE(e.find("shared memory S"), std::string::npos) << e;
    // Without the commit the group is still open: a wait does not land it either.
    Kernel open;
    e = error_of(open, Seq::make({open.issue(), wait(0), barrier(), open.read_neighbour()}));
    EXPECT_NE(e.find("before cp.async landed"), std::string::npos) << e;
}

TEST(SpmdAsyncCopy, MissingBarrierAfterTheWaitIsCaught) {
    // Each thread waits for its own copies only: its neighbour's land in the same phase as the
    // read, a race on S.
    Kernel k;
    std::string e = error_of(k, Seq::make({k.issue(), commit(), wait(0), k.read_neighbour()}));
    EXPECT_NE(e.find("race on shared memory S"), std::string::npos) << e;
}

TEST(SpmdAsyncCopy, WaitKeepsTheNewestGroupsInFlight) {
    // Two groups; wait(1) lands the first only.
    auto two = [](const Kernel& k) {
        return Seq::make({k.issue(0, 0), commit(), k.issue(4 * kThreads, 4 * kThreads), commit(),
                          wait(1), barrier()});
    };
    Kernel k;
    k.run(Seq::make({two(k), k.read_neighbour(0)}));
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(k.b.get(t * 4), k.a.get(((t + 1) % kThreads) * 4)) << t;
    Kernel second;
    std::string e = error_of(second, Seq::make({two(second), second.read_neighbour(4 * kThreads)}));
    EXPECT_NE(e.find("read before cp.async landed"), std::string::npos) << e;
    Kernel both;
    both.run(Seq::make({two(both), wait(0), barrier(), both.read_neighbour(4 * kThreads)}));
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(both.b.get(t * 4), both.a.get(4 * kThreads + ((t + 1) % kThreads) * 4)) << t;
}

TEST(SpmdAsyncCopy, PlainWriteToAnElementInFlightIsAnError) {
    Kernel k;
    Stmt write = Store::make(k.S, make_const(Float(32), 1.0), k.tx * 4);
    std::string e = error_of(k, Seq::make({k.issue(), write, commit(), wait(0)}));
    EXPECT_NE(e.find("write to shared memory S"), std::string::npos) << e;
    EXPECT_NE(e.find("a cp_async_wait is missing"), std::string::npos) << e;
}

TEST(SpmdAsyncCopy, MisalignedCopyIsAnError) {
    Kernel k;
    std::string e = error_of(k, Seq::make({k.issue(1), commit(), wait(0)}));
    EXPECT_NE(e.find("aligned to 16 bytes"), std::string::npos) << e;
}
