// Bound inference: the regions and storage of stages computed at a consumer's loop.
#include <gtest/gtest.h>

#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/te/Operation.h"

namespace tessel {
namespace {

// A 3x3 convolution (no padding) over a padded input stage.
struct Conv {
    Tensor X, P, W, Y;
};

Conv conv3x3(int h, int w) {
    Conv c;
    c.X = placeholder({h, w}, Float(32), "X");
    c.P = compute(
        {h, w}, [&](Var i, Var j) { return c.X(i, j) * 2.0f; }, "P");
    c.W = placeholder({3, 3}, Float(32), "W");
    IterVar ry = reduce_axis(Range(0, 3), "ry"), rx = reduce_axis(Range(0, 3), "rx");
    c.Y = compute(
        {h - 2, w - 2},
        [&](Var i, Var j) {
            return sum(c.P(i + ry.var(), j + rx.var()) * c.W(ry, rx), {ry, rx});
        },
        "Y");
    return c;
}

TEST(InferBounds, ConvTilePlusHalo) {
    Conv c = conv3x3(66, 66);  // Y is 64x64
    Schedule s = create_schedule({c.Y});
    int y = s.stage_of(c.Y), p = s.stage_of(c.P);
    s.tile(y, 0, 1, 8, 16);  // i.outer j.outer i.inner j.inner ry rx
    s.compute_at(p, y, 1);   // P per (i.outer, j.outer) tile
    std::vector<StageBounds> b = infer_bounds(s);
    // A tile of 8x16 outputs reads (8+2)x(16+2) inputs of P.
    EXPECT_EQ(to_string(b[p].storage_extent[0]), "10");
    EXPECT_EQ(to_string(b[p].storage_extent[1]), "18");
    EXPECT_EQ(to_string(b[p].region_min[0]), "i0.outer * 8");
    EXPECT_EQ(to_string(b[p].region_min[1]), "i1.outer * 16");
    std::vector<std::vector<Expr>> ext = s.infer_extents();
    ASSERT_EQ(ext[p].size(), 2u);
    EXPECT_EQ(to_string(ext[p][0]), "10");
    EXPECT_EQ(to_string(ext[p][1]), "18");
    // And the lowered program allocates exactly that tile inside the j.outer loop.
    std::string ir = to_string(lower(s, {c.X, c.W, c.Y}));
    EXPECT_NE(ir.find("allocate P: float32[180]"), std::string::npos) << ir;
}

TEST(InferBounds, InnerAttachPointNeedsOneRow) {
    Conv c = conv3x3(34, 34);
    Schedule s = create_schedule({c.Y});
    int y = s.stage_of(c.Y), p = s.stage_of(c.P);
    s.compute_at(p, y, 0);  // per output row i: rows i..i+2 of P, all 34 columns
    std::vector<StageBounds> b = infer_bounds(s);
    EXPECT_EQ(to_string(b[p].storage_extent[0]), "3");
    EXPECT_EQ(to_string(b[p].storage_extent[1]), "34");
}

TEST(InferBounds, NonDividingTileIsClampedAndGuarded) {
    Conv c = conv3x3(32, 32);  // Y is 30x30; tiles of 8 do not divide 30
    Schedule s = create_schedule({c.Y});
    int y = s.stage_of(c.Y), p = s.stage_of(c.P);
    s.split(y, 0, 8);
    s.compute_at(p, y, 0);
    std::vector<StageBounds> b = infer_bounds(s);
    EXPECT_EQ(to_string(b[p].storage_extent[0]), "10");
    // The last tile needs rows 24..31 only: a guard skips the rest.
    ASSERT_FALSE(b[p].guards.empty());
}

TEST(InferBounds, RootStagesComputeTheirWholeDomain) {
    Conv c = conv3x3(20, 20);
    Schedule s = create_schedule({c.Y});
    std::vector<StageBounds> b = infer_bounds(s);
    int p = s.stage_of(c.P);
    EXPECT_EQ(to_string(b[p].storage_extent[0]), "20");
    EXPECT_EQ(to_string(b[p].region_min[0]), "0");
    EXPECT_TRUE(b[p].guards.empty());
}

}  // namespace
}  // namespace tessel
