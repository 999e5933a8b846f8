// SPMD loop interpreter and Hopper's warp-group mma (ir/IR.h, wgmma): tutorial 08's step 1 (two
// warp groups, k tiles of 64 pipelined by cp.async) computes the product; with its wgmma_wait,
// fence_proxy_async or wgmma_fence calls removed, the asynchronous proxy's rule the GPU would
// break silently is reported, naming the buffer. With more k tiles than pipeline stages the k loop
// keeps a group in flight into the next iteration (wgmma_wait(1), a barrier, then the copies):
// without the wait after the loop, or without that barrier, the interpreter says what breaks.
// The same GEMM with its tiles fetched by s[T].tma() (TMA copies on mbarriers) computes the
// product with as many k tiles as the pipeline holds, more (refills) and one (no loop); without
// its mbarrier_wait or mbarrier_expect_tx calls, or the barrier that orders a refill after the
// wgmmas reading the tile, the interpreter reports it. Warp-specialized (a producer warp group
// issues the copies, the consumers release each copy on an mbarrier), it computes the product;
// without the producer's waits for the releases, or without the releases, it is reported.
#include "error/ExpectRuntimeError.h"
#include "error/RemoveCalls.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;
using tessel::testing::RemoveCalls;

namespace {

constexpr int kM = 128, kN = 128;

// C (float32) = A (float16, m x k) @ B (float16, k x n) with wgmma m64n128k16 per warp.
struct WgmmaGemm {
    int kK;
    Tensor A, B, C;
    LoweredFunc f;
    explicit WgmmaGemm(int k = 256, bool tma = false, bool ws = false) : kK(k) {
        A = placeholder({kM, kK}, Float(16), "A");
        B = placeholder({kK, kN}, Float(16), "B");
        IterVar r = reduce_axis({0, kK}, "k");
        C = compute(
            {kM, kN},
            [&](Var i, Var j) {
                return sum(cast(Float(32), A(i, r.var())) * cast(Float(32), B(r.var(), j)), {r});
            },
            "C");
        Schedule s = create_schedule({C});
        const int as = s.cache_read(s.stage_of(A), "shared", {s.stage_of(C)});
        const int bs = s.cache_read(s.stage_of(B), "shared", {s.stage_of(C)});
        const int cf = s.cache_write(s.stage_of(C), "warp");
        const int c = s.stage_of(C);
        // C: [i / 64 (group), i / 16 % 4 (warp), j / 8, 16, 8].
        s.split(c, 0, 64);  // [g, i, j]
        s.split(c, 1, 16);  // [g, w, i, j]
        s.split(c, 3, 8);   // [g, w, i, fj, j]
        s.reorder(c, {0, 1, 3, 2, 4});
        s.bind(c, 0, IterAnnotation::ThreadZ);
        s.bind(c, 1, IterAnnotation::ThreadY);
        s.unroll(c, 2);
        s.tensorize(c, 3, "store_c");
        s.compute_at(cf, c, 1);
        // The accumulator: [k / 64, k / 16 % 4, i, j, k % 16].
        s.split(cf, 2, 64);
        s.split(cf, 3, 16);
        s.reorder(cf, {2, 3, 0, 1, 4});
        s.unroll(cf, 1);
        s.tensorize(cf, 2, "wgmma_m64n128k16_f16");
        for (int t : {as, bs}) s.compute_at(t, cf, 0);
        s.storage_split(bs, 1, 64);  // B's column panels: [n / 64][k][64]
        s.storage_reorder(bs, {1, 0, 2});
        for (int t : {as, bs}) {
            s.storage_swizzle(t);
            if (tma) {
                s.tma(t);
                s.pipeline(t, 4);
                if (ws) s.warp_specialize(t);
                continue;
            }
            s.split(t, 1, 8);   // [a, b, v]
            s.fuse(t, {0, 1});  // [t, v]
            s.split(t, 0, 32);  // [t, x, v]
            s.split(t, 0, 4);   // [t, y, x, v]
            s.split(t, 0, 2);   // [o, z, y, x, v]
            s.bind(t, 1, IterAnnotation::ThreadZ);
            s.bind(t, 2, IterAnnotation::ThreadY);
            s.bind(t, 3, IterAnnotation::ThreadX);
            s.unroll(t, 0);
            s.vectorize(t, 4);
            s.pipeline(t, 4);
        }
        f = lower(s, {A, B, C});
    }
};

// Drops wgmma_wait(0) (only the wait(1)s of the k loop stay), or the barrier (and its proxy
// fence, where there is one) that follows each wgmma_wait(1).
class RemoveLoopSync : public IRMutator {
public:
    explicit RemoveLoopSync(bool barrier) : barrier_(barrier) {}
    using IRMutator::visit;
    int removed = 0;

protected:
    static bool is(const Stmt& s, Intrinsic op) {
        const auto* e = s.as<Evaluate>();
        const Call* c = e ? e->value.as<Call>() : nullptr;
        return c && c->op == op;
    }
    static std::optional<int64_t> wait_count(const Stmt& s) {
        const auto* e = s.as<Evaluate>();
        const Call* c = e ? e->value.as<Call>() : nullptr;
        if (!c || c->op != Intrinsic::wgmma_wait) return std::nullopt;
        return as_const_int(c->args[0]);
    }
    Stmt visit(const Seq* op) override {
        Stmt m = IRMutator::visit(op);
        const auto* seq = m.as<Seq>();
        if (!seq) return m;
        std::vector<Stmt> out;
        for (size_t i = 0; i < seq->stmts.size(); ++i) {
            const Stmt& st = seq->stmts[i];
            if (!barrier_ && wait_count(st) == 0) {
                ++removed;
                continue;
            }
            out.push_back(st);
            if (!barrier_ || wait_count(st) != 1) continue;
            if (i + 1 < seq->stmts.size() && is(seq->stmts[i + 1], Intrinsic::fence_proxy_async))
                ++i;  // the barrier's fence (cp.async tiles have one; TMA tiles need none)
            if (i + 1 < seq->stmts.size() && is(seq->stmts[i + 1], Intrinsic::thread_barrier)) {
                ++i;
                ++removed;
            }
        }
        return Seq::make(std::move(out));
    }

private:
    bool barrier_;
};

// Drops the mbarrier_waits on barriers whose name ends with `suffix`.
class RemoveWaitsOn : public IRMutator {
public:
    explicit RemoveWaitsOn(std::string suffix) : suffix_(std::move(suffix)) {}
    using IRMutator::visit;
    int removed = 0;

protected:
    Stmt visit(const Evaluate* op) override {
        const Call* c = op->value.as<Call>();
        if (!c || c->op != Intrinsic::mbarrier_wait) return IRMutator::visit(op);
        const std::string& name = c->args[0].as<Variable>()->name;
        if (!name.ends_with(suffix_)) return IRMutator::visit(op);
        ++removed;
        return Evaluate::make(make_const(Int(32), 0));
    }

private:
    std::string suffix_;
};

struct Inputs {
    explicit Inputs(int kK)
        : a(HostArray::random(Float(16), {kM, kK}, 1)),
          b(HostArray::random(Float(16), {kK, kN}, 2)) {}
    HostArray a, b;
    HostArray c{Float(32), {kM, kN}};
};

template <typename Mutator>
void expect_broken(WgmmaGemm g, Mutator remover, std::initializer_list<std::string> parts) {
    g.f.body = remover.mutate(g.f.body);
    EXPECT_GE(remover.removed, 1);
    Inputs in(g.kK);
    expect_runtime_error([&] { run_lowered(g.f, {&in.a, &in.b, &in.c}); }, parts);
}

void expect_broken_without(Intrinsic op, std::initializer_list<std::string> parts) {
    expect_broken(WgmmaGemm(), RemoveCalls(op), parts);
}

void expect_product(int kK, bool tma = false, bool ws = false) {
    WgmmaGemm g(kK, tma, ws);
    Inputs in(kK);
    run_lowered(g.f, {&in.a, &in.b, &in.c});
    for (int i = 0; i < kM; i += 7)
        for (int j = 0; j < kN; ++j) {
            double want = 0;
            for (int k = 0; k < kK; ++k) want += in.a.get(i * kK + k) * in.b.get(k * kN + j);
            EXPECT_NEAR(in.c.get(i * kN + j), want, 1e-3) << i << " " << j;
        }
}

}  // namespace

