// lower_async_copies: the stores of a marked fetch from global into shared memory become cp_async
// copies of 16, 8 or 4 bytes (zero fill for guards), other stores stay; before and after give the
// same result in the SPMD interpreter.
#include <gtest/gtest.h>

#include <sstream>

#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/LowerAsyncCopies.h"

using namespace tessel;

namespace {

constexpr int kThreads = 8;

Stmt call(Intrinsic op, std::vector<Expr> args = {}) {
    return Evaluate::make(Call::make(op, std::move(args)));
}

/// The bytes of every cp_async in `s`, in order.
std::vector<int64_t> copies(const Stmt& s) {
    std::vector<int64_t> out;
    post_order_visit(s, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Call) return;
        const Call* c = static_cast<const Call*>(n);
        if (c->op == Intrinsic::cp_async) out.push_back(*as_const_int(c->args[4]));
    });
    return out;
}

/// A block of kThreads threads: `store(S, A, tx)` into shared S (`lanes` * kThreads elements of
/// `type`, marked as a pipelined fetch), commit, wait, barrier, then S copied out into B.
struct Fetch {
    Var A{"A", Handle()}, B{"B", Handle()}, S{"S", Handle()}, tx{"tx"};
    Type type = Float(32);
    int lanes = 4;

    template <typename F>
    Stmt kernel(F store) const {
        Stmt fetch = AttrStmt::make("async_copy", make_const(Int(32), 3), store(*this));
        std::vector<Stmt> out;
        for (int j = 0; j < lanes; ++j)
            out.push_back(Store::make(B, Load::make(type, S, tx * lanes + j), tx * lanes + j));
        Stmt body = Seq::make({fetch, call(Intrinsic::cp_async_commit),
                               call(Intrinsic::cp_async_wait, {make_const(Int(32), 0)}),
                               call(Intrinsic::thread_barrier), Seq::make(out)});
        Stmt threads = For::make(tx, 0, kThreads, ForKind::ThreadBound, body, "threadIdx.x");
        Stmt alloc = Allocate::make(S, type, {make_const(Int(32), lanes * kThreads)},
                                    StorageScope::Shared, threads);
        return For::make(Var("bx"), 0, 1, ForKind::ThreadBound, alloc, "blockIdx.x");
    }
    HostArray run(const Stmt& s) const {
        HostArray a = HostArray::random(type, {int64_t(lanes) * (kThreads + 1)}, 3);
        HostArray b(type, {int64_t(lanes) * kThreads});
        run_stmt(s, {{A, &a}, {B, &b}});
        return b;
    }
    Expr vec(const Var& buf, Expr base, int stride = 1) const {
        return Load::make(type.with_lanes(lanes), buf, Ramp::make(std::move(base), stride, lanes));
    }
};

/// Lowers `before`, checks the copies it made, and that both compute the same.
void check(const Fetch& f, const Stmt& before, const std::vector<int64_t>& bytes) {
    Stmt after = lower_async_copies(before);
    EXPECT_EQ(copies(after), bytes) << after;
    std::ostringstream os;
    os << after;
    EXPECT_EQ(os.str().find("async_copy"), std::string::npos) << "the mark is left";
    HostArray want = f.run(before), got = f.run(after);
    for (int i = 0; i < f.lanes * kThreads; ++i) EXPECT_EQ(got.get(i), want.get(i)) << i;
}

}  // namespace

TEST(LowerAsyncCopies, DenseAlignedVectorIsOne16ByteCopy) {
    Fetch f;
    check(f, f.kernel([](const Fetch& k) {
        return Store::make(k.S, k.vec(k.A, k.tx * 4), Ramp::make(k.tx * 4, 1, 4));
    }),
          {16});
}

TEST(LowerAsyncCopies, GuardBecomesZeroFill) {
    Fetch f;
    check(f, f.kernel([](const Fetch& k) {
        Expr v = if_then_else(k.tx < 5, k.vec(k.A, k.tx * 4),
                              Broadcast::make(make_const(Float(32), 0.0), 4));
        return Store::make(k.S, v, Ramp::make(k.tx * 4, 1, 4));
    }),
          {16});
}

TEST(LowerAsyncCopies, UnprovenAlignmentFallsBackToSmallerCopies) {
    Fetch f;
    // Source at 4 * tx + 2: 8-byte aligned only; at 4 * tx + 1: 4-byte copies.
    check(f, f.kernel([](const Fetch& k) {
        return Store::make(k.S, k.vec(k.A, k.tx * 4 + 2), Ramp::make(k.tx * 4, 1, 4));
    }),
          {8, 8});
    check(f, f.kernel([](const Fetch& k) {
        return Store::make(k.S, k.vec(k.A, k.tx * 4 + 1), Ramp::make(k.tx * 4, 1, 4));
    }),
          {4, 4, 4, 4});
}

TEST(LowerAsyncCopies, ScatterAndPerLaneGuardGiveOneCopyPerLane) {
    Fetch f;
    // A transposing store: lane j of thread tx goes to S[tx + 8 j].
    check(f, f.kernel([](const Fetch& k) {
        return Store::make(k.S, k.vec(k.A, k.tx * 4), Ramp::make(k.tx, kThreads, 4));
    }),
          {4, 4, 4, 4});
    // A guard per lane (a tile's k edge): lanes past 29 of A read zero.
    check(f, f.kernel([](const Fetch& k) {
        Expr c = Ramp::make(k.tx * 4, 1, 4) < Broadcast::make(make_const(Int(32), 29), 4);
        Expr v =
            if_then_else(c, k.vec(k.A, k.tx * 4), Broadcast::make(make_const(Float(32), 0.0), 4));
        return Store::make(k.S, v, Ramp::make(k.tx * 4, 1, 4));
    }),
          {4, 4, 4, 4});
}

// 2-byte lanes cannot be copied one by one (cp.async moves 4 to 16 bytes): where the guard holds
// for a prefix of the lanes (the k edge of a row padded to whole vectors), one copy of 16 bytes
// takes the bytes of the lanes inside and zero-fills the rest; any other guard stays a store.
TEST(LowerAsyncCopies, TwoByteLanesGuardedOnAPrefixAreOneZeroFilledCopy) {
    Fetch f;
    f.type = Float(16);
    f.lanes = 8;
    auto guarded = [](Expr c) {
        return [c](const Fetch& k) {
            Expr zero = Broadcast::make(make_const(Float(16), 0.0), 8);
            return Store::make(k.S, if_then_else(c, k.vec(k.A, k.tx * 8), zero),
                               Ramp::make(k.tx * 8, 1, 8));
        };
    };
    Expr lanes = Ramp::make(f.tx * 8, 1, 8);
    check(f, f.kernel(guarded(lanes < Broadcast::make(make_const(Int(32), 29), 8))), {16});
    check(f,
          f.kernel(guarded(Broadcast::make(f.tx < 6, 8) &&
                           lanes <= Broadcast::make(make_const(Int(32), 29), 8))),
          {16});
    check(f, f.kernel(guarded(lanes > Broadcast::make(make_const(Int(32), 29), 8))), {});
}

TEST(LowerAsyncCopies, ComputedValuesStayPlainStores) {
    Fetch f;
    check(f, f.kernel([](const Fetch& k) {
        Expr v = k.vec(k.A, k.tx * 4) * Broadcast::make(make_const(Float(32), 2.0), 4);
        return Store::make(k.S, v, Ramp::make(k.tx * 4, 1, 4));
    }),
          {});
}
