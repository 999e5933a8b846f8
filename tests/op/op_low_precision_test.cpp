// Low precision accumulates wide (docs/design.md, decision 10): float16/bfloat16 products, sums and
// normalisations compute in float32 and return the input's type, 8-bit integer products return
// int32, out_dtype chooses the result; each under its default CPU and GPU schedules against the
// reference interpreter, on odd sizes; the out_dtype errors; workload keys made before out_dtype.
#include "op/OpTestUtil.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Matmul.h"
#include "tessel/op/Norm.h"
#include "tessel/op/Pool.h"
#include "tessel/op/Reduce.h"
#include "tessel/te/Serialize.h"

namespace tessel::testing {
namespace {

const Type f16 = Float(16), bf16 = BFloat(16), f32 = Float(32);

// The stage `t` reads its values from (the reduction under a cast stage).
Tensor producer(const Tensor& t) {
    return op_inputs(t.op()).at(0);
}

TEST(OpLowPrecision, SixteenBitProductsAccumulateInFloat32) {
    for (Type t : {f16, bf16}) {
        Tensor a = placeholder({13, 11}, t, "a"), b = placeholder({11, 17}, t, "b");
        Tensor c = op::matmul(a, b);
        EXPECT_EQ(c.dtype(), t);
        EXPECT_EQ(c.name(), "matmul");
        EXPECT_EQ(producer(c).name(), "matmul.acc");
        EXPECT_EQ(producer(c).dtype(), f32);
        expect_default_schedules_match({c}, 11);
        // out_dtype float32: the reduction is the result.
        Tensor wide = op::matmul(a, b, false, false, f32);
        EXPECT_EQ(wide.dtype(), f32);
        EXPECT_EQ(wide.name(), "matmul");
        EXPECT_NE(as_placeholder(producer(wide).op()), nullptr);
        expect_default_schedules_match({wide}, 11);
        Tensor x = placeholder({3, 7, 5}, t, "x"), y = placeholder({1, 9, 5}, t, "y");
        expect_default_schedules_match({op::batch_matmul(x, y, false, true)}, 5);
    }
}

TEST(OpLowPrecision, DenseAppliesBiasAndActivationInTheAccumulator) {
    Tensor x = placeholder({6, 19}, f16, "x"), w = placeholder({13, 19}, f16, "w");
    Tensor bias = placeholder({13}, f16, "bias");
    for (op::Activation act : {op::Activation::ReLU, op::Activation::GELU}) {
        Tensor y = op::dense(x, w, bias, act);
        EXPECT_EQ(y.dtype(), f16);
        EXPECT_EQ(producer(y).name(), "dense.matmul");
        EXPECT_EQ(producer(y).dtype(), f32);
        expect_default_schedules_match({y}, 19);
    }
    Tensor rows = placeholder({32, 19}, bf16, "rows"), wb = placeholder({13, 19}, bf16, "wb");
    expect_default_cpu_matches({op::dense(rows, wb)}, 19);
}

TEST(OpLowPrecision, EightBitIntegerProductsReturnInt32) {
    for (Type t : {Int(8), UInt(8)}) {
        Tensor a = placeholder({9, 23}, t, "a"), b = placeholder({23, 14}, t, "b");
        Tensor c = op::matmul(a, b);
        EXPECT_EQ(c.dtype(), Int(32));
        EXPECT_NE(as_placeholder(producer(c).op()), nullptr);  // no cast stage: int32 is the result
        expect_default_schedules_match({c}, 23);
        Tensor c64 = op::matmul(a, b, false, false, Int(64));  // a wider result widens the sum
        EXPECT_EQ(c64.dtype(), Int(64));
        expect_default_cpu_matches({c64}, 23);
    }
    Tensor x = placeholder({2, 5, 9, 9}, Int(8), "x"), w = placeholder({3, 5, 3, 3}, Int(8), "w");
    Tensor y = op::conv2d_nchw(x, w, op::conv_params(2, 1));
    EXPECT_EQ(y.dtype(), Int(32));
    expect_default_schedules_match({y}, 45);
}

// uint8 x int8 (VNNI's operands, op/Quantize.h's) multiply in int32 as either alone does.
TEST(OpLowPrecision, EightBitProductsOfMixedSignedness) {
    Tensor a = placeholder({5, 19}, UInt(8), "a"), b = placeholder({19, 6}, Int(8), "b");
    EXPECT_EQ(op::matmul(a, b).dtype(), Int(32));
    expect_default_schedules_match({op::matmul(a, b)}, 19);
    expect_default_cpu_matches({op::dense(a, placeholder({6, 19}, Int(8), "w"))}, 19);
    Tensor x = placeholder({1, 3, 5, 5}, Int(8), "x"), w = placeholder({2, 3, 3, 3}, UInt(8), "w");
    expect_default_schedules_match({op::conv2d_nchw(x, w, op::conv_params(1, 1))}, 27);
    // Other mixes stay errors: 16-bit integers, floats.
    EXPECT_THROW(op::matmul(a, placeholder({19, 6}, Int(16), "c")), DSLError);
    EXPECT_THROW(op::matmul(placeholder({5, 19}, f32, "f"), b), DSLError);
}

TEST(OpLowPrecision, ConvolutionsAccumulateInFloat32) {
    Tensor x = placeholder({1, 6, 11, 10}, f16, "x"), w = placeholder({4, 3, 3, 3}, f16, "w");
    op::Conv2DParams p = op::conv_params(1, 1, 1, 2);
    Tensor y = op::conv2d_nchw(x, w, p);
    EXPECT_EQ(y.dtype(), f16);
    EXPECT_EQ(producer(y).dtype(), f32);
    expect_default_schedules_match({y}, 27);
    Tensor xh = placeholder({1, 9, 8, 6}, bf16, "xh"), wh = placeholder({3, 3, 6, 5}, bf16, "wh");
    p.groups = 1;
    p.out_dtype = f32;
    Tensor yh = op::conv2d_nhwc(xh, wh, p);
    EXPECT_EQ(yh.dtype(), f32);
    expect_default_schedules_match({yh}, 54);
    Tensor wd = placeholder({6, 1, 3, 3}, f16, "wd");
    expect_default_cpu_matches({op::depthwise_conv2d_nchw(x, wd, op::conv_params(1, 1))}, 9);
    Tensor wt = placeholder({6, 2, 3, 3}, f16, "wt");
    expect_default_cpu_matches({op::conv2d_transpose_nchw(x, wt, op::conv_params(2, 1))}, 54);
}

TEST(OpLowPrecision, SumsMeansAndPoolsAccumulateWide) {
    Tensor x = placeholder({5, 37, 3}, f16, "x");
    Tensor s = op::sum(x, {1});
    EXPECT_EQ(s.dtype(), f16);
    EXPECT_EQ(producer(s).name(), "sum.acc");
    EXPECT_EQ(producer(s).dtype(), f32);
    expect_default_schedules_match({s}, 37);
    expect_default_schedules_match({op::mean(x, {0, 1}, true)}, 185);
    EXPECT_EQ(op::mean(x, {1}, false, f32).dtype(), f32);
    Tensor i8 = placeholder({4, 300}, Int(8), "i8");
    Tensor si = op::sum(i8, {1});  // 300 values of up to 127 overflow int8, not int32
    EXPECT_EQ(si.dtype(), Int(32));
    expect_default_schedules_match({si}, 300);
    Tensor img = placeholder({1, 3, 9, 9}, bf16, "img");
    expect_default_cpu_matches(
        {op::pool2d(img, op::PoolKind::Avg, {3, 3}, {2, 2}, {1, 1, 1, 1}, false)}, 9);
    expect_default_cpu_matches({op::global_pool2d(img, op::PoolKind::Avg)}, 81);
}

TEST(OpLowPrecision, NormalisationsComputeInFloat32) {
    for (Type t : {f16, bf16}) {
        Tensor x = placeholder({3, 29}, t, "x");
        Tensor g = placeholder({29}, t, "g"), b = placeholder({29}, t, "b");
        for (Tensor y :
             {op::softmax(x), op::log_softmax(x), op::layer_norm(x, g, b), op::rms_norm(x, g)}) {
            EXPECT_EQ(y.dtype(), t) << y.name();
            expect_default_schedules_match({y}, 29);
        }
        Tensor img = placeholder({2, 4, 3, 3}, t, "img");
        std::vector<Tensor> v;
        for (const char* n : {"gamma", "beta", "mean", "var"}) v.push_back(placeholder({4}, t, n));
        expect_default_cpu_matches({op::batch_norm(img, v[0], v[1], v[2], v[3])});
    }
}

// The failure 16-bit accumulation has: 1 + 2048 is 2048 in float16, so a sum of 4096 ones
// stops at 2048. Accumulated in float32 it is 4096, which float16 holds exactly.
TEST(OpLowPrecision, AFloat16SumOfManyOnesIsExact) {
    if (!has_llvm_backend()) GTEST_SKIP() << "built without LLVM";
    Tensor a = placeholder({2, 4096}, f16, "a"), b = placeholder({4096, 3}, f16, "b");
    Tensor c = op::matmul(a, b);
    Schedule s = op::default_schedule({c}, Target("llvm"));
    HostArray ha(f16, {2, 4096}), hb(f16, {4096, 3}), hc(f16, {2, 3});
    for (int64_t i = 0; i < ha.size(); ++i) ha.set(i, 1.0);
    for (int64_t i = 0; i < hb.size(); ++i) hb.set(i, 1.0);
    std::vector<HostArray> arrays = {ha, hb, hc};
    ASSERT_TRUE(run_jit(s, {a, b, c}, arrays, ""));
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(arrays[2].get(i), 4096.0) << i;
}

TEST(OpLowPrecision, OutDtypeErrorsNameTheOperator) {
    Tensor h = placeholder({4, 4}, f16, "h"), q = placeholder({4, 4}, Int(8), "q");
    auto message = [](const std::function<void()>& f) {
        try {
            f();
        } catch (const DSLError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message([&] {
                  op::matmul(h, h, false, false, Int(32));
              }).find("matmul: parameter 'out_dtype' is int32 but the operands are float16"),
              std::string::npos);
    EXPECT_NE(message([&] {
                  op::matmul(q, q, false, false, Int(8));
              }).find("narrower than the int32 accumulator"),
              std::string::npos);
    EXPECT_NE(message([&] { op::sum(h, {0}, false, Float(32, 4)); }).find("scalar number type"),
              std::string::npos);
    op::Conv2DParams p;
    p.out_dtype = Bool();
    Tensor x = placeholder({1, 2, 3, 3}, f16, "x"), w = placeholder({1, 2, 1, 1}, f16, "w");
    EXPECT_NE(message([&] { op::conv2d_nchw(x, w, p); }).find("conv2d_nchw: parameter 'out_dtype'"),
              std::string::npos);
}

TEST(OpLowPrecision, SumTakesTheAccumulatorAndRefusesANarrowerOne) {
    Tensor a = placeholder({4, 8}, f16, "a");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor s = compute(
        {4}, [&](Var i) { return tessel::sum(a(i, k.var()), {k}, f32); }, "s");
    EXPECT_EQ(s.dtype(), f32);
    expect_default_cpu_matches({s}, 8);
    const std::pair<Type, Type> refused[] = {{f16, bf16},        {bf16, f16},       {f32, Int(32)},
                                             {Int(32), Int(16)}, {Int(8), UInt(8)}, {Int(32), f32}};
    for (auto [from, to] : refused) {
        Tensor x = placeholder({8}, from, "x");
        IterVar r = reduce_axis({0, 8}, "r");
        try {
            tessel::sum(x(r.var()), {r}, to);
            ADD_FAILURE() << from << " summed in " << to;
        } catch (const DSLError& e) {
            EXPECT_NE(std::string(e.what()).find("does not hold every"), std::string::npos)
                << e.what();
        }
    }
    Tensor u = placeholder({8}, UInt(8), "u");
    IterVar r = reduce_axis({0, 8}, "r");
    EXPECT_EQ(tessel::sum(u(r.var()), {r}, Int(16)).type(), Int(16));  // u8 fits int16
    EXPECT_EQ(tessel::prod(u(r.var()), {r}, f32).type(), f32);
}

// out_dtype is an optional trailing workload parameter: a key made before it (and the records
// under it) names the same computation as one that spells the default out.
TEST(OpLowPrecision, WorkloadKeysWithoutOutDtypeStillBuild) {
    using V = WorkloadParams;
    const int64_t m = 8, n = 9, k = 10;
    TensorDAG before = make_workload("op.matmul", V{m, n, k, int64_t(0), int64_t(0), f32});
    TensorDAG spelled = make_workload("op.matmul", V{m, n, k, int64_t(0), int64_t(0), f32, f32});
    EXPECT_EQ(dag_hash(before.outputs), dag_hash(spelled.outputs));
    TensorDAG half = make_workload("op.matmul", V{m, n, k, int64_t(0), int64_t(0), f16});
    EXPECT_EQ(half.outputs[0].dtype(), f16);
    TensorDAG wide =
        make_workload("op.dense", V{m, n, k, int64_t(1), std::string("relu"), f16, f32});
    EXPECT_EQ(wide.outputs[0].dtype(), f32);
    TensorDAG ints = make_workload(
        "op.conv2d_nhwc", V{int64_t(1), int64_t(4), int64_t(6), int64_t(6), int64_t(8),
                            std::vector<int64_t>{3}, std::vector<int64_t>{1},
                            std::vector<int64_t>{1}, std::vector<int64_t>{1}, int64_t(1), Int(8)});
    EXPECT_EQ(ints.outputs[0].dtype(), Int(32));
    EXPECT_EQ(make_workload("op.sum", V{std::vector<int64_t>{3, 4}, std::vector<int64_t>{1},
                                        int64_t(0), f16, f32})
                  .outputs[0]
                  .dtype(),
              f32);
    try {
        make_workload("op.matmul", V{m, n, k, int64_t(0), int64_t(0), f32, f32, f32});
        ADD_FAILURE() << "a third dtype was taken";
    } catch (const DSLError& e) {
        EXPECT_NE(std::string(e.what()).find("expects 6 to 7 parameter(s)"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("out_dtype?: dtype"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace tessel::testing

namespace tessel::testing {
namespace {

// 16-bit and 8-bit values have 32 and 64 lanes a vector on AVX-512: the default schedules keep
// their vectors within the schedule's lane cap (a softmax of float16 rows, an int8 ReLU).
TEST(OpLowPrecision, NarrowTypesStayWithinTheLaneCapOnAvx512) {
    const Target avx512("llvm -mcpu=skylake-avx512");
    Tensor h = placeholder({3, 1024}, f16, "h");
    Tensor q = placeholder({5, 640}, Int(8), "q");
    for (Tensor y : {op::softmax(h), op::max(h, {1}), op::relu(q), op::max(q, {1})}) {
        Schedule s = op::default_schedule({y}, avx512);
        expect_matches_reference(s, 1024);
    }
}

}  // namespace
}  // namespace tessel::testing

namespace tessel::testing {
namespace {

// The CPU GEMM default runs its tiles with the CPU's dot-product instruction where the target has
// one (uint8 x int8 on VNNI, bfloat16 on AVX512-BF16; schedule/TensorIntrin.h), B packed in groups;
// the interpreter runs dot_product exactly, so the check holds on any CPU.
TEST(OpLowPrecision, CpuGemmsUseTheDotProductInstructionsWhereTheCpuHasThem) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    Tensor a = placeholder({24, 64}, UInt(8), "a"), b = placeholder({64, 96}, Int(8), "b");
    Tensor w = placeholder({96, 64}, Int(8), "w");
    Tensor b48 = placeholder({64, 48}, Int(8), "b48"), b40 = placeholder({64, 40}, Int(8), "b40");
    Tensor a3 = placeholder({3, 20, 64}, UInt(8), "a3"),
           b3 = placeholder({3, 64, 32}, Int(8), "b3");
    Tensor h = placeholder({12, 38}, bf16, "h"), g = placeholder({38, 64}, bf16, "g");
    struct Case {
        const char* target;
        Tensor out;
        const char* intrinsic;  // nullptr: none
        int64_t k;
    };
    const Case cases[] = {
        {"llvm -mcpu=cascadelake", op::matmul(a, b), "dot_product(16, 4,", 64},
        {"llvm -mcpu=cascadelake", op::dense(a, w), "dot_product(16, 4,", 64},
        {"llvm -mcpu=cascadelake", op::batch_matmul(a3, b3), "dot_product(16, 4,", 64},
        {"llvm -mcpu=alderlake", op::matmul(a, b), "dot_product(8, 4,", 64},
        {"llvm -mcpu=haswell", op::matmul(a, b), nullptr, 64},
        {"llvm -mcpu=cascadelake", op::matmul(a, b48), "dot_product(16, 4,", 64},  // one vector
        {"llvm -mcpu=cascadelake", op::matmul(a, b40), nullptr, 64},  // N: no whole vectors
        {"llvm -mcpu=cooperlake", op::matmul(h, g), "dot_product(16, 2,", 38},
        {"llvm -mcpu=cascadelake", op::matmul(h, g), nullptr, 38},
    };
    for (const Case& c : cases) {
        Schedule s = op::default_schedule_rules({c.out}, Target(c.target));
        std::string ir = expect_matches_reference(s, c.k);
        EXPECT_EQ(ir.find("dot_product(") != std::string::npos, c.intrinsic != nullptr)
            << c.target << "\n"
            << ir;
        if (c.intrinsic) {
            EXPECT_NE(ir.find(c.intrinsic), std::string::npos) << ir;
        }
    }
}

}  // namespace
}  // namespace tessel::testing
