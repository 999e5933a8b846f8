// cuda codegen: more than 65535 blocks along blockIdx.y.
#include "codegen/CudaTestUtil.h"
#include "error/ExpectScheduleError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, CudaGridYOverLimit) {
    Tensor A = placeholder({70000, 32}, Float(32), "A");
    Tensor C = compute(
        {70000, 32}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.bind(c, 0, IterAnnotation::BlockY);
    s.bind(c, 1, IterAnnotation::ThreadX);
    expect_schedule_error([&] { tessel::testing::generate_cuda(s, {A, C}); },
                          {"stage C", "70000", "blockIdx.y", "65535", "4465"});
}
