// The runtime's object loader (runtime/CpuObjectLoader.h) treats a payload as untrusted: truncated
// objects and objects with flipped bytes are refused with RuntimeError or load, never crash.
// (Running code from a corrupted object is another matter; nothing here runs it.)
#include <gtest/gtest.h>

#include <random>

#include "tessel/driver/Build.h"
#include "tessel/driver/DefaultSchedule.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Matmul.h"

using namespace tessel;

TEST(CpuObjectLoaderFuzz, CorruptObjectsNeverCrashTheLoader) {
    if (!has_llvm_backend()) GTEST_SKIP() << "object code comes from the LLVM backend";
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = placeholder({8, 12}, Float(32), "B");
    Tensor C = op::exp(op::matmul(A, B));
    Module m = build(op::default_schedule({C}, Target("llvm")), {A, B, C}, "llvm", "k");
    ASSERT_EQ(m.payload_format(), "cpu-object");
    const std::vector<uint8_t>& object = m.payload();
    std::mt19937_64 rng(17);
    int refused = 0, loaded = 0;
    for (int round = 0; round < 600; ++round) {
        std::vector<uint8_t> bad = object;
        if (round % 3 == 0) {
            bad.resize(std::uniform_int_distribution<size_t>(0, object.size() - 1)(rng));
        } else {
            int flips = 1 + static_cast<int>(rng() % 8);
            for (int f = 0; f < flips; ++f)
                bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
        }
        try {
            Module again({m.signatures()[0]}, "cpu-object", bad);
            ++loaded;
        } catch (const RuntimeError&) {
            ++refused;
        }
    }
    EXPECT_GT(refused, 200);
    EXPECT_EQ(refused + loaded, 600);
}
