// A cross-thread reduction (a reduction loop bound to threadIdx) with a data-parallel loop inside
// the reduction loops: refused by bind, or by the reorder that would move the loop inside, not
// at lowering.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

namespace {

struct RowSum {
    Tensor X = placeholder({8, 64}, Float(32), "X");
    IterVar k = reduce_axis({0, 64}, "k");
    Tensor S = compute(
        {8}, [&](Var i) { return sum(X(i, k.var()), {k}); }, "S");
};

}  // namespace

TEST(ErrorCrossThreadReductionSpatialInside, Bind) {
    RowSum r;
    Schedule s = create_schedule({r.S});
    s.reorder(1, {1, 0});  // k, i
    expect_schedule_error([&] { s.bind(1, 0, IterAnnotation::ThreadX); },
                          {"bind", "stage 'S'", "cross-thread reduction", "'i0' is inside them",
                           "reorder it outwards"});
    EXPECT_EQ(s.steps().size(), 1u);
}

TEST(ErrorCrossThreadReductionSpatialInside, Reorder) {
    RowSum r;
    Schedule s = create_schedule({r.S});
    s.bind(1, 1, IterAnnotation::ThreadX);  // i, k bound: a legal cross-thread reduction
    expect_schedule_error(
        [&] {
            s.reorder(1, {1, 0});
        },
        {"reorder", "stage 'S'", "cross-thread reduction", "'i0' is inside"});
    EXPECT_EQ(s.steps().size(), 1u);
}

TEST(ErrorCrossThreadReductionSpatialInside, TileChangesNothingWhenItsReorderFails) {
    // Found by the schedule fuzzer (argmax): tile's splits were kept when its reorder failed.
    RowSum r;
    Schedule s = create_schedule({r.S});
    s.split(1, 1, 8);                       // i, k.outer, k.inner
    s.bind(1, 2, IterAnnotation::ThreadX);  // a cross-thread reduction over k.inner
    std::vector<int> leaf = s.stage(1).leaf;
    // tile(i, k.outer) would reorder i.inner inside k.outer.
    expect_schedule_error([&] { s.tile(1, 0, 1, 2, 2); }, {"reorder", "cross-thread reduction"});
    EXPECT_EQ(s.steps().size(), 2u);
    EXPECT_EQ(s.stage(1).leaf, leaf);
    EXPECT_EQ(s.stage(1).iters.size(), 4u);  // i, k, k.outer, k.inner: tile's splits are gone
}
