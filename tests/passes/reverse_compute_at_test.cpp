// reverse_compute_at: a consumer computed inside its producer's loop, after the producer's body
// there. Where the producer's iterations each write a whole tile of what the consumer reads (an
// element-wise consumer), the consumer follows each; where several of them write the parts one
// tile of it sums (split-K's partial sums over GPU blocks), the last block to finish the tile
// sums it (tile_arrive). Checked against plain loops in the loop interpreter (SPMD for the GPU
// schedules, before and after the host/device split; it checks that the counters end at zero),
// and the errors. The CUDA source: codegen/cuda_reverse_compute_at_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/Builders.h"
#include "tessel/Error.h"
#include "tessel/HostArray.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/te/Operation.h"

namespace tessel {
namespace {

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// R = max(A * 2, 0) over 10 x 12: R computed after each row of B = A * 2.
TEST(ReverseComputeAt, FollowsEachIteration) {
    Tensor A = placeholder({10, 12}, Float(32), "A");
    Tensor B = compute(
        {10, 12}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    Tensor R = compute(
        {10, 12}, [&](Var i, Var j) { return max(B(i, j) - 1.0f, 0.0f); }, "R");
    Schedule s = create_schedule({R});
    const int b = s.stage_of(B), r = s.stage_of(R);
    s.split(b, 0, 4);  // B: i.outer, i.inner, j; R after each 4-row tile (the last one 2 rows)
    s.reverse_compute_at(r, b, 0);
    std::vector<StageBounds> bounds = infer_bounds(s);
    EXPECT_EQ(bounds[r].arrivals, 1);
    EXPECT_EQ(to_string(bounds[r].region_bound[0]), "4");
    LoweredFunc f = lower(s, {A, R}, "main", LowerOptions{});
    HostArray a = HostArray::random(Float(32), {10, 12}, 3, -1.0, 1.0);
    HostArray out(Float(32), {10, 12});
    run_lowered(f, {&a, &out});
    for (int64_t i = 0; i < 120; ++i)
        EXPECT_NEAR(out.get(i), std::max(a.get(i) * 2.0 - 1.0, 0.0), 1e-6) << i;
    EXPECT_EQ(s.to_python().find("reverse_compute_at") != std::string::npos, true);
}

void expect_split_k(const LoweredFunc& f) {
    HostArray a = HostArray::random(Float(32), {40, 96}, 5, -1.0, 1.0);
    HostArray b = HostArray::random(Float(32), {96, 24}, 6, -1.0, 1.0);
    HostArray y(Float(32), {40, 24});
    // (The interpreter checks that every counter ends at zero: each tile had all its arrivals.)
    run_lowered(f, {&a, &b, &y});
    for (int64_t i = 0; i < 40; ++i)
        for (int64_t j = 0; j < 24; ++j) {
            double ref = 0;
            for (int64_t k = 0; k < 96; ++k) ref += a.get(i * 96 + k) * b.get(k * 24 + j);
            ASSERT_NEAR(y.get(i * 24 + j), ref * 0.5, 1e-4) << i << ", " << j;
        }
}

TEST(ReverseComputeAt, LastBlockOfATileSumsTheParts) {
    for (int blocks : {0, 7}) {
        SCOPED_TRACE(blocks);
        testing::SplitKProduct w(4, blocks);
        std::vector<StageBounds> bounds = infer_bounds(w.s);
        EXPECT_EQ(bounds[w.y].arrivals, 4);
        EXPECT_EQ(bounds[w.y].arrival_tiles, 15);  // 5 x 3 tiles of 8 x 8
        LoweredFunc f = lower(w.s, {w.A, w.B, w.Y}, "main", LowerOptions{});
        std::string ir = to_string(f);
        EXPECT_TRUE(mentions(ir, "tile_arrive(")) << ir;
        EXPECT_TRUE(mentions(ir, "zeroed_workspace")) << ir;
        expect_split_k(f);
        // Split into kernels: one kernel, the counters a zeroed workspace around it.
        LoweredFunc split =
            lower(w.s, {w.A, w.B, w.Y}, Target("cuda -arch=sm_80"), "main", LowerOptions{});
        std::string sir = to_string(split);
        EXPECT_TRUE(mentions(sir, "attr device_kernel = 0")) << sir;
        EXPECT_FALSE(mentions(sir, "attr device_kernel = 1")) << sir;
        EXPECT_TRUE(mentions(sir, "zeroed_workspace")) << sir;
        expect_split_k(split);
    }
}

TEST(ReverseComputeAt, Errors) {
    Tensor A = placeholder({8, 8}, Float(32), "A");
    Tensor B = compute(
        {8, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Tensor T = compute(
        {8, 8}, [&](Var i, Var j) { return A(j, i); }, "T");
    Tensor R = compute(
        {8, 8}, [&](Var i, Var j) { return B(i, 0) + T(i, j); }, "R");
    Schedule s = create_schedule({R});
    const int b = s.stage_of(B), t = s.stage_of(T), r = s.stage_of(R);
    auto fails = [&](auto f, const std::string& what) {
        try {
            f();
            ADD_FAILURE() << "expected a ScheduleError naming: " << what;
        } catch (const ScheduleError& e) {
            EXPECT_TRUE(mentions(e.what(), what)) << e.what();
        }
    };
    // R reads one column of B: B's axis 1 is neither R's own nor summed.
    fails([&] { s.reverse_compute_at(r, b, 0); }, "at index 1 (0) is neither");
    fails([&] { s.reverse_compute_at(b, t, 0); }, "does not read 'T'");
    fails([&] { s.reverse_compute_at(r, t, 5); }, "not a leaf loop");
    Schedule s2 = create_schedule({R});
    s2.compute_at(t, r, 0);
    fails([&] { s2.reverse_compute_at(r, t, 0); }, "computed at another stage's loop");
    // An iteration of a fused loop split across rows writes a ragged part of the box around it.
    Tensor E = compute(
        {8, 8}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "E");
    Schedule s4 = create_schedule({E});
    const int b4 = s4.stage_of(B);
    s4.fuse(b4, {0, 1});
    s4.split(b4, 0, 6);
    s4.reverse_compute_at(s4.stage_of(E), b4, 0);
    fails([&] { lower(s4, {A, E}, "main", LowerOptions{}); }, "not the whole box");
    // The last block to finish a tile arrives for the whole block: not from inside a thread loop.
    testing::SplitKProduct w(4, 0);
    Schedule s3 = create_schedule({w.Y});
    int c = s3.stage_of(w.C);
    s3.split(c, 2, 24);
    int p = s3.rfactor(c, 2, 0);
    s3.split(p, 1, 8);  // part, i.o, i.i, j, k
    s3.bind(p, 0, IterAnnotation::BlockX);
    s3.bind(p, 2, IterAnnotation::ThreadX);
    s3.reverse_compute_at(s3.stage_of(w.Y), p, 3);  // at j, inside the thread loop i.i
    s3.compute_at(p + 1, s3.stage_of(w.Y), 1);
    fails([&] { lower(s3, {w.A, w.B, w.Y}, "main", LowerOptions{}); }, "outside every threadIdx");
}

}  // namespace
}  // namespace tessel
