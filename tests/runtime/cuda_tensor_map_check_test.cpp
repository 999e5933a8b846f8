// What the runtime checks before it asks the driver to encode a TMA tensor map
// (runtime/cuda/TensorMaps.h): the element types, each of TMA's requirements with its message,
// and the launcher's cache re-encoding only when the address, dims or strides change. No GPU.
#include <gtest/gtest.h>

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/TensorMaps.h"
#include "tessel/Error.h"

namespace tessel {
namespace {

using namespace internal::cuda;

/// A 2-d map of `dtype` (extents from the call), box `box0` x 64, swizzle `swizzle` bytes.
CudaTensorMap map_2d(const std::string& dtype, int64_t box0, int swizzle = 0) {
    CudaTensorMap m;
    m.dtype = dtype;
    m.dims = {LaunchExpr::shape_var(0), LaunchExpr::shape_var(1)};
    m.strides = {LaunchExpr::shape_var(2)};
    m.box = {box0, 64};
    m.swizzle_bytes = swizzle;
    return m;
}

constexpr uintptr_t kAligned = 0x7f0000000100;

bool mentions(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(CudaTensorMapCheck, AcceptsAnAlignedRowMajorMatrix) {
    EXPECT_EQ(tensor_map_problem(map_2d("float16", 64, 128), kAligned, {1024, 1000}, {2048}), "");
    EXPECT_EQ(tensor_map_problem(map_2d("float32", 8), kAligned, {1000, 7}, {4000}), "");
}

TEST(CudaTensorMapCheck, RefusesAnUnalignedAddress) {
    std::string p = tensor_map_problem(map_2d("float16", 64), kAligned + 8, {1024, 1000}, {2048});
    EXPECT_TRUE(mentions(p, "address 0x7f0000000108 is not a multiple of 16")) << p;
    EXPECT_EQ(tensor_map_problem(map_2d("float16", 64), kAligned + 16, {1024, 1000}, {2048}), "");
}

TEST(CudaTensorMapCheck, RefusesAStrideNotAMultipleOf16) {
    std::string p = tensor_map_problem(map_2d("float16", 64), kAligned, {1001, 1000}, {2002});
    EXPECT_EQ(p,
              "byte stride 2002 of dim 1 is not a multiple of 16 (TMA reads rows whose stride is "
              "a multiple of 16 bytes; schedule this shape without tma())");
}

TEST(CudaTensorMapCheck, RefusesAStrideOf2To40) {
    int64_t huge = int64_t(1) << 40;
    std::string p = tensor_map_problem(map_2d("int8", 16), kAligned, {16, 2}, {huge});
    EXPECT_TRUE(mentions(p, "byte stride 1099511627776 of dim 1 is outside 0..2^40 - 1")) << p;
    EXPECT_EQ(tensor_map_problem(map_2d("int8", 16), kAligned, {16, 2}, {huge - 16}), "");
}

TEST(CudaTensorMapCheck, RefusesABoxWiderThanTheSwizzle) {
    // 128 float16 elements are 256 bytes: wider than a 128-byte swizzle row.
    std::string p = tensor_map_problem(map_2d("float16", 128, 128), kAligned, {1024, 8}, {2048});
    EXPECT_TRUE(mentions(p,
                         "the box's inner row of 128 x 2 = 256 bytes is wider than the "
                         "128-byte swizzle"))
        << p;
    EXPECT_TRUE(mentions(p, "at most 64 float16 elements")) << p;
    EXPECT_EQ(tensor_map_problem(map_2d("float16", 128), kAligned, {1024, 8}, {2048}), "");
    EXPECT_NE(tensor_map_problem(map_2d("float32", 16, 32), kAligned, {1024, 8}, {4096}), "");
}

TEST(CudaTensorMapCheck, RefusesInnerBoxBytesNotAMultipleOf16) {
    std::string p = tensor_map_problem(map_2d("float32", 6), kAligned, {1024, 8}, {4096});
    EXPECT_TRUE(mentions(p, "the box's inner row of 6 x 4 = 24 bytes is not a multiple of 16"))
        << p;
    EXPECT_TRUE(mentions(p, "a multiple of 4 float32 elements")) << p;
}

TEST(CudaTensorMapCheck, RefusesRankSix) {
    CudaTensorMap m;
    m.dtype = "float32";
    m.dims.assign(6, LaunchExpr::constant(4));
    m.strides.assign(5, LaunchExpr::constant(16));
    m.box.assign(6, 4);
    std::vector<int64_t> dims(6, 4), strides(5, 16);
    std::string p = tensor_map_problem(m, kAligned, dims, strides);
    EXPECT_TRUE(mentions(p, "rank 6 is outside 1..5")) << p;
    m.dims.resize(5);
    m.strides.resize(4);
    m.box.resize(5);
    dims.resize(5);
    strides.resize(4);
    EXPECT_EQ(tensor_map_problem(m, kAligned, dims, strides), "");
}

TEST(CudaTensorMapCheck, RefusesADimOfZeroOrPast2To32) {
    std::string p = tensor_map_problem(map_2d("float16", 64), kAligned, {1024, 0}, {2048});
    EXPECT_TRUE(mentions(p, "extent 0 of dim 1 is outside 1..2^32")) << p;
    int64_t past = (int64_t(1) << 32) + 1;
    p = tensor_map_problem(map_2d("int8", 16), kAligned, {past, 1}, {past + 15});
    EXPECT_TRUE(mentions(p, "extent 4294967297 of dim 0 is outside 1..2^32")) << p;
}

TEST(CudaTensorMapCheck, RefusesValuesNotMatchingTheRank) {
    std::string p = tensor_map_problem(map_2d("float16", 64), kAligned, {1024}, {});
    EXPECT_TRUE(mentions(p, "1 dims and 0 strides for rank 2")) << p;
}

TEST(CudaTensorMapCheck, DescribesTheMap) {
    EXPECT_EQ(tensor_map_text(map_2d("float16", 64), {1001, 1000}),
              "float16, dims 1001 x 1000, innermost first");
    CudaTensorMap v = map_2d("int8", 16);
    EXPECT_EQ(tensor_map_text(v, {4096}), "int8, dims 4096");
}

TEST(CudaTensorMapCheck, MapsElementTypes) {
    EXPECT_EQ(tensor_map_data_type("float16"), kTensorMapFloat16);
    EXPECT_EQ(tensor_map_data_type("bfloat16"), kTensorMapBFloat16);
    EXPECT_EQ(tensor_map_data_type("float32"), kTensorMapFloat32);
    EXPECT_EQ(tensor_map_data_type("float64"), kTensorMapFloat64);
    EXPECT_EQ(tensor_map_data_type("int8"), kTensorMapUInt8);
    EXPECT_EQ(tensor_map_data_type("uint8"), kTensorMapUInt8);
    EXPECT_EQ(tensor_map_data_type("int16"), kTensorMapUInt16);
    EXPECT_EQ(tensor_map_data_type("uint16"), kTensorMapUInt16);
    EXPECT_EQ(tensor_map_data_type("int32"), kTensorMapInt32);
    EXPECT_EQ(tensor_map_data_type("uint32"), kTensorMapUInt32);
    EXPECT_EQ(tensor_map_data_type("int64"), kTensorMapInt64);
    EXPECT_EQ(tensor_map_data_type("uint64"), kTensorMapUInt64);
    EXPECT_EQ(tensor_map_element_bytes("bfloat16"), 2);
    EXPECT_EQ(tensor_map_element_bytes("uint64"), 8);
    // cuda.h's values (CUDA 13.0): UINT8 = 0 ... FLOAT16 = 6, FLOAT32 = 7, BFLOAT16 = 9.
    EXPECT_EQ(kTensorMapUInt8, 0);
    EXPECT_EQ(kTensorMapFloat16, 6);
    EXPECT_EQ(kTensorMapBFloat16, 9);
}

TEST(CudaTensorMapCheck, RefusesOtherElementTypes) {
    for (const char* dtype : {"bool", "complex64", "float8_e4m3", "float32x4", ""}) {
        try {
            tensor_map_data_type(dtype);
            ADD_FAILURE() << "accepted '" << dtype << "'";
        } catch (const RuntimeError& e) {
            EXPECT_TRUE(mentions(e.what(), "element type '" + std::string(dtype) + "'"))
                << e.what();
        }
    }
}

TEST(CudaTensorMapCheck, MapsSwizzleWidths) {
    EXPECT_EQ(tensor_map_swizzle(0), kTensorMapSwizzleNone);
    EXPECT_EQ(tensor_map_swizzle(32), kTensorMapSwizzle32B);
    EXPECT_EQ(tensor_map_swizzle(64), kTensorMapSwizzle64B);
    EXPECT_EQ(tensor_map_swizzle(128), kTensorMapSwizzle128B);
    EXPECT_THROW(tensor_map_swizzle(256), RuntimeError);
}

TEST(CudaTensorMapCache, EncodesAgainOnlyWhenAValueChanges) {
    TensorMapCache cache;
    int encodes = 0;
    auto encoder = [&encodes] {
        EncodedTensorMap m;
        m.words[0] = uint64_t(++encodes);
        return m;
    };
    TensorMapValues v{kAligned, {1024, 1000}, {2048}};
    EXPECT_EQ(cache.get(0, 0, v, encoder).words[0], 1u);
    EXPECT_EQ(cache.get(0, 0, v, encoder).words[0], 1u);
    EXPECT_EQ(cache.get(0, 1, v, encoder).words[0], 2u);  // another map of the launch
    EXPECT_EQ(cache.get(1, 0, v, encoder).words[0], 3u);  // another launch
    TensorMapValues moved = v;
    moved.address += 256;
    EXPECT_EQ(cache.get(0, 0, moved, encoder).words[0], 4u);
    TensorMapValues taller = moved;
    taller.dims[1] = 1001;
    EXPECT_EQ(cache.get(0, 0, taller, encoder).words[0], 5u);
    TensorMapValues wider = taller;
    wider.strides[0] = 4096;
    EXPECT_EQ(cache.get(0, 0, wider, encoder).words[0], 6u);
    EXPECT_EQ(cache.get(0, 0, wider, encoder).words[0], 6u);
    EXPECT_EQ(encodes, 6);
}

TEST(CudaTensorMapCache, KeepsTheOldMapWhenEncodingThrows) {
    TensorMapCache cache;
    TensorMapValues v{kAligned, {64}, {}};
    auto first = [] {
        EncodedTensorMap m;
        m.words[0] = 7;
        return m;
    };
    cache.get(0, 0, v, first);
    TensorMapValues other = v;
    other.address += 16;
    auto failing = []() -> EncodedTensorMap { throw RuntimeError("refused"); };
    EXPECT_THROW(cache.get(0, 0, other, failing), RuntimeError);
    EXPECT_EQ(cache.get(0, 0, v, failing).words[0], 7u);
}

}  // namespace
}  // namespace tessel
