// cuda codegen: a stage none of whose loops is bound to a thread axis cannot run on the GPU.
#include "codegen/CudaTestUtil.h"
#include "error/ExpectScheduleError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, CudaLoopOutsideEveryKernel) {
    Tensor A = placeholder({64, 64}, Float(32), "A");
    Tensor C = compute(
        {64, 64}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    expect_schedule_error([&] { tessel::testing::generate_cuda(s, {A, C}); },
                          {"loop i", "stage C", "outside every GPU kernel", "blockIdx"});
}
