// matmul (every transpose), batch_matmul (batch broadcast) and dense (bias, fused activation)
// under their default CPU and GPU schedules, on prime sizes.
#include "op/OpTestUtil.h"
#include "tessel/op/Matmul.h"

namespace tessel::testing {
namespace {

TEST(OpMatmul, EveryTransposeOnPrimeSizes) {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            Tensor a = placeholder(ta ? std::vector<Expr>{11, 13} : std::vector<Expr>{13, 11});
            Tensor b = placeholder(tb ? std::vector<Expr>{17, 11} : std::vector<Expr>{11, 17});
            Tensor c = op::matmul(a, b, ta, tb);
            EXPECT_EQ(const_shape(c), (std::vector<int64_t>{13, 17}));
            expect_default_schedules_match({c}, 11);
        }
}

TEST(OpMatmul, BatchMatmulBroadcastsABatchOfOne) {
    Tensor a = placeholder({3, 7, 5}), b = placeholder({1, 5, 9});
    Tensor c = op::batch_matmul(a, b);
    EXPECT_EQ(const_shape(c), (std::vector<int64_t>{3, 7, 9}));
    expect_default_schedules_match({c}, 5);
    Tensor bt = placeholder({3, 9, 5});
    expect_default_cpu_matches({op::batch_matmul(a, bt, false, true)}, 5);
}

TEST(OpMatmul, DenseWithBiasAndActivations) {
    Tensor x = placeholder({6, 19}), w = placeholder({13, 19}), bias = placeholder({13});
    for (op::Activation act :
         {op::Activation::None, op::Activation::ReLU, op::Activation::GELU, op::Activation::SiLU}) {
        expect_default_schedules_match({op::dense(x, w, bias, act)}, 19);
    }
    expect_default_cpu_matches({op::dense(x, w)}, 19);
    // Rows in a multiple of the vector width: the CPU tile is vectorised along the rows.
    Tensor rows = placeholder({32, 19});
    expect_default_cpu_matches({op::dense(rows, w, bias, op::Activation::ReLU)}, 19);
    expect_default_cpu_matches({op::dense(rows, w)}, 19);
    expect_default_cpu_matches({op::dense(x, w, Tensor(), op::Activation::Tanh)}, 19);
}

// One row (a matrix-vector product, ResNet's classifier): no output axis is a good vector axis
// and the weight's rows are dense along K, so the CPU schedule vectorises the reduction along K
// (rfactor) instead of tiling with a gather of the weight.
TEST(OpMatmul, DenseOfOneRowIsAVectorisedReduction) {
    Tensor x = placeholder({1, 64}), w = placeholder({13, 64}), bias = placeholder({13});
    for (Tensor y : {op::dense(x, w), op::dense(x, w, bias, op::Activation::ReLU)}) {
        Schedule s = op::default_schedule({y}, Target("llvm"));
        EXPECT_NE(s.to_python().find(".rfactor("), std::string::npos) << s.to_python();
        expect_default_cpu_matches({y}, 64);
    }
    // ResNet-50's classifier (8 MB of weight streamed once): the partial sums run in parallel.
    Tensor x2 = placeholder({1, 2048}), w2 = placeholder({1000, 2048});
    Schedule classifier =
        op::default_schedule_rules({op::dense(x2, w2)}, Target("llvm -num-cores=2"));
    EXPECT_NE(classifier.to_python().find(".parallel("), std::string::npos)
        << classifier.to_python();
}

TEST(OpMatmul, EpilogueIsComputedInsideTheProductTile) {
    Tensor x = placeholder({16, 8}), w = placeholder({32, 8}), bias = placeholder({32});
    Tensor y = op::dense(x, w, bias, op::Activation::ReLU);
    Schedule s = op::default_schedule({y}, Target("llvm"));
    int product = s.stage_of(op_inputs(y.op())[0]);  // dense.matmul
    EXPECT_EQ(s.stage(product).attach, AttachKind::At) << s.to_python();
    EXPECT_EQ(s.stage(product).attach_stage, s.stage_of(y));
}

// The CPU GEMM schedule (docs/operators.md, "Matrix products on CPUs") on sizes no tile divides,
// for targets whose vector width (AVX-512, AVX2) and L2 size give other tiles and blocks than
// this machine's: B packed per block at the block loop, the tile at the panel loop, and the
// results (the tails' unmasked vectors included) equal to the reference.
TEST(OpMatmul, CpuGemmOnOddShapesForOtherCpus) {
    const char* targets[] = {"llvm", "llvm -mcpu=skylake-avx512 -l2=64K -num-cores=4",
                             "llvm -mcpu=haswell -l2=16K -num-cores=2"};
    struct Shape {
        int64_t m, n, k;
    };
    for (const char* spec : targets)
        for (Shape sh : {Shape{37, 45, 29}, Shape{13, 77, 50}, Shape{100, 33, 17}, Shape{3, 5, 2}})
            for (bool tb : {false, true}) {
                Tensor a = placeholder({sh.m, sh.k});
                Tensor b =
                    placeholder(tb ? std::vector<Expr>{sh.n, sh.k} : std::vector<Expr>{sh.k, sh.n});
                Tensor c = op::matmul(a, b, false, tb);
                Schedule s = op::default_schedule_rules({c}, Target(spec));
                std::string py = s.to_python();
                EXPECT_NE(py.find("cache_read("), std::string::npos) << spec << "\n" << py;
                EXPECT_NE(py.find("storage_split("), std::string::npos) << py;
                SCOPED_TRACE(std::string(spec) + " " + std::to_string(sh.m) + "x" +
                             std::to_string(sh.n) + "x" + std::to_string(sh.k));
                expect_matches_reference(s, sh.k);
            }
}

// The last panel computes the vectors its columns need (lower/VectorizeLoops.h): 77 columns in
// AVX-512 panels of 32 leave 13, one vector of 16 (the main panels' vectors are 32 lanes); 129
// leave one column, a scalar. Both equal the reference.
TEST(OpMatmul, CpuGemmTailPanelComputesOnlyItsVectors) {
    Target avx512("llvm -mcpu=skylake-avx512 -num-cores=2");
    struct Shape {
        int64_t batch, m, n, k;
    };
    for (Shape sh : {Shape{7, 20, 77, 13}, Shape{3, 25, 129, 51}}) {
        Tensor a = placeholder({sh.batch, sh.m, sh.k}), b = placeholder({sh.batch, sh.k, sh.n});
        Tensor c = op::batch_matmul(a, b);
        Schedule s = op::default_schedule_rules({c}, avx512);
        SCOPED_TRACE(std::to_string(sh.n) + " columns");
        const std::string ir = to_string(lower(s, {a, b, c}));
        EXPECT_NE(ir.find(", 1, 32)"), std::string::npos) << ir;  // the whole panels
        if (sh.n % 32 == 13) {
            EXPECT_NE(ir.find(", 1, 16)"), std::string::npos) << ir;
        }
        expect_matches_reference(s, sh.k);
    }
}

// Enough work to run in parallel (2 M multiply-adds): the column blocks with the batch when
// there are two a core, else the row tiles inside a block (a narrow N), each checked.
TEST(OpMatmul, CpuGemmParallelOverBlocksOrRows) {
    Target cpu("llvm -l2=256K -num-cores=2");
    Tensor a = placeholder({131, 103}), b = placeholder({103, 157});
    Tensor wide = op::matmul(a, b);
    Schedule s = op::default_schedule_rules({wide}, cpu);
    EXPECT_NE(s.to_python().find("parallel"), std::string::npos) << s.to_python();
    expect_matches_reference(s, 103);

    Tensor x = placeholder({3, 61, 131}), y = placeholder({3, 131, 89});
    expect_matches_reference(op::default_schedule_rules({op::batch_matmul(x, y)}, cpu), 131);

    Tensor tall = placeholder({700, 150}), narrow = placeholder({150, 20});
    Schedule rows = op::default_schedule_rules({op::matmul(tall, narrow)}, cpu);
    EXPECT_NE(rows.to_python().find("parallel"), std::string::npos) << rows.to_python();
    expect_matches_reference(rows, 150);

    Tensor xb = placeholder({97, 131}), w = placeholder({211, 131}), bias = placeholder({211});
    expect_matches_reference(
        op::default_schedule_rules({op::dense(xb, w, bias, op::Activation::GELU)}, cpu), 131);
}

}  // namespace
}  // namespace tessel::testing
