// Target: canonical strings, round trips, and the queries of the search on known targets.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "tessel/Error.h"
#include "tessel/Target.h"
#include "tessel/codegen/Build.h"
#include "tessel/runtime/CUDA.h"

using namespace tessel;

namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST(Target, TwoSpellingsOfOneTargetGiveOneString) {
    Target a("llvm -mcpu=haswell -fast-math -num-cores=4");
    Target b("  llvm   -num-cores=4 -fast-math -mcpu=haswell ");
    EXPECT_EQ(a.str(), b.str());
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.str(), "llvm -mcpu=haswell -num-cores=4 -fast-math");
    Target c("cuda -fast-math -arch=sm_80");
    EXPECT_EQ(c.str(), Target("cuda -arch=sm_80 -fast-math").str());
    EXPECT_EQ(c.str(), "cuda -arch=sm_80 -fast-math");
    Target d("cuda -fast-math -num-cores=114 -arch=sm_90");
    EXPECT_EQ(d.str(), "cuda -arch=sm_90 -num-cores=114 -fast-math");
}

// -num-cores on a GPU: another part of the architecture (an H100 PCIe's 114 SMs against the
// table's 132); every other limit stays the architecture's, and without it the string and the
// count are the table's or the driver's.
TEST(Target, CudaNumCoresSetsTheSmCount) {
    Target table("cuda -arch=sm_90");
    Target pcie("cuda -arch=sm_90 -num-cores=114");
    EXPECT_EQ(pcie.sm_count(), 114);
    EXPECT_EQ(pcie.num_cores(), 114);
    EXPECT_NE(pcie, table);
    EXPECT_EQ(pcie.max_shared_memory_per_block_optin(), table.max_shared_memory_per_block_optin());
    EXPECT_EQ(pcie.max_threads_per_block(), table.max_threads_per_block());
    EXPECT_EQ(table.str(), "cuda -arch=sm_90");
    if (!table.gpu_limits().from_driver) {
        EXPECT_EQ(table.sm_count(), 132);
    }
}

TEST(Target, FeaturesAreDeduplicatedAndSorted) {
    Target a("llvm -mcpu=x86-64 -mattr=+fma,+avx2 -num-cores=2");
    Target b("llvm -mcpu=x86-64 -mattr=+avx2 -mattr=-fma,+fma -num-cores=2");
    EXPECT_EQ(a.str(), b.str());
    EXPECT_TRUE(contains(a.str(), "+avx2")) << a.str();
    EXPECT_TRUE(contains(a.str(), "+fma")) << a.str();
}

TEST(Target, FeaturesTheCpuImpliesAreNotSpelledOut) {
    if (!has_llvm_backend()) GTEST_SKIP() << "needs LLVM's CPU tables";
    // With LLVM's tables, haswell has AVX2: "+avx2" says nothing more.
    EXPECT_EQ(Target("llvm -mcpu=haswell -mattr=+avx2 -num-cores=1").str(),
              "llvm -mcpu=haswell -num-cores=1");
    Target t("llvm -mcpu=skylake-avx512 -mattr=-avx512f -num-cores=1");
    EXPECT_EQ(t.vector_lanes(Float(32)), 8);  // AVX2 is left
}

TEST(Target, RoundTripsThroughItsString) {
    for (const char* spec :
         {"llvm", "llvm -mcpu=skylake-avx512", "llvm -strict-float", "llvm -mattr=-fma -fast-math",
          "llvm -mcpu=haswell -mattr=-avx2", "cuda -arch=sm_90", "cuda -arch=sm_90a -fast-math",
          "cuda -arch=sm_75", "cuda -arch=sm_90a -num-cores=4"}) {
        Target t(spec);
        Target again(t.str());
        EXPECT_EQ(again.str(), t.str()) << spec;
        EXPECT_EQ(again.kind(), t.kind());
        EXPECT_EQ(again.float_mode(), t.float_mode());
        EXPECT_EQ(again.cpu(), t.cpu());
        EXPECT_EQ(again.features(), t.features());
        EXPECT_EQ(again.arch(), t.arch());
    }
}

