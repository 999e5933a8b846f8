// Features asked for a column that does not exist (RuntimeError naming it), or of a schedule
// that cannot be lowered for the target (the error lowering reports: a CompileError for GPU
// bindings on a CPU).
#include "error/ExpectCompileError.h"
#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_compile_error;
using tessel::testing::expect_runtime_error;

TEST(ErrorFeaturesBadRequests, UnknownColumn) {
    expect_runtime_error([] { FeatureMatrix::column("B5.bytes"); },
                         {"features", "no feature named 'B5.bytes'", "164"});
}

TEST(ErrorFeaturesBadRequests, GpuScheduleForACpu) {
    Tensor A = placeholder({64}, Float(32), "A");
    Tensor B = compute(
        {64}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.split(b, 0, 16);
    s.bind(b, 1, IterAnnotation::ThreadX);
    expect_compile_error([&] { extract_features(s, Target("llvm")); },
                         {"verify_schedule", "threadIdx.x", "needs a GPU target"});
}
