// The default "cuda" schedules beyond one thread per output (src/op/DefaultScheduleGpu.cpp), at
// shapes their tiles do not divide: each runs as an SPMD program in the loop interpreter (race
// detector on) against the reference, is compiled by NVRTC, and has the structure it promises
// (shared tiles, register tiles, warp shuffles, 128-bit accesses).
#include "op/DefaultScheduleGpu.h"
#include "op/GpuConvTiles.h"
#include "op/OpTestUtil.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Matmul.h"
#include "tessel/op/Norm.h"
#include "tessel/op/Reduce.h"

namespace tessel::testing {
namespace {

// The default schedule for `target`, checked in the interpreter and compiled; returns the CUDA C
// (empty without the CUDA backend).
std::string check_default_gpu(const std::vector<Tensor>& outputs, int64_t reduction_length,
                              const std::string& target = kCudaCompileTarget) {
    Schedule s = op::default_schedule(outputs, Target(target));
    GpuProgram p = gpu_program("op", s, reduction_length);
    check_in_interpreter(p, make_gpu_data(p, 11));
    if (!has_cuda_backend()) return "";
    return compile_for_gpu(p, target).get_source("cu");
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// `what` occurs in the CUDA C `cu` (nothing to check without the CUDA backend: `cu` is empty).
void expect_in(const std::string& cu, const std::string& what) {
    if (cu.empty()) return;
    EXPECT_NE(cu.find(what), std::string::npos) << what << " not in:\n" << cu;
}

bool has_stage_in(const Schedule& s, StorageScope scope) {
    for (const Stage& st : s.stages())
        if (st.scope == scope && st.attach == AttachKind::At) return true;
    return false;
}

// Partial 64 x 64 tiles in every dimension, for every transpose: the operands in shared memory,
// double-buffered, read through register caches.
TEST(OpGpuSchedule, MatmulTilesOnPrimeShapesEveryTranspose) {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            Tensor a = placeholder(ta ? std::vector<Expr>{37, 67} : std::vector<Expr>{67, 37});
            Tensor b = placeholder(tb ? std::vector<Expr>{71, 37} : std::vector<Expr>{37, 71});
            Tensor c = op::matmul(a, b, ta, tb);
            Schedule s = op::default_schedule({c}, Target(kCudaCompileTarget));
            std::string py = s.to_python();
            EXPECT_EQ(count(py, ".double_buffer("), 2u) << py;
            EXPECT_TRUE(has_stage_in(s, StorageScope::Shared)) << py;
            std::string cu = check_default_gpu({c}, 37);
            expect_in(cu, "__shared__");
        }
}

// Rows whose length is a multiple of 4 floats: each thread's piece of a shared tile's copy is
// one 128-bit load of A and of B (the innermost dim split by the vector before the dims are
// fused), as in tutorial 05's step 6; partial tiles in every dimension.
TEST(OpGpuSchedule, MatmulCopiesAre128BitLoads) {
    Tensor a = placeholder({100, 44}, Float(32), "A"), b = placeholder({44, 72}, Float(32), "B");
    std::string cu = check_default_gpu({op::matmul(a, b)}, 44);
    expect_in(cu, "reinterpret_cast<const float4*>(A + ");
    expect_in(cu, "reinterpret_cast<const float4*>(B + ");
}

// The epilogue (bias + GELU) is the tile's consumer: the product lives in registers.
TEST(OpGpuSchedule, DenseEpilogueInsideTheRegisterTile) {
    Tensor x = placeholder({45, 29}), w = placeholder({50, 29}), bias = placeholder({50});
    Tensor y = op::dense(x, w, bias, op::Activation::GELU);
    Schedule s = op::default_schedule({y}, Target(kCudaCompileTarget));
    int product = s.stage_of(op_inputs(y.op())[0]);
    EXPECT_EQ(s.stage(product).scope, StorageScope::Local);
    EXPECT_EQ(s.stage(product).attach_stage, s.stage_of(y));
    check_default_gpu({y}, 29);
}

// A batch of 1 broadcast; and the 128 x 128 tiles of 2 x 2 strided parts (vthreads), which the
// schedule takes when they give every multiprocessor a block (16 on sm_87).
TEST(OpGpuSchedule, BatchMatmulAndTheLargeTiles) {
    Tensor a = placeholder({3, 33, 19}), b = placeholder({1, 19, 40});
    check_default_gpu({op::batch_matmul(a, b)}, 19);
    // Few blocks: 32 x 64 tiles, 4 x 4 a thread (no vthreads).
    Tensor a8 = placeholder({16, 20, 12}), b8 = placeholder({16, 36, 12});
    Tensor c8 = op::batch_matmul(a8, b8, false, true);
    Schedule s = op::default_schedule({c8}, Target("cuda -arch=sm_87"));
    EXPECT_EQ(s.to_python().find("vthread"), std::string::npos) << s.to_python();
    check_default_gpu({c8}, 12, "cuda -arch=sm_87");
    // Two blocks an SM of 64 x 128 (16 SMs): 8 x 8 a thread as 2 x 2 strided parts.
    Tensor a12 = placeholder({16, 64, 8}), b12 = placeholder({16, 8, 256});
    Tensor c12 = op::batch_matmul(a12, b12);
    s = op::default_schedule({c12}, Target("cuda -arch=sm_87"));
    EXPECT_NE(s.to_python().find("vthread"), std::string::npos) << s.to_python();
    check_default_gpu({c12}, 8, "cuda -arch=sm_87");
}

// The register tile is the one the model finds fastest on the target's SMs (docs/operators.md):
// a product that fills an H100 takes 64 x 128 blocks of 8 x 8 a thread; one that would leave SMs
// idle under them takes 32 x 64 blocks (4 x 4 a thread), or 64 x 64 blocks of 64 threads when
// split-K's parts make a batch. A forced tile replaces the model's until released.
TEST(OpGpuSchedule, MatmulTilesFollowTheWaves) {
    const Target h100(kCudaCompileTarget);
    auto tile = [&](int64_t batch, int64_t m, int64_t n) {
        op::internal::GpuMatmulTile t = op::internal::gpu_matmul_tile(batch, m, n, h100);
        return std::to_string(t.rows) + "x" + std::to_string(t.cols) + "/" +
               std::to_string(t.row_threads * t.col_threads);
    };
    EXPECT_EQ(tile(1, 5694, 855), "64x128/128");
    EXPECT_EQ(tile(1, 3445, 2424), "64x128/128");
    EXPECT_EQ(tile(1, 287, 4573), "32x64/128");
    EXPECT_EQ(tile(1, 378, 125), "32x64/128");
    EXPECT_EQ(tile(11, 1750, 184), "64x64/64");  // 1750 x 184 x 6818 in 11 parts of 624
    EXPECT_EQ(op::internal::split_k_length(1, 1750, 184, 6818, h100), 624);
    // Fewer SMs fill sooner: what leaves an H100 idle fills an Orin's 16.
    EXPECT_EQ(op::internal::gpu_matmul_tile(1, 287, 4573, Target("cuda -arch=sm_87")).cols, 128);

    Tensor a = placeholder({40, 24}), b = placeholder({24, 72});
    Tensor c = op::matmul(a, b);
    EXPECT_EQ(op::default_schedule({c}, h100).to_python().find("vthread"), std::string::npos);
    EXPECT_FALSE(
        op::internal::force_gpu_matmul_tile(op::internal::GpuMatmulTile{64, 8, 2, 64, 8, 2, 8}));
    EXPECT_NE(op::default_schedule({c}, h100).to_python().find("vthread"), std::string::npos);
    check_default_gpu({c}, 24);
    EXPECT_EQ(op::internal::force_gpu_matmul_tile(std::nullopt)->bk, 8);
    EXPECT_EQ(op::default_schedule({c}, h100).to_python().find("vthread"), std::string::npos);
}

// Shared-memory tiles of the padded input and the weights at the channel loop, a register tile a
// thread (the sizes from op/GpuConvTiles.h): stride 2 on odd inputs, dilation 2 with asymmetric
// padding, groups 3, NHWC, a 1 x 1 conv, and a ReLU epilogue.
// conv2d with groups of 1 is an implicit GEMM (Schedule::reindex onto the matmul tiles, the
// gathers inlined into the shared tiles' copies): NCHW and NHWC, strides, dilation, asymmetric
// padding, 1 x 1, batches, an epilogue, split-K for few tiles; grouped convolutions keep the
// direct convolution's tiles.
bool reindexed(const Tensor& y) {
    const std::string py = op::default_schedule({y}, Target(kCudaCompileTarget)).to_python();
    return py.find("s.reindex(") != std::string::npos;
}

TEST(OpGpuSchedule, ConvTilesOnOddShapes) {
    Tensor x = placeholder({1, 19, 13, 11}), w = placeholder({20, 19, 3, 3});
    Tensor y = op::relu(op::conv2d_nchw(x, w, op::conv_params(2, 1)));
    EXPECT_TRUE(
        has_stage_in(op::default_schedule({y}, Target(kCudaCompileTarget)), StorageScope::Shared));
    EXPECT_TRUE(reindexed(y));
    std::string cu = check_default_gpu({y}, 171);
    expect_in(cu, "__shared__");
    Tensor xd = placeholder({2, 17, 12, 12}), wd = placeholder({8, 17, 3, 3});
    op::Conv2DParams pd{{1, 1}, {1, 2, 0, 1}, {2, 2}, 1};
    check_default_gpu({op::conv2d_nchw(xd, wd, pd)}, 153);
    Tensor xg = placeholder({1, 24, 9, 9}), wg = placeholder({12, 8, 3, 3});
    check_default_gpu({op::conv2d_nchw(xg, wg, op::conv_params(1, 1, 1, 3))}, 72);
    Tensor xn = placeholder({1, 9, 9, 24}), wn = placeholder({3, 3, 8, 12});
    check_default_gpu({op::conv2d_nhwc(xn, wn, op::conv_params(2, 1, 1, 3))}, 72);
    Tensor x1 = placeholder({1, 37, 8, 8}), w1 = placeholder({33, 37, 1, 1});
    check_default_gpu({op::conv2d_nchw(x1, w1, op::conv_params(1, 0))}, 37);
    EXPECT_FALSE(reindexed(op::conv2d_nchw(xg, wg, op::conv_params(1, 1, 1, 3))));
}

// A conv with a window gathers a costlier im2col: its product takes 64 x 64 tiles of 16 x 16
// threads; a 1 x 1 conv the matmul's model (here 64 x 128 tiles of 8 x 16 threads).
TEST(OpGpuSchedule, ConvWindowTakesTheWideTile) {
    for (int64_t r : {3, 1}) {
        Tensor x = placeholder({2, 32, 14, 14}), w = placeholder({64, 32, r, r});
        Tensor y = op::conv2d_nchw(x, w, op::conv_params(1, r / 2));
        Schedule s = op::default_schedule({y}, Target(kCudaCompileTarget));
        const std::string ir = to_string(lower(s, {x, w, y}, "conv", LowerOptions{}));
        const std::string y16 = "thread_binding(0, 16, \"threadIdx.y\")";
        EXPECT_EQ(ir.find(y16) != std::string::npos, r == 3) << ir;
    }
}

TEST(OpGpuSchedule, ConvImplicitGemmNhwcBatchesAndSplitK) {
    Tensor xn = placeholder({3, 9, 10, 13}), wn = placeholder({3, 3, 13, 18});
    Tensor yn = op::conv2d_nhwc(xn, wn, op::conv_params(2, 1));
    EXPECT_TRUE(reindexed(yn));
    check_default_gpu({yn}, 117);
    // Few outputs and a long reduction: the product's parts as a batch, then their sum.
    Tensor xs = placeholder({1, 64, 4, 4}), ws = placeholder({16, 64, 3, 3});
    Tensor ys = op::conv2d_nchw(xs, ws, op::conv_params(1, 1));
    const std::string py = op::default_schedule({ys}, Target(kCudaCompileTarget)).to_python();
    EXPECT_NE(py.find("s.reindex("), std::string::npos) << py;
    EXPECT_NE(py.find("s.rfactor("), std::string::npos) << py;
    check_default_gpu({ys}, 576);
    // Forced to the direct convolution (the experiment's hook), then released.
    EXPECT_FALSE(op::internal::force_gpu_conv_kernel(op::internal::GpuConvKernel::Direct));
    EXPECT_FALSE(reindexed(ys));
    EXPECT_EQ(op::internal::force_gpu_conv_kernel(std::nullopt),
              op::internal::GpuConvKernel::Direct);
    EXPECT_TRUE(reindexed(ys));
}

// Split-K: a product whose 64 x 64 tiles leave most SMs idle and whose reduction is long splits
// the reduction into parts (a stage of partial sums, tiled as a batch of products, then their
// sum); also under a dense epilogue, for a batch of products, and where the parts do not divide
// the reduction (the last part's sum bounded by it).
TEST(OpGpuSchedule, SplitKForFewTilesAndLongReductions) {
    const Target h100(kCudaCompileTarget);
    EXPECT_EQ(op::internal::split_k_length(1, 33, 20, 384, h100), 64);
    EXPECT_EQ(op::internal::split_k_length(1, 33, 20, 383, h100), 64);    // the last part 63
    EXPECT_EQ(op::internal::split_k_length(3, 257, 129, 511, h100), 64);  // a batch
    EXPECT_EQ(op::internal::split_k_length(1, 91, 3327, 3114, h100), 320);
    EXPECT_EQ(op::internal::split_k_length(1, 4096, 4096, 4096, h100), 0);  // fills the SMs
    EXPECT_EQ(op::internal::split_k_length(1, 176, 3877, 127, h100), 0);    // too short
    EXPECT_EQ(op::internal::split_k_length(1, 33, 20, 64, h100), 0);
    Tensor a = placeholder({33, 383}), b = placeholder({383, 20});
    Tensor c = op::matmul(a, b);
    Schedule s = op::default_schedule({c}, Target(kCudaCompileTarget));
    EXPECT_NE(s.to_python().find("rfactor"), std::string::npos) << s.to_python();
    std::string cu = check_default_gpu({c}, 383);
    expect_in(cu, "__shared__");
    Tensor a3 = placeholder({2, 33, 260}), b3 = placeholder({2, 260, 20});
    Tensor c3 = op::batch_matmul(a3, b3);
    EXPECT_NE(op::default_schedule({c3}, h100).to_python().find("rfactor"), std::string::npos);
    check_default_gpu({c3}, 260);
    Tensor x = placeholder({17, 256}), w = placeholder({19, 256}), bias = placeholder({19});
    Tensor y = op::dense(x, w, bias, op::Activation::GELU);
    EXPECT_NE(op::default_schedule({y}, Target(kCudaCompileTarget)).to_python().find("rfactor"),
              std::string::npos);
    check_default_gpu({y}, 256);
}

// The convolution's tiles follow the work (op/GpuConvTiles.h): a 7 x 7 layer at batch 1 gets
// blocks for most of the SMs (one 64-channel x 8 x 8 tile gave it 32), a 56 x 56 layer at batch
// 8 gets more outputs a thread than at batch 1 and at least 256 threads an SM; every choice within
// the block's limits.
TEST(OpGpuSchedule, ConvTilesFollowTheWork) {
    Target target(kCudaCompileTarget);
    const int64_t sms = target.sm_count();
    op::internal::ConvDims small{1, 2048, 7, 7, 512, 1, 1};
    std::optional<op::internal::ConvTiles> t = op::internal::choose_conv_tiles(small, target);
    ASSERT_TRUE(t.has_value());
    EXPECT_GE(t->blocks(small), sms / 2);
    op::internal::ConvDims b1{1, 64, 56, 56, 64, 3, 3}, b8 = b1;
    b8.batch = 8;
    std::optional<op::internal::ConvTiles> t1 = op::internal::choose_conv_tiles(b1, target);
    std::optional<op::internal::ConvTiles> t8 = op::internal::choose_conv_tiles(b8, target);
    ASSERT_TRUE(t1 && t8);
    EXPECT_GT(t8->per_thread(), t1->per_thread());
    EXPECT_GE(t8->blocks(b8) * t8->threads(), 256 * sms);
    for (const auto& [d, c] : {std::pair{small, *t}, std::pair{b1, *t1}, std::pair{b8, *t8}}) {
        EXPECT_LE(c.threads(), target.max_threads_per_block());
        EXPECT_LE(c.shared_bytes(d), target.max_shared_memory_per_block());
        EXPECT_EQ(c.kb % c.tk + c.ph % c.th + c.pw % c.tw, 0);
        EXPECT_EQ(c.cycles, op::internal::conv_tile_cycles(d, c, target));
    }
    // A forced rank (the tile sweep's hook) takes that candidate, the last past the end, and
    // nothing once released.
    std::vector<op::internal::ConvTiles> all = op::internal::conv_tile_candidates(small, target);
    ASSERT_GE(all.size(), 2u);
    EXPECT_FALSE(op::internal::force_conv_candidate(1));
    EXPECT_EQ(op::internal::choose_conv_tiles(small, target)->cycles, all[1].cycles);
    EXPECT_EQ(op::internal::force_conv_candidate(all.size() + 5), 1u);
    EXPECT_EQ(op::internal::choose_conv_tiles(small, target)->cycles, all.back().cycles);
    op::internal::force_conv_candidate(std::nullopt);
    EXPECT_EQ(op::internal::choose_conv_tiles(small, target)->cycles, all[0].cycles);
}

// A ResNet-50 layer compiles (too large for the interpreter; its shape only changes the tiles'
// counts).
TEST(OpGpuSchedule, ResNetLayerCompiles) {
    if (!has_cuda_backend()) GTEST_SKIP() << "no CUDA backend";
    Tensor x = placeholder({1, 64, 56, 56}), w = placeholder({64, 64, 3, 3});
    Tensor y = op::conv2d_nchw(x, w, op::conv_params(1, 1));
    GpuProgram p = gpu_program("conv", op::default_schedule({y}, Target(kCudaCompileTarget)));
    std::string cu = compile_for_gpu(p).get_source("cu");
    EXPECT_NE(cu.find("__shared__"), std::string::npos);
}

// Short rows: a warp per row, several rows a block, the rows staged in shared memory with 128-bit
// accesses, the reductions warp shuffles in registers (one barrier: after the copy).
TEST(OpGpuSchedule, SoftmaxAndNormsAWarpPerRow) {
    Tensor x = placeholder({37, 100});
    for (const Tensor& y : {op::softmax(x, -1), op::log_softmax(x, -1)}) {
        std::string cu = check_default_gpu({y}, 100);
        if (cu.empty()) continue;
        EXPECT_NE(cu.find("tsl_shfl_xor(0x"), std::string::npos) << cu;
        EXPECT_NE(cu.find("float4"), std::string::npos) << cu;
        EXPECT_EQ(count(cu, "__syncthreads()"), 1u) << cu;
    }
    Tensor x3 = placeholder({2, 5, 77}), g = placeholder({77}), b = placeholder({77});
    Tensor ln = op::layer_norm(x3, g, b);
    Schedule s = op::default_schedule({ln}, Target(kCudaCompileTarget));
    EXPECT_TRUE(has_stage_in(s, StorageScope::Local)) << s.to_python();
    check_default_gpu({ln}, 77);
    check_default_gpu({op::rms_norm(x3, g)}, 77);
    check_default_gpu({op::layer_norm(x3, Tensor(), Tensor())}, 77);
}

// Long rows (over 2048): a block per row, the reductions across the block's 512 threads.
TEST(OpGpuSchedule, SoftmaxAndNormsABlockPerRow) {
    Tensor x = placeholder({3, 2053}), g = placeholder({2053}), b = placeholder({2053});
    for (const Tensor& y : {op::softmax(x, -1), op::layer_norm(x, g, b), op::rms_norm(x, g)}) {
        std::string cu = check_default_gpu({y}, 2053);
        expect_in(cu, "tsl_shfl_xor(0x");
    }
    Tensor x4 = placeholder({2, 4100}), g4 = placeholder({4100}), b4 = placeholder({4100});
    std::string cu = check_default_gpu({op::layer_norm(x4, g4, b4)}, 4100);
    expect_in(cu, "float4");
}

// Sums, means and maxima over the last axis reduce across a warp (short rows) or a block.
TEST(OpGpuSchedule, RowReductionsAcrossThreads) {
    Tensor x = placeholder({13, 101}), xl = placeholder({3, 3001});
    for (const Tensor& y : {op::sum(x, {-1}), op::max(x, {-1}, true), op::mean(x, {1}),
                            op::sum(xl, {1}), op::min(xl, {-1}, true)}) {
        std::string cu = check_default_gpu({y}, 3001);
        expect_in(cu, "tsl_shfl_xor(0x");
    }
}

// A product of a row or a few whose reduction every read is dense along (dense at batch 1,
// matmul with b transposed) is a dot product a warp (a block past 2048), its epilogue a kernel of
// its own; a matmul of one row (b read k x n: not dense along k) splits a long reduction into
// parts; a short reduction keeps one thread an output.
TEST(OpGpuSchedule, DotProductsOfFewRowsAcrossAWarp) {
    Tensor x = placeholder({1, 300}), w = placeholder({37, 300}), bias = placeholder({37});
    std::string cu = check_default_gpu({op::dense(x, w, bias, op::Activation::GELU)}, 300);
    expect_in(cu, "tsl_shfl_xor(0x");
    Tensor x3 = placeholder({3, 2500}), w3 = placeholder({5, 2500});
    cu = check_default_gpu({op::matmul(x3, w3, false, true)}, 2500);
    expect_in(cu, "tsl_shfl_xor(0x");
    Tensor b = placeholder({300, 37});
    cu = check_default_gpu({op::matmul(x, b)}, 300);
    EXPECT_EQ(cu.find("tsl_shfl_xor(0x"), std::string::npos);
    // A long reduction of few outputs read along a column: parts a thread a point, then their
    // sum (also inside an epilogue's threads).
    Tensor x7 = placeholder({3, 700}), b7 = placeholder({700, 37});
    Tensor y7 = op::matmul(x7, b7);
    EXPECT_NE(op::default_schedule({y7}, Target(kCudaCompileTarget)).to_python().find("rfactor"),
              std::string::npos);
    check_default_gpu({y7}, 700);
    check_default_gpu({op::relu(op::matmul(x7, b7))}, 700);
    Tensor xs = placeholder({1, 200}), ws = placeholder({37, 200});
    cu = check_default_gpu({op::dense(xs, ws)}, 200);
    EXPECT_EQ(cu.find("tsl_shfl_xor(0x"), std::string::npos);
}

// Element-wise outputs: 4 elements a thread where the innermost extent allows (128 bits).
TEST(OpGpuSchedule, ElementwiseVectorAccesses) {
    Tensor a = placeholder({37, 64}), b = placeholder({64});
    std::string cu = check_default_gpu({op::relu(op::add(a, b))}, 1);
    expect_in(cu, "float4");
    check_default_gpu({op::sigmoid(placeholder({7, 13}))}, 1);
}

}  // namespace
}  // namespace tessel::testing
