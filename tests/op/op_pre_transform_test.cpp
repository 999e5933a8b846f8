// Layout rewrite of constant operands (Schedule::pre_transform): dense, batch_matmul and conv2d
// (NCHW, NHWC) with a constant weight, under their default CPU schedules, on odd shapes. The
// weight's pack becomes the one-time function `main_pre_transform`, and the kernel reads the
// packed buffer; both run (loop interpreter and JIT) and the result is compared with the
// reference interpreter. Without a constant operand nothing changes.
#include "op/OpTestUtil.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Matmul.h"

namespace tessel::testing {
namespace {

// The default CPU schedule of `out` pre-transforms a weight, and the kernel and its transform
// together compute what the reference does.
void expect_pre_transformed(const Tensor& out, int64_t reduction_length) {
    Schedule s = op::default_schedule({out}, Target("llvm"));
    EXPECT_TRUE(has_pre_transform(s)) << s.to_python();
    expect_matches_reference(s, reduction_length);
}

TEST(OpPreTransform, DenseWithAConstantWeight) {
    Tensor x = placeholder({7, 19}, Float(32), "x");
    Tensor w = placeholder({13, 19}, Float(32), "w", /*constant=*/true);
    Tensor bias = placeholder({13}, Float(32), "bias");
    expect_pre_transformed(op::dense(x, w), 19);
    expect_pre_transformed(op::dense(x, w, bias, op::Activation::ReLU), 19);
    Tensor rows = placeholder({33, 19}, Float(32), "rows");
    expect_pre_transformed(op::dense(rows, w, bias), 19);
}

TEST(OpPreTransform, MatmulWithAConstantOperand) {
    // 41 columns: the panels' tile runs past B's end (padded storage, clamped reads).
    Tensor a = placeholder({37, 29}, Float(32), "a");
    Tensor b = placeholder({29, 41}, Float(32), "b", /*constant=*/true);
    expect_pre_transformed(op::matmul(a, b), 29);
    Tensor wide = placeholder({29, 77}, Float(32), "wide", /*constant=*/true);
    expect_pre_transformed(op::matmul(a, wide), 29);
}

TEST(OpPreTransform, BatchMatmulWithAConstantOperand) {
    Tensor a = placeholder({3, 7, 5}, Float(32), "a");
    Tensor b = placeholder({3, 5, 11}, Float(32), "b", /*constant=*/true);
    expect_pre_transformed(op::batch_matmul(a, b), 5);
    Tensor bt = placeholder({3, 11, 5}, Float(32), "bt", /*constant=*/true);
    expect_pre_transformed(op::batch_matmul(a, bt, false, true), 5);
}

// Odd spatial extents; channels as a network's (the default schedules pack the weight of
// convolutions with channels in vectors).
TEST(OpPreTransform, Conv2dNchwWithAConstantWeight) {
    Tensor x = placeholder({1, 16, 11, 9}, Float(32), "x");
    Tensor w = placeholder({32, 16, 3, 3}, Float(32), "w", /*constant=*/true);
    expect_pre_transformed(op::conv2d_nchw(x, w, op::conv_params(1, 1)), 144);
    Tensor w1 = placeholder({48, 16, 1, 1}, Float(32), "w1", /*constant=*/true);
    expect_pre_transformed(op::conv2d_nchw(x, w1, op::conv_params(2, 0)), 16);
}

// Winograd's transformed filters (an element-wise transform of the weight, not a copy) are laid
// out in the product's panels once, outside the kernel.
TEST(OpPreTransform, WinogradFiltersTransformedOnce) {
    Tensor x = placeholder({1, 2, 11, 9, 8}, Float(32), "x");
    Tensor w = placeholder({2, 2, 3, 3, 8, 16}, Float(32), "w", /*constant=*/true);
    expect_pre_transformed(op::conv2d_nchwc_winograd(x, w, op::conv_params(1, 1)), 4 * 16 * 9);
    // Not constant: the transform runs in the kernel, in the same panels.
    Tensor v = placeholder({2, 2, 3, 3, 8, 16}, Float(32), "v");
    Schedule s = op::default_schedule({op::conv2d_nchwc_winograd(x, v, op::conv_params(1, 1))},
                                      Target("llvm"));
    EXPECT_FALSE(has_pre_transform(s));
    expect_matches_reference(s, 4 * 16 * 9);
    // A GEMM whose B is computed from a constant weight (not laid out in place) packs a copy of
    // it in every call, as before: only a placeholder's copy or an in-place transform is
    // computed once.
    Tensor a = placeholder({9, 12}, Float(32), "a");
    Tensor c = placeholder({12, 20}, Float(32), "c", /*constant=*/true);
    Tensor twice = compute(
        {12, 20}, [&](Var i, Var j) { return c(i, j) * 2.0f; }, "twice");
    Schedule g = op::default_schedule({op::matmul(a, twice)}, Target("llvm"));
    EXPECT_FALSE(has_pre_transform(g));
    expect_matches_reference(g, 12);
}

// NHWC's default reads the HWIO weight in place (output channels innermost, in vectors): it has
// no pack to rewrite, and a constant weight changes nothing but the DAG's key.
TEST(OpPreTransform, Conv2dNhwcWithAConstantWeight) {
    Tensor x = placeholder({1, 11, 9, 16}, Float(32), "x");
    Tensor w = placeholder({3, 3, 16, 32}, Float(32), "w", /*constant=*/true);
    Schedule s =
        op::default_schedule({op::conv2d_nhwc(x, w, op::conv_params(1, 1))}, Target("llvm"));
    EXPECT_FALSE(has_pre_transform(s));
    expect_matches_reference(s, 144);
    // A pack of the weight written by hand is rewritten as for any operator: [K / 8, R, S, C, 8].
    Tensor w1 = placeholder({1, 1, 16, 48}, Float(32), "w1", /*constant=*/true);
    Tensor y = op::conv2d_nhwc(x, w1, op::conv_params(2, 0));
    Schedule h = create_schedule({y});
    int pack = h.cache_read(h.stage_of(w1), "global", {h.stage_of(y)});
    h.storage_split(pack, 3, 8);
    h.storage_reorder(pack, {3, 0, 1, 2, 4});
    h.pre_transform(pack);
    expect_matches_reference(h, 16);
}

// The dot-product layouts (uint8 x int8 on VNNI, bfloat16 on AVX512-BF16): B packed once in
// [j / lanes][k / group][j % lanes][k % group]. On a CPU without the units the plain tile's
// panels are rewritten instead.
TEST(OpPreTransform, DotProductLayouts) {
    Tensor a = placeholder({36, 20}, UInt(8), "a");
    Tensor b = placeholder({20, 48}, Int(8), "b", /*constant=*/true);
    expect_pre_transformed(op::matmul(a, b, false, false, Int(32)), 20);
    Tensor x = placeholder({32, 16}, BFloat(16), "x");
    Tensor w = placeholder({32, 16}, BFloat(16), "w", /*constant=*/true);
    expect_pre_transformed(op::dense(x, w, Tensor(), op::Activation::None, Float(32)), 16);
}

TEST(OpPreTransform, OffWithoutAConstantOperand) {
    Tensor x = placeholder({7, 19}, Float(32), "x"), w = placeholder({13, 19}, Float(32), "w");
    EXPECT_FALSE(has_pre_transform(op::default_schedule({op::dense(x, w)}, Target("llvm"))));
}

TEST(OpPreTransform, TheModuleHasTheKernelAndItsTransform) {
    if (!has_llvm_backend()) GTEST_SKIP() << "needs the LLVM backend";
    Tensor x = placeholder({7, 19}, Float(32), "x");
    Tensor w = placeholder({13, 19}, Float(32), "w", /*constant=*/true);
    Tensor y = op::dense(x, w);
    Schedule s = op::default_schedule({y}, Target("llvm"));
    Module m = build(s, {x, w, y}, "llvm", "dense");
    EXPECT_EQ(m.kernel_names(), (std::vector<std::string>{"dense", "dense_pre_transform"}));
    const KernelSignature& kernel = m.signatures()[0];
    const KernelSignature& transform = m.signatures()[1];
    ASSERT_EQ(kernel.args.size(), 3u);
    EXPECT_EQ(kernel.args[1].name, "w_packed");
    ASSERT_EQ(transform.args.size(), 2u);
    EXPECT_EQ(transform.args[0].name, "w");
    EXPECT_EQ(transform.args[1].name, "w_packed");
}

}  // namespace
}  // namespace tessel::testing
