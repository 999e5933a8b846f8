// NDArray: allocation, alignment, wrapping external memory, copies, CUDA without a runtime.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"
#include "tessel/runtime/NDArray.h"

namespace tessel {
namespace {

TEST(NDArray, EmptyIsCompactAnd64ByteAligned) {
    NDArray a = NDArray::empty({3, 5}, float32());
    EXPECT_EQ(a.shape(), (std::vector<int64_t>{3, 5}));
    EXPECT_TRUE(a.strides().empty());
    EXPECT_TRUE(a.is_contiguous());
    EXPECT_EQ(a.num_elements(), 15);
    EXPECT_EQ(a.nbytes(), 60);
    EXPECT_EQ(a.alignment(), 64);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
    NDArray scalar = NDArray::empty({}, int64());
    EXPECT_EQ(scalar.num_elements(), 1);
    NDArray zero = NDArray::empty({0, 4}, float32());
    EXPECT_EQ(zero.nbytes(), 0);
    EXPECT_NE(zero.data(), nullptr);
}

TEST(NDArray, RejectsNegativeExtentAndCudaWithoutADevice) {
    EXPECT_THROW(NDArray::empty({2, -1}, float32()), RuntimeError);
    if (cuda_available()) return;  // tests/cuda allocates on it
    try {
        NDArray::empty({4}, float32(), cuda(0));
        FAIL() << "expected RuntimeError";
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find(cuda_unavailable_reason()), std::string::npos)
            << e.what();
    }
}

TEST(NDArray, CopiesRoundTrip) {
    std::vector<float> in(12), out(12, 0.f);
    std::iota(in.begin(), in.end(), 1.f);
    NDArray a = NDArray::empty({3, 4}, float32());
    a.copy_from(in.data(), 48);
    EXPECT_EQ(a.at<float>(5), 6.f);
    a.copy_to(out.data(), 48);
    EXPECT_EQ(in, out);
    NDArray b = a.copy_to_device(cpu());
    EXPECT_NE(b.data(), a.data());
    EXPECT_EQ(b.at<float>(11), 12.f);
    EXPECT_THROW(a.copy_from(in.data(), 44), RuntimeError);
    EXPECT_THROW(a.copy_to(out.data(), 52), RuntimeError);
    EXPECT_THROW(a.data_as<double>(), RuntimeError);
}

TEST(NDArray, WrapsExternalMemoryAndRunsKeepAliveOnLastView) {
    int released = 0;
    alignas(64) static float buffer[17];
    {
        std::shared_ptr<void> keep(nullptr, [&](void*) { ++released; });
        NDArray a = NDArray::from_external(buffer + 1, {16}, float32(), cpu(), keep);
        keep.reset();
        EXPECT_EQ(a.alignment(), 4);  // external memory: only what the address gives
        NDArray view = a;
        a = NDArray();
        EXPECT_EQ(released, 0);
        view.at<float>(0) = 7.f;
        EXPECT_EQ(buffer[1], 7.f);
    }
    EXPECT_EQ(released, 1);
}

TEST(NDArray, StridesAndByteOffset) {
    std::vector<float> storage(32);
    NDArray t = NDArray::from_external(storage.data(), {4, 4}, float32(), cpu(), nullptr, {1, 4});
    EXPECT_FALSE(t.is_contiguous());
    EXPECT_THROW(t.data_as<float>(), RuntimeError);
    NDArray c = NDArray::from_external(storage.data(), {4, 4}, float32(), cpu(), nullptr, {4, 1});
    EXPECT_TRUE(c.is_contiguous());
    NDArray o = NDArray::from_external(storage.data(), {2}, float32(), cpu(), nullptr, {}, 8);
    EXPECT_EQ(o.data(), storage.data() + 2);
    NDArray unit =
        NDArray::from_external(storage.data(), {1, 4}, float32(), cpu(), nullptr, {100, 1});
    EXPECT_TRUE(unit.is_contiguous());
    EXPECT_THROW(NDArray::from_external(storage.data(), {4}, float32(), cpu(), nullptr, {1, 1}),
                 RuntimeError);
}

TEST(NDArray, NullArrayThrowsOnUse) {
    NDArray a;
    EXPECT_FALSE(a.defined());
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_THROW(a.shape(), RuntimeError);
}

}  // namespace
}  // namespace tessel
