// storage_swizzle (docs/schedule.md): swizzled shared tiles give the reference's results in the
// SPMD interpreter (copies that threads read back transposed, the shared-memory GEMM, the GEMM
// pipelined with cp.async); a vector store inside a 16-byte chunk stays one dense store; and the
// lowered index function puts the 8 rows of an ldmatrix and the 8 chunks of a quarter warp's
// 16-byte stores in 8 different 16-byte bank groups (32 banks), where the unswizzled layout
// does not.
#include <gtest/gtest.h>

#include <set>

#include "correctness/ScheduleTestUtil.h"
#include "correctness/SharedGemm.h"
#include "correctness/SwizzledCopy.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRVisitor.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::SharedGemm;
using tessel::testing::SwizzledCopy;

namespace {

struct CopyCase {
    int rows, cols;
    Type t;
    int vector, bits;
};

// The swizzle calls of a lowered function (their constants), and whether a store writes a dense
// vector at a swizzled base.
struct Swizzles {
    std::vector<const Call*> calls;
    bool dense_store = false;
};

Swizzles swizzles_of(const Stmt& body) {
    Swizzles z;
    post_order_visit(body, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::Call &&
            static_cast<const Call*>(n)->op == Intrinsic::swizzle)
            z.calls.push_back(static_cast<const Call*>(n));
        if (n->node_type != IRNodeType::Store) return;
        const Ramp* r = static_cast<const Store*>(n)->index.as<Ramp>();
        // swizzle(x) or swizzle(x) + y (whole phase cycles moved out by the simplifier)
        const Add* add = r ? r->base.as<Add>() : nullptr;
        const Call* c = add ? add->a.as<Call>() : r ? r->base.as<Call>() : nullptr;
        z.dense_store = z.dense_store || (c && c->op == Intrinsic::swizzle);
    });
    return z;
}

// The storage index of flat offset `o`, through the lowered swizzle call `z` (folded by the
// simplifier: the function the generated code computes).
int64_t swizzled(const Call* z, int64_t o) {
    Expr e = simplify(Call::make(Intrinsic::swizzle, {make_const(z->args[0].type(), o), z->args[1],
                                                      z->args[2], z->args[3]}));
    return as_const_int(e).value();
}

// The 16-byte bank groups (4 banks each, 8 per 128 bytes) of 8 flat offsets are all different.
bool conflict_free(const std::vector<int64_t>& offsets, int elem_bytes) {
    std::set<int64_t> groups;
    for (int64_t o : offsets) groups.insert(o * elem_bytes / 16 % 8);
    return groups.size() == offsets.size();
}

}  // namespace

TEST(SpmdSwizzle, TransposedCopiesMatchReference) {
    const CopyCase cases[] = {
        {32, 32, Float(32), 4, 3},   // rows of 128 bytes: 8 phases
        {32, 64, Float(16), 8, 3},   // 128 bytes, halves
        {16, 16, Float(32), 4, 3},   // 64 bytes: two rows per phase, 4 phases
        {16, 128, Float(16), 8, 3},  // 256 bytes
        {32, 8, Float(32), 1, 3},    // 32 bytes, scalar copies: 4 rows per phase, 2 phases
        {32, 32, Float(32), 4, 2},   // 4 phases
        {32, 32, Int(8), 16, 1},     // 2 phases of 16 one-byte elements
    };
    for (const CopyCase& c : cases) {
        SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.cols) + " " + c.t.str() +
                     " bits " + std::to_string(c.bits));
        SwizzledCopy k(c.rows, c.cols, c.t, c.vector);
        k.s.storage_swizzle(k.shared, c.bits);
        expect_matches_reference(k.s);
        LoweredFunc f = lower(k.s, {k.A, k.O});
        Swizzles z = swizzles_of(f.body);
        ASSERT_FALSE(z.calls.empty()) << to_string(f);
        if (c.vector > 1) {
            EXPECT_TRUE(z.dense_store) << to_string(f);
        }
    }
}

TEST(SpmdSwizzle, SharedGemmMatchesReference) {
    SharedGemm g(32, 32, 48, 16);  // 16 x 16 float tiles: rows of 64 bytes
    g.s.storage_swizzle(g.s.stage_of(g.As));
    g.s.storage_swizzle(g.s.stage_of(g.Bs));
    expect_matches_reference(g.s, 48);
}

