// bind: blockIdx/threadIdx loops run as SPMD programs in the loop interpreter and match the
// reference; the LLVM backend refuses them (ScheduleTestUtil.h).
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleBind, ElementwiseBlocksAndThreads) {
    Tensor A = placeholder({37, 20}, Float(32), "A");
    Tensor B = compute(
        {37, 20}, [&](Var i, Var j) { return A(i, j) * 2.0f + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.split(b, 0, 8);  // 37 = 4*8 + 5: the last block is guarded
    s.bind(b, 0, IterAnnotation::BlockX);
    s.bind(b, 1, IterAnnotation::ThreadY);
    s.bind(b, 2, IterAnnotation::ThreadX);
    std::string ir = expect_matches_reference(s);
    EXPECT_NE(ir.find("thread_binding"), std::string::npos) << ir;
    EXPECT_NE(ir.find("threadIdx.x"), std::string::npos) << ir;
}

TEST(ScheduleBind, MatmulTwoDimensionalGrid) {
    Matmul mm(24, 20, 9);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.tile(c, 0, 1, 8, 4);  // io jo ii ji k
    s.bind(c, 0, IterAnnotation::BlockY);
    s.bind(c, 1, IterAnnotation::BlockX);
    s.bind(c, 2, IterAnnotation::ThreadY);
    s.bind(c, 3, IterAnnotation::ThreadX);
    expect_matches_reference(s, 9);
}

TEST(ScheduleBind, LocalProducerPerThread) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor P = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "P");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return P(i, j) * P(i, j); }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), c = s.stage_of(C);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.split(c, 1, 4);
    s.bind(c, 1, IterAnnotation::ThreadX);
    s.compute_at(p, c, 1);
    s.set_scope(p, StorageScope::Local);
    std::string ir = expect_matches_reference(s);
    EXPECT_NE(ir.find("local"), std::string::npos) << ir;
}

TEST(ScheduleBind, ThreadsOnlyKernelInsideSerialLoop) {
    Tensor A = placeholder({6, 32}, Float(32), "A");
    Tensor B = compute(
        {6, 32}, [&](Var i, Var j) { return A(i, j) - 3.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.bind(b, 1, IterAnnotation::ThreadX);  // one one-block kernel per row
    expect_matches_reference(s);
}

TEST(ScheduleBind, ReplaysFromJson) {
    Matmul mm(16, 16, 4);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 0, 4);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    Schedule r = schedule_from_json({mm.C}, s.to_json());
    EXPECT_EQ(to_string(lower(r, {mm.A, mm.B, mm.C})), to_string(lower(s, {mm.A, mm.B, mm.C})));
    EXPECT_NE(s.to_python().find("s.bind(2, 0, \"blockIdx.x\")"), std::string::npos)
        << s.to_python();
}

TEST(ScheduleBind, KernelLaunchedPerIterationOfASerialLoop) {
    // P's loops are bound to threads but P is computed at C's serial row loop: one kernel launch
    // per row, writing P's (global) row buffer that C then reads serially.
    Tensor A = placeholder({5, 16}, Float(32), "A");
    Tensor P = compute(
        {5, 16}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "P");
    Tensor C = compute(
        {5, 16}, [&](Var i, Var j) { return P(i, 15 - j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int p = s.stage_of(P), c = s.stage_of(C);
    s.compute_at(p, c, 0);
    s.bind(p, 1, IterAnnotation::ThreadX);
    std::string ir = expect_matches_reference(s);
    EXPECT_NE(ir.find("threadIdx.x"), std::string::npos) << ir;
}
