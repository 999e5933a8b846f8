// tensorize with the CPU's dot-product intrinsics (schedule/TensorIntrin.h: dot_16x4_u8s8 ...):
// a GEMM whose B is packed [N / lanes][K / group][lanes][group], in the loop interpreter and
// JIT-compiled for this CPU and for CPUs with and without the instructions, against the
// reference; the errors for an operand whose rows are not contiguous; Target::has_feature.
#include <gtest/gtest.h>

#include "ScheduleTestUtil.h"
#include "tessel/codegen/Build.h"
#include "tessel/schedule/TensorIntrin.h"

namespace tessel::testing {
namespace {

struct DotGemm {
    Tensor a, b, packed, c;
};

// C (m x n) = A (m x k) * B (k x n) summed in `acc`, B read through its packed copy.
DotGemm dot_gemm(Type at, Type bt, Type acc, int64_t m, int64_t n, int64_t k, int lanes,
                 int group) {
    DotGemm g;
    g.a = placeholder({m, k}, at, "A");
    g.b = placeholder({k, n}, bt, "B");
    const int L = lanes, G = group;
    g.packed = compute(
        {n / L, k / G, L, G},
        [&](Var jo, Var ko, Var j, Var kk) { return g.b(ko * G + kk, jo * L + j); }, "Bp");
    IterVar r = reduce_axis({0, k}, "k");
    g.c = compute(
        {m, n},
        [&](Var i, Var j) {
            Expr x = cast(acc, g.a(i, r.var()));
            Expr y = cast(acc, g.packed(floordiv(j, L), floordiv(r.var(), G), floormod(j, L),
                                        floormod(r.var(), G)));
            return sum(x * y, {r});
        },
        "C");
    return g;
}

// [i, jo, ko, ji, ki] with (ji, ki) tensorized.
Schedule tensorized(const DotGemm& g, int lanes, int group, const std::string& intrin) {
    Schedule s({g.c});
    const int c = s.stage_of(g.c);
    s.split(c, 1, lanes);           // [i, jo, ji, k]
    s.split(c, 3, group);           // [i, jo, ji, ko, ki]
    s.reorder(c, {0, 1, 3, 2, 4});  // [i, jo, ko, ji, ki]
    s.tensorize(c, 3, intrin);
    return s;
}

TEST(TensorizeCpuDot, Int8GemmMatchesTheReferenceOnEveryCpu) {
    const Type u8 = UInt(8), s8 = Int(8), i32 = Int(32);
    for (auto [intrin, lanes] : {std::pair{"dot_16x4_u8s8", 16}, std::pair{"dot_8x4_u8s8", 8}}) {
        DotGemm g = dot_gemm(u8, s8, i32, 5, 3 * lanes, 28, lanes, 4);
        Schedule s = tensorized(g, lanes, 4, intrin);
        std::string ir = expect_matches_reference(s, 28);  // interpreter and this CPU's JIT
        EXPECT_NE(ir.find("dot_product(" + std::to_string(lanes) + ", 4,"), std::string::npos)
            << ir;
        if (!has_llvm_backend()) continue;
        // With the instruction (Cascade Lake: AVX512-VNNI; Alder Lake: AVX-VNNI) and without
        // (Haswell): the same numbers.
        for (const char* cpu : {"llvm -mcpu=haswell", "llvm -mcpu=cascadelake"}) {
            std::vector<HostArray> arrays = {HostArray::random(u8, {5, 28}, 3),
                                             HostArray::random(s8, {28, 3 * lanes}, 4),
                                             HostArray(i32, {5, 3 * lanes})};
            if (!Target::host().has_feature("avx512f") &&
                std::string(cpu).find("cascade") != std::string::npos)
                continue;  // this CPU cannot run AVX-512 code
            ASSERT_TRUE(run_jit(s, {g.a, g.b, g.c}, arrays, ir, cpu));
            for (int64_t i = 0; i < 5; ++i)
                for (int64_t j = 0; j < 3 * lanes; ++j) {
                    int64_t want = 0;
                    for (int64_t q = 0; q < 28; ++q)
                        want += static_cast<int64_t>(arrays[0].get(i * 28 + q)) *
                                static_cast<int64_t>(arrays[1].get(q * 3 * lanes + j));
                    ASSERT_EQ(arrays[2].get(i * 3 * lanes + j), static_cast<double>(want))
                        << cpu << " " << intrin << " at " << i << ", " << j;
                }
        }
    }
}

TEST(TensorizeCpuDot, Bfloat16GemmMatchesTheReference) {
    const Type bf = BFloat(16), f32 = Float(32);
    for (auto [intrin, lanes] : {std::pair{"dot_16x2_bf16", 16}, std::pair{"dot_8x2_bf16", 8}}) {
        DotGemm g = dot_gemm(bf, bf, f32, 3, 2 * lanes, 38, lanes, 2);
        std::string ir = expect_matches_reference(tensorized(g, lanes, 2, intrin), 38);
        EXPECT_NE(ir.find("dot_product(" + std::to_string(lanes) + ", 2,"), std::string::npos)
            << ir;
    }
}

// B read in place (row-major k x n): its rows of a tile are n elements apart, not 4.
TEST(TensorizeCpuDot, AnOperandWhoseRowsAreNotContiguousIsAScheduleError) {
    Tensor a = placeholder({4, 16}, UInt(8), "A"), b = placeholder({16, 32}, Int(8), "B");
    IterVar r = reduce_axis({0, 16}, "k");
    Tensor c = compute(
        {4, 32},
        [&](Var i, Var j) {
            return sum(cast(Int(32), a(i, r.var())) * cast(Int(32), b(r.var(), j)), {r});
        },
        "C");
    Schedule s({c});
    const int st = s.stage_of(c);
    s.split(st, 1, 16);
    s.split(st, 3, 4);
    s.reorder(st, {0, 1, 3, 2, 4});
    try {
        s.tensorize(st, 3, "dot_16x4_u8s8");
        lower(s, {a, b, c});
        ADD_FAILURE() << "B read in place was tensorized";
    } catch (const ScheduleError& e) {
        EXPECT_NE(std::string(e.what()).find("moves by"), std::string::npos) << e.what();
    }
}

TEST(TensorizeCpuDot, TheTargetNamesTheIntrinsicItRuns) {
    const Type u8 = UInt(8), s8 = Int(8), i32 = Int(32), bf = BFloat(16), f32 = Float(32);
    auto name = [&](const char* spec, Type a, Type b, Type acc) {
        const TensorIntrin* in = cpu_dot_intrin_for(Target(spec), a, b, acc);
        return in ? in->name : std::string("none");
    };
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    EXPECT_EQ(name("llvm -mcpu=cascadelake", u8, s8, i32), "dot_16x4_u8s8");
    EXPECT_EQ(name("llvm -mcpu=alderlake", u8, s8, i32), "dot_8x4_u8s8");
    EXPECT_EQ(name("llvm -mcpu=haswell", u8, s8, i32), "none");
    EXPECT_EQ(name("llvm -mcpu=cooperlake", bf, bf, f32), "dot_16x2_bf16");
    EXPECT_EQ(name("llvm -mcpu=cascadelake", bf, bf, f32), "none");
    EXPECT_EQ(name("llvm -mcpu=cascadelake", s8, s8, i32), "none");  // vpdpbusd is u8 x s8
    EXPECT_EQ(name("llvm -mcpu=cascadelake -mattr=-avx512vnni", u8, s8, i32), "none");
    EXPECT_TRUE(Target("llvm -mcpu=sapphirerapids").has_feature("amx-int8"));
    EXPECT_FALSE(Target("llvm -mcpu=haswell").has_feature("avx512f"));
    EXPECT_FALSE(Target("cuda -arch=sm_90").has_feature("avx512f"));
}

}  // namespace
}  // namespace tessel::testing