TEST(LoopInterpreterError, WgmmaGemmComputesTheProduct) {
    expect_product(256);
}

TEST(LoopInterpreterError, WgmmaGemmWithGroupsInFlightAcrossIterationsComputesTheProduct) {
    expect_product(512);  // 8 k tiles, 4 stages: a k loop with wgmma_wait(1)
}

TEST(LoopInterpreterError, WgmmaGroupLeftInFlightAfterTheLoopIsReported) {
    // The last group's accumulators are still pending when store_c reads them, although the
    // earlier groups (same registers) were retired by the loop's wait(1).
    expect_broken(WgmmaGemm(512), RemoveLoopSync(false), {"a wgmma_wait is missing", "register"});
}

TEST(LoopInterpreterError, WgmmaCopyOverAStageAnotherGroupStillReadsIsReported) {
    expect_broken(WgmmaGemm(512), RemoveLoopSync(true),
                  {"still reads", "a wgmma_wait is missing before the overwrite"});
}

TEST(LoopInterpreterError, WgmmaWithoutItsWaitIsReported) {
    expect_broken_without(Intrinsic::wgmma_wait, {"a wgmma_wait is missing", "thread ("});
}

TEST(LoopInterpreterError, WgmmaReadingUnfencedStoresIsReported) {
    expect_broken_without(Intrinsic::fence_proxy_async,
                          {"wgmma", "shared memory", "fence_proxy_async before the barrier"});
}

