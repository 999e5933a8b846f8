// tensorize: a loop nest or body that does not match the intrinsic is a ScheduleError saying
// what differs (when the primitive is called, or, for what needs the bounds, when lowering).
#include "error/ExpectScheduleError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

namespace {

// C (warp, 16 x 8) = sum_k float32(A[i, k]) * float32(B[k, j]) (B[j, k] when `transposed`),
// the accumulator stage at index 3 with loops i, j, k.
struct Mma {
    Tensor A, B, C;
    explicit Mma(Type in = Float(16), bool transposed = false, int k = 16) {
        A = placeholder({16, k}, in, "A");
        B = transposed ? placeholder({8, k}, in, "B") : placeholder({k, 8}, in, "B");
        IterVar r = reduce_axis({0, k}, "k");
        C = compute(
            {16, 8},
            [&](Var i, Var j) {
                Expr b = transposed ? B(j, r.var()) : B(r.var(), j);
                return sum(cast(Float(32), A(i, r.var())) * cast(Float(32), b), {r});
            },
            "C");
    }
};

}  // namespace

TEST(ScheduleError, TensorizeUnknownIntrinsic) {
    Mma g;
    Schedule s = create_schedule({g.C});
    expect_schedule_error(
        [&] { s.tensorize(2, 0, "mma_m16n8k32"); },
        {"tensorize", "stage 'C'", "unknown tensor intrinsic 'mma_m16n8k32'", "mma_m16n8k16_f16"});
}

TEST(ScheduleError, TensorizeLoopExtentDiffers) {
    Mma g;
    Schedule s = create_schedule({g.C});
    s.split(2, 0, 8);  // i: 2 x 8
    expect_schedule_error([&] { s.tensorize(2, 1, "mma_m16n8k16_f16"); },
                          {"tensorize", "replaces 3 loops (i0: 16, i1: 8, k: 16 reduction)",
                           "loop 'i0.inner'", "has extent 8"});
}

TEST(ScheduleError, TensorizeBodyOfAnotherType) {
    Mma g(BFloat(16));
    Schedule s = create_schedule({g.C});
    expect_schedule_error(
        [&] { s.tensorize(2, 0, "mma_m16n8k16_f16"); },
        {"tensorize", "does not match intrinsic mma_m16n8k16_f16", "a different element type"});
}

TEST(ScheduleError, TensorizeFragmentOutsideWarpScope) {
    Mma g;
    Schedule s = create_schedule({g.C});
    expect_schedule_error([&] { s.tensorize(2, 0, "mma_m16n8k16_f16"); },
                          {"tensorize", "writes a fragment", "scope is global", "\"warp\""});
}

// B read as B[j, k]: the pattern reads B[k, j]; the strides differ, which lowering reports.
TEST(ScheduleError, TensorizeReadStridesDiffer) {
    Mma g(Float(16), /*transposed=*/true);
    Schedule s = create_schedule({g.C});
    int cw = s.cache_write(2, "warp");  // 2 = C.warp, 3 = C
    s.tensorize(cw, 0, "mma_m16n8k16_f16");
    s.tensorize(cw + 1, 0, "store_c");
    expect_schedule_error(
        [&] {
            lower(s, {g.A, g.B, g.C});
        },
        {"lower: stage 'C.warp'", "tensorize with mma_m16n8k16_f16",
         "the read of 'B' at index 0 moves by 1 along loop 'i1'"});
}

TEST(ScheduleError, WarpStageNotTensorized) {
    Mma g;
    Schedule s = create_schedule({g.C});
    s.cache_write(2, "warp");
    expect_schedule_error(
        [&] {
            lower(s, {g.A, g.B, g.C});
        },
        {"lower: stage 'C.warp' has warp scope", "is not tensorized"});
}