TEST(Target, LlvmAloneIsThisMachineSpelledOut) {
    Target host("llvm");
    std::printf("host target: %s\n", host.str().c_str());
    EXPECT_EQ(host, Target::host());
    EXPECT_TRUE(contains(host.str(), "-mcpu=")) << host.str();
    EXPECT_FALSE(host.cpu().empty());
    unsigned cores = std::thread::hardware_concurrency();
    EXPECT_EQ(host.num_cores(), cores ? static_cast<int>(cores) : 1);
    EXPECT_TRUE(contains(host.str(), "-num-cores=" + std::to_string(host.num_cores())));
    EXPECT_EQ(host.kind(), TargetKind::LLVM);
    EXPECT_FALSE(host.is_gpu());
#if defined(__x86_64__)
    EXPECT_GE(host.vector_lanes(Float(32)), 4);  // SSE2 at least
#endif
}

TEST(Target, ParsingIsCheap) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) Target("llvm -mcpu=skylake-avx512 -mattr=-avx512bw");
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("100 parses: %.2f ms\n", ms);
    EXPECT_LT(ms, 2000.0);
}

TEST(Target, CpuQueries) {
    Target avx512("llvm -mcpu=skylake-avx512 -num-cores=16");
    EXPECT_EQ(avx512.vector_lanes(Float(32)), 16);
    EXPECT_EQ(avx512.vector_lanes(Float(64)), 8);
    EXPECT_EQ(avx512.vector_lanes(Int(8)), 64);
    EXPECT_EQ(avx512.vector_lanes(Float(16)), 32);
    EXPECT_EQ(avx512.vector_lanes(Float(32).with_lanes(4)), 16);  // by the element type
    EXPECT_EQ(avx512.num_cores(), 16);
    EXPECT_EQ(avx512.cache_line_bytes(), 64);
    EXPECT_EQ(Target("llvm -mcpu=haswell").vector_lanes(Float(32)), 8);
    EXPECT_EQ(Target("llvm -mcpu=x86-64 -mattr=+avx512f").vector_lanes(Float(32)), 16);
    EXPECT_THROW(avx512.max_threads_per_block(), CompileError);
    EXPECT_THROW(avx512.sm_count(), CompileError);
}

TEST(Target, CacheSizesAreTheHostsUnlessTheStringGivesThem) {
    Target host("llvm");
    std::printf("host: %s\n", host.describe().c_str());
    EXPECT_GT(host.l1d_cache_bytes(), 0);
    EXPECT_LE(host.l1d_cache_bytes(), host.l2_cache_bytes());
    EXPECT_LE(host.l2_cache_bytes(), host.l3_cache_bytes());
    EXPECT_FALSE(contains(host.str(), "-l1d")) << host.str();
    // Given sizes: parsed with binary suffixes, written with the largest exact one, in a fixed
    // order after -num-cores; the sizes not given stay the host's.
    Target t("llvm -mcpu=haswell -l2=1536k -num-cores=4 -l1d=32768 -fast-math");
    EXPECT_EQ(t.l1d_cache_bytes(), 32 << 10);
    EXPECT_EQ(t.l2_cache_bytes(), 1536 << 10);
    EXPECT_EQ(t.l3_cache_bytes(), host.l3_cache_bytes());
    EXPECT_EQ(t.str(), "llvm -mcpu=haswell -num-cores=4 -l1d=32K -l2=1536K -fast-math");
    EXPECT_EQ(Target(t.str()), t);
    EXPECT_TRUE(contains(t.describe(), "4 cores, 256-bit vectors, L1d 32 KiB, L2 1536 KiB"))
        << t.describe();
    Target all("llvm -mcpu=haswell -l1d=48K -l2=2M -l3=1G -num-cores=1");
    EXPECT_EQ(all.l3_cache_bytes(), int64_t(1) << 30);
    EXPECT_EQ(all.str(), "llvm -mcpu=haswell -num-cores=1 -l1d=48K -l2=2M -l3=1G");
    EXPECT_TRUE(contains(all.describe(),
                         "1 core, 256-bit vectors, L1d 48 KiB, L2 2 MiB, L3 1 GiB "
                         "(caches from target string)"))
        << all.describe();
    // GPU targets have no CPU caches.
    EXPECT_EQ(Target("cuda -arch=sm_80").l2_cache_bytes(), 0);
}