TEST(SpmdSwizzle, PipelinedSharedGemmMatchesReference) {
    SharedGemm g(32, 32, 80, 16);  // k.outer runs 5 times over 3 copies
    for (const Tensor& t : {g.As, g.Bs}) {
        g.s.storage_swizzle(g.s.stage_of(t));
        g.s.pipeline(g.s.stage_of(t), 3);
    }
    expect_matches_reference(g.s, 80);
    LoweredFunc f = lower(g.s, {g.A, g.B, g.C});
    bool cp_async = false;
    post_order_visit(f.body, [&](const IRNode* n) {
        cp_async = cp_async || (n->node_type == IRNodeType::Call &&
                                static_cast<const Call*>(n)->op == Intrinsic::cp_async);
    });
    EXPECT_TRUE(cp_async) << to_string(f);
}

// ldmatrix reads 8 rows of 16 bytes at one column (one phase of the instruction); a quarter warp
// stores 8 consecutive 16-byte chunks of the row-major tile (the cooperative copies).
TEST(SpmdSwizzle, LdmatrixRowsAndWarpStoresHitEveryBank) {
    const CopyCase cases[] = {
        {128, 32, Float(16), 8, 3},  // tutorial 07's A tile: rows of 64 bytes
        {32, 128, Float(16), 8, 3},  // its B tile: rows of 256 bytes
        {64, 64, Float(16), 8, 3},   // rows of 128 bytes
        {32, 16, Float(16), 8, 3},   // rows of 32 bytes
        {128, 32, Float(32), 4, 3},  // the tf32 A tile: rows of 128 bytes
    };
    for (const CopyCase& c : cases) {
        SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.cols) + " " + c.t.str());
        SwizzledCopy k(c.rows, c.cols, c.t, c.vector);
        k.s.storage_swizzle(k.shared, c.bits);
        LoweredFunc f = lower(k.s, {k.A, k.O});  // owns the calls z points to
        Swizzles z = swizzles_of(f.body);
        ASSERT_FALSE(z.calls.empty());
        const Call* sw = z.calls.front();
        const int eb = c.t.bytes(), v = 16 / eb;
        bool plain_conflicts = false;
        for (int r0 = 0; r0 < c.rows; r0 += 8)
            for (int col = 0; col < c.cols; col += v) {
                std::vector<int64_t> rows, plain;
                for (int r = r0; r < r0 + 8; ++r) {
                    rows.push_back(swizzled(sw, int64_t(r) * c.cols + col));
                    plain.push_back(int64_t(r) * c.cols + col);
                }
                EXPECT_TRUE(conflict_free(rows, eb)) << "rows " << r0 << "+, column " << col;
                plain_conflicts = plain_conflicts || !conflict_free(plain, eb);
            }
        EXPECT_TRUE(plain_conflicts) << "the unswizzled layout has no ldmatrix conflicts here";
        for (int64_t q0 = 0; q0 < int64_t(c.rows) * c.cols / v; q0 += 8) {
            std::vector<int64_t> chunks;
            for (int64_t q = q0; q < q0 + 8; ++q) chunks.push_back(swizzled(sw, q * v));
            EXPECT_TRUE(conflict_free(chunks, eb)) << "chunks " << q0 << "+";
        }
    }
}

// The interpreter reads the swizzle from the buffer before flattening (BufferLoad/BufferStore) and
// from the swizzle calls after it; run-time bounds checks accept every swizzled access.
TEST(SpmdSwizzle, UnflattenedAndBoundsCheckedIRMatchReference) {
    SwizzledCopy k(32, 64, Float(16), 8);
    k.s.storage_swizzle(k.shared);
    HostArray a = HostArray::random(Float(16), {32, 64}, 3);
    HostArray ref = evaluate_reference({k.O}, {{k.A, a}})[0];
    LowerOptions checked, unflattened;
    checked.bounds_check = true;
    unflattened.stop_after = "partition_loops";
    for (const LowerOptions& o : {checked, unflattened}) {
        SCOPED_TRACE(o.bounds_check ? "bounds checks" : "before storage_flatten");
        LoweredFunc f = lower(k.s, {k.A, k.O}, "main", o);
        HostArray out(Float(16), {64, 32});
        run_lowered(f, {&a, &out});
        CompareResult r = compare_to_reference(out, ref, tolerance_for(Float(16), 1));
        EXPECT_TRUE(r.ok) << r.message() << "\n" << to_string(f);
    }
}