TEST(LoopInterpreterError, WgmmaAfterRegisterWritesWithoutAFenceIsReported) {
    expect_broken_without(Intrinsic::wgmma_fence, {"wgmma", "since its last wgmma_fence"});
}

TEST(LoopInterpreterError, TmaGemmComputesTheProduct) {
    expect_product(256, true);  // 4 k tiles, 4 copies: no refill
    expect_product(512, true);  // 8 k tiles: each copy refilled on its mbarrier's next phase
    expect_product(64, true);   // the k loop simplified away: one copy, one phase
}

TEST(LoopInterpreterError, TmaTileReadBeforeItsMbarrierWaitIsReported) {
    expect_broken(WgmmaGemm(512, true), RemoveCalls(Intrinsic::mbarrier_wait),
                  {"TMA copy", "an mbarrier_wait is missing"});
}

TEST(LoopInterpreterError, TmaWithoutTheBytesAnnouncedNeverCompletes) {
    expect_broken(WgmmaGemm(512, true), RemoveCalls(Intrinsic::mbarrier_expect_tx),
                  {"mbarrier_wait never completes", "arrivals"});
}

TEST(LoopInterpreterError, TmaRefillWithoutTheBarrierAfterTheWgmmasIsReported) {
    expect_broken(WgmmaGemm(512, true), RemoveLoopSync(true), {"tma_load into", "shared memory"});
}

TEST(LoopInterpreterError, WarpSpecializedGemmComputesTheProduct) {
    expect_product(512, true, true);  // 8 k tiles through 4 copies: each released and refilled
    expect_product(128, true, true);  // fewer k tiles than copies
}

TEST(LoopInterpreterError, WarpSpecializedRefillBeforeTheReleaseIsReported) {
    // The producer, not waiting for the releases, refills each copy before the consumers read
    // it: a copy's "full" barrier runs two phases ahead, and the consumer waiting for the first
    // phase's parity waits for a phase that never comes (on a GPU it would read the wrong tiles).
    expect_broken(WgmmaGemm(512, true, true), RemoveWaitsOn(".empty"),
                  {"mbarrier_wait never completes", "waits for phase 2"});
}

TEST(LoopInterpreterError, WarpSpecializedConsumersThatNeverReleaseAreReported) {
    expect_broken(WgmmaGemm(512, true, true), RemoveCalls(Intrinsic::mbarrier_arrive),
                  {"mbarrier_wait never completes"});
}
