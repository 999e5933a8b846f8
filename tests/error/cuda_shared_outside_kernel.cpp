// cuda codegen: a shared-scope stage computed at the root is allocated outside every kernel.
#include "codegen/CudaTestUtil.h"
#include "error/ExpectScheduleError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ScheduleError, CudaSharedBufferOutsideKernel) {
    Tensor A = placeholder({256}, Float(32), "A");
    Tensor T = compute(
        {256}, [&](Var i) { return A(i) * 2.0f; }, "T");
    Tensor C = compute(
        {256}, [&](Var i) { return T(i) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    for (Tensor t : {T, C}) {
        int st = s.stage_of(t);
        s.split(st, 0, 64);
        s.bind(st, 0, IterAnnotation::BlockX);
        s.bind(st, 1, IterAnnotation::ThreadX);
    }
    s.set_scope(s.stage_of(T), StorageScope::Shared);
    expect_schedule_error([&] { tessel::testing::generate_cuda(s, {A, C}); },
                          {"shared buffer T", "outside every kernel", "compute it at"});
}
