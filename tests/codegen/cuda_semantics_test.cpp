// CUDA codegen: every type and operation the printer handles compiles with NVRTC, and the
// source shows the semantics of ir/IR.h (guarded and plain division, saturating casts, lazy
// if_then_else, predicated vector tails, 2-D cross-thread reductions).
#include "codegen/CudaTestUtil.h"
#include "correctness/ScheduleTestUtil.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// One output per expression of `f` over inputs of type `t`, 128 x 8 threads.
CudaOutput elementwise(Type in, Type out, const std::function<Expr(Expr, Expr, Var)>& f,
                       int vector = 1) {
    Tensor A = placeholder({1000}, in, "A");
    Tensor B = placeholder({1000}, in, "B");
    Tensor C = compute(
        {1000}, [&](Var i) { return cast(out, f(A(i), B(i), i)); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    if (vector > 1) s.split(c, 0, vector);  // io ii
    s.split(c, 0, 32);                      // ioo ioi [ii]
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    if (vector > 1) s.vectorize(c, 2);
    std::vector<Tensor> args = placeholders_of(s);  // B only where f reads it
    args.push_back(C);
    return expect_cuda_compiles(s, args);
}

}  // namespace

TEST(CudaSemantics, FloatMath) {
    for (Type t : {Float(32), Float(64), Float(16), BFloat(16)}) {
        CudaOutput o = elementwise(t, t, [&](Expr a, Expr b, Var) {
            Expr r = exp(a) + log(b) + sqrt(a) * rsqrt(b) + tanh(a) + sigmoid(b) + erf(a);
            r = r + pow(a, b) + abs(a) + floor(a) + ceil(b) + round(a) + trunc(b);
            r = r + fma(a, b, a) + floordiv(a, b) + floormod(a, b) + min(a, b);
            return select(isnan(a), max(a, b), r) + exp2(a) + log2(b) + sin(a) + cos(b);
        });
        EXPECT_TRUE(contains(o.code.source, t.bits == 64 ? "fmin(" : "fminf(")) << t;
    }
}

TEST(CudaSemantics, IntegerTypesAndCasts) {
    for (Type t : {Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(16), UInt(32), UInt(64)}) {
        CudaOutput o = elementwise(t, Float(32), [&](Expr a, Expr b, Var) {
            Expr r = a * b + a - b + truncdiv(a, b) + truncmod(a, b) + floordiv(a, b) +
                     floormod(a, b) + min(a, b) + max(a, b) + abs(a);
            return select(a < b && !(a == b), cast(Float(32), r), cast(Float(32), a));
        });
        EXPECT_TRUE(contains(o.code.source, "tsl_div(")) << t;
    }
    for (Type t : {Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(32), UInt(64), Bool()}) {
        for (Type f : {Float(32), Float(64), Float(16)}) {
            CudaOutput o = elementwise(f, t, [&](Expr a, Expr, Var) { return a; });
            if (t.is_int() && t.bits == 32 && f.bits == 32) {
                EXPECT_TRUE(contains(o.code.source, "__float2int_rz(")) << o.code.source;
            }
        }
    }
}

TEST(CudaSemantics, PlainDivisionOfNonNegativeIndex) {
    CudaOutput o = elementwise(
        Int(32), Int(32), [&](Expr a, Expr, Var i) { return a + floordiv(i, 3) + floormod(i, 5); });
    EXPECT_TRUE(contains(o.code.source, " / 3)")) << o.code.source;
    EXPECT_TRUE(contains(o.code.source, " % 5)")) << o.code.source;
}

TEST(CudaSemantics, LazyIfThenElse) {
    CudaOutput o = elementwise(Float(32), Float(32),
                               [&](Expr a, Expr, Var i) { return if_then_else(i > 0, a, 0.0f); });
    EXPECT_TRUE(contains(o.code.source, " ? ")) << o.code.source;
}

TEST(CudaSemantics, VectorTailsAndNarrowVectors) {
    // 1000 is not a multiple of 32 * 4: the tail is guarded lane by lane.
    for (Type t : {Float(32), Float(16), Int(8), Int(32)}) {
        elementwise(
            t, t, [&](Expr a, Expr b, Var) { return a + b; }, 4);
    }
    CudaOutput o = elementwise(
        Float(32), Float(32), [&](Expr a, Expr b, Var) { return a * b; }, 2);
    EXPECT_TRUE(contains(o.code.source, "float2")) << o.code.source;
}

TEST(CudaSemantics, ReductionOverTwoThreadAxes) {
    Tensor X = placeholder({8, 64, 16}, Float(32), "X");
    IterVar k = reduce_axis({0, 16}, "k"), l = reduce_axis({0, 64}, "l");
    Tensor R = compute(
        {8},
        [&](Var i) {
            return sum(X(i, l, k), {l, k});
        },
        "R");
    Schedule s = create_schedule({R});
    int r = s.stage_of(R);
    s.bind(r, 0, IterAnnotation::BlockX);
    s.split(r, 1, 8);  // i lo li k
    s.bind(r, 2, IterAnnotation::ThreadY);
    s.bind(r, 3, IterAnnotation::ThreadX);
    CudaOutput o = expect_cuda_compiles(s, {X, R});
    EXPECT_TRUE(contains(o.code.source, "over 128 threads per group")) << o.code.source;
    EXPECT_TRUE(contains(o.code.source, "tsl_shfl_xor(0xffffffffu")) << o.code.source;
}
