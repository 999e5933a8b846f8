// SPMD loop interpreter and Hopper's TMA stores (ir/IR.h, tma_store; Schedule::tma_store): an
// element-wise C = 2 A whose 32 x 72 tiles 64 threads compute into a shared stage, two tiles a
// block in turn, each copied out by one thread's bulk tensor stores; at m = 100 the last tile
// runs past the tensor's rows and stores only the rows inside. Without the fence that makes the
// threads' stores visible to the asynchronous proxy, or without the wait before the next tile
// overwrites the shared tile the stores read, the interpreter says what breaks.
#include "error/ExpectRuntimeError.h"
#include "error/RemoveCalls.h"
#include "tessel/Error.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

// (A namespace of its own: the error tests build as unity files.)
namespace tma_store_test {

using namespace tessel;
using tessel::testing::expect_runtime_error;
using tessel::testing::RemoveCalls;

constexpr int kN = 72, kTile = 32;

// m = 100: the last tile runs past the rows (its iteration is then peeled off the loop, with an
// allocation of its own); m = 128: each block's loop over its tiles stays, its shared tile reused.
struct TiledCopy {
    Tensor A, C;
    LoweredFunc f;
    explicit TiledCopy(int m) {
        A = placeholder({m, kN}, Float(32), "A");
        C = compute(
            {m, kN}, [&](Var i, Var j) { return A(i, j) * make_const(Float(32), 2); }, "C");
        Schedule s = create_schedule({C});
        const int cs = s.cache_write(s.stage_of(C), "shared");
        const int c = s.stage_of(C);
        s.split(c, 0, kTile);  // [tile, i, j]
        s.split(c, 0, 2);      // [block, tile, i, j]: 2 blocks of 2 tiles
        s.bind(c, 0, IterAnnotation::BlockX);
        s.compute_at(cs, c, 1);
        s.tma_store(c);
        s.fuse(cs, {0, 1});  // [e]
        s.split(cs, 0, 64);  // [e / 64, threads]
        s.bind(cs, 1, IterAnnotation::ThreadX);
        f = lower(s, {A, C});
    }
};

struct Arrays {
    explicit Arrays(int m) : a(HostArray::random(Float(32), {m, kN}, 3)), c(Float(32), {m, kN}) {}
    HostArray a, c;
};

void expect_broken_without(Intrinsic op, std::initializer_list<std::string> parts) {
    TiledCopy t(128);
    RemoveCalls r(op);
    t.f.body = r.mutate(t.f.body);
    EXPECT_GE(r.removed, 1);
    Arrays x(128);
    expect_runtime_error([&] { run_lowered(t.f, {&x.a, &x.c}); }, parts);
}

void expect_copied(int m) {
    TiledCopy t(m);
    Arrays x(m);
    run_lowered(t.f, {&x.a, &x.c});
    for (int e = 0; e < m * kN; ++e) EXPECT_EQ(x.c.get(e), 2 * x.a.get(e)) << e;
}

}  // namespace tma_store_test

TEST(LoopInterpreterError, TmaStoreCopiesTheTilesOut) {
    tma_store_test::expect_copied(100);
    tma_store_test::expect_copied(128);
}

TEST(LoopInterpreterError, TmaStoreOfUnfencedStoresIsReported) {
    tma_store_test::expect_broken_without(
        tessel::Intrinsic::fence_proxy_async,
        {"tma_store", "fence_proxy_async before the barrier", "C.shared"});
}

TEST(LoopInterpreterError, TmaStoreTileOverwrittenBeforeItsWaitIsReported) {
    tma_store_test::expect_broken_without(
        tessel::Intrinsic::tma_store_wait,
        {"C.shared", "still reads", "a tma_store_wait is missing before the overwrite"});
}
