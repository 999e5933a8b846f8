// CUDA codegen: float16 and bfloat16 live in memory as 16 bits (unsigned short) and compute in
// float32, rounded after every operation through the prelude's PTX conversions.
#include "codegen/CudaTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

CudaOutput elementwise(Type t) {
    Tensor A = placeholder({1024}, t, "A");
    Tensor B = placeholder({1024}, t, "B");
    Tensor C = compute(
        {1024}, [&](Var i) { return A(i) * B(i) + cast(t, 1.0f); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 128);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    return expect_cuda_compiles(s, {A, B, C});
}

}  // namespace

TEST(CudaHalf, Float16) {
    CudaOutput out = elementwise(Float(16));
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "const unsigned short* __restrict__ A")) << src;
    EXPECT_TRUE(contains(src, "tsl_h2f(A[")) << src;
    EXPECT_TRUE(contains(src, "tsl_rh(")) << src;
    EXPECT_TRUE(contains(src, "= tsl_f2h(")) << src;
    EXPECT_TRUE(contains(src, "cvt.rn.f16.f32")) << src;
}

TEST(CudaHalf, BFloat16) {
    CudaOutput out = elementwise(BFloat(16));
    const std::string& src = out.code.source;
    EXPECT_TRUE(contains(src, "tsl_b2f(A[")) << src;
    EXPECT_TRUE(contains(src, "tsl_rb(")) << src;
    EXPECT_TRUE(contains(src, "= tsl_f2b(")) << src;
    EXPECT_TRUE(contains(src, "cvt.rn.bf16.f32")) << src;
}