TEST(Target, FloatModes) {
    EXPECT_EQ(Target("llvm").float_mode(), TargetFloatMode::Contract);
    EXPECT_EQ(Target("llvm -strict-float").float_mode(), TargetFloatMode::Strict);
    EXPECT_EQ(Target("llvm -fast-math").float_mode(), TargetFloatMode::Fast);
    EXPECT_EQ(Target("cuda -arch=sm_80 -fast-math").float_mode(), TargetFloatMode::Fast);
}

TEST(Target, GpuQueriesFromTheTable) {
    struct Case {
        const char* arch;
        int64_t optin;
        int sms;
    };
    for (Case c : {Case{"sm_70", 96 * 1024, 80}, Case{"sm_75", 64 * 1024, 40},
                   Case{"sm_80", 163 * 1024, 108}, Case{"sm_86", 99 * 1024, 72},
                   Case{"sm_89", 99 * 1024, 58}, Case{"sm_90", 227 * 1024, 132}}) {
        Target t(std::string("cuda -arch=") + c.arch);
        EXPECT_TRUE(t.is_gpu());
        EXPECT_EQ(t.arch(), c.arch);
        EXPECT_EQ(t.vector_lanes(Float(32)), 4);  // float4
        EXPECT_EQ(t.vector_lanes(Float(16)), 8);
        EXPECT_EQ(t.cache_line_bytes(), 128);
        if (t.gpu_limits().from_driver) continue;  // this machine's GPU has this architecture
        EXPECT_EQ(t.max_threads_per_block(), 1024) << c.arch;
        EXPECT_EQ(t.max_shared_memory_per_block(), 48 * 1024) << c.arch;
        EXPECT_EQ(t.max_shared_memory_per_block_optin(), c.optin) << c.arch;
        EXPECT_EQ(t.max_registers_per_block(), 65536) << c.arch;
        EXPECT_EQ(t.warp_size(), 32) << c.arch;
        EXPECT_EQ(t.max_vthread_extent(), 8) << c.arch;
        EXPECT_EQ(t.sm_count(), c.sms) << c.arch;
        EXPECT_EQ(t.num_cores(), c.sms) << c.arch;
    }
}

TEST(Target, GpuQueriesFromTheDriverWhenTheArchitectureMatches) {
    if (!cuda_available()) GTEST_SKIP() << cuda_unavailable_reason();
    CudaDeviceInfo info = cuda_device_info(0);
    Target t("cuda");
    EXPECT_EQ(t.arch(), info.arch());
    EXPECT_EQ(t.str(), "cuda -arch=" + info.arch());
    EXPECT_TRUE(t.gpu_limits().from_driver);
    EXPECT_EQ(t.sm_count(), info.multiprocessors);
    EXPECT_EQ(t.max_shared_memory_per_block_optin(), info.shared_bytes_per_block_optin);
    EXPECT_EQ(t.max_registers_per_block(), info.registers_per_block);
    EXPECT_EQ(t.warp_size(), 32);
}

TEST(Target, KnownArchitecturesIncludeTheCommonOnes) {
    std::vector<std::string> archs = Target::known_cuda_archs();
    for (const char* a : {"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"})
        EXPECT_NE(std::find(archs.begin(), archs.end(), a), archs.end()) << a;
}
