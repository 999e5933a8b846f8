// TMA tensor maps in the CUDA payload (runtime/CudaLaunchPlan.h): they round-trip, payloads
// written before them still read, and a malformed map or tensor map parameter is refused with a
// RuntimeError saying what is wrong. No GPU needed.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "runtime/CudaTestPlans.h"
#include "tessel/Error.h"

namespace tessel {
namespace {

using json = nlohmann::json;

/// A 2-d float16 map of argument 0: dims (k, m), row stride 2 * k bytes, box 64 x 128.
CudaTensorMap float16_map() {
    CudaTensorMap m;
    m.buffer = 0;
    m.dtype = "float16";
    LaunchExpr k = LaunchExpr::shape_var(0);
    m.dims = {k, LaunchExpr::constant(1024)};
    m.strides = {LaunchExpr{
        {{LaunchExpr::Op::ShapeVar, 0}, {LaunchExpr::Op::Const, 2}, {LaunchExpr::Op::Mul, 0}}}};
    m.box = {64, 128};
    m.swizzle_bytes = 128;
    return m;
}

/// The add payload whose launch also takes a tensor map parameter (map 0).
CudaPayload payload_with_map() {
    CudaPayload p = test::add_payload({1, 2, 3, 4});
    CudaLaunch& l = p.plans["vadd"].launches[0];
    l.tensor_maps.push_back(float16_map());
    CudaTensorMap b = float16_map();
    b.buffer = 1;
    b.dtype = "int8";
    b.box = {16, 1};
    b.swizzle_bytes = 0;
    l.tensor_maps.push_back(b);
    l.params.push_back({CudaParam::Kind::TensorMap, 0});
    l.params.push_back({CudaParam::Kind::TensorMap, 1});
    return p;
}

/// The plan JSON of encode_cuda_payload()'s bytes ("TSLCUDA1", length, JSON, cubin).
json plan_json(const std::vector<uint8_t>& bytes) {
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(bytes[8 + size_t(i)]) << (8 * i);
    return json::parse(bytes.begin() + 16, bytes.begin() + 16 + int64_t(n));
}

/// Payload bytes with `plan` as the JSON and `cubin` after it.
std::vector<uint8_t> payload_bytes(const json& plan, const std::vector<uint8_t>& cubin) {
    std::string text = plan.dump();
    std::vector<uint8_t> out = {'T', 'S', 'L', 'C', 'U', 'D', 'A', '1'};
    for (int i = 0; i < 8; ++i) out.push_back(uint8_t(uint64_t(text.size()) >> (8 * i)));
    out.insert(out.end(), text.begin(), text.end());
    out.insert(out.end(), cubin.begin(), cubin.end());
    return out;
}

/// The message decode_cuda_payload() throws for payload_with_map() with `edit` applied to its
/// launch's JSON; "" when it decodes.
std::string decode_error(const std::function<void(json&)>& edit) {
    CudaPayload p = payload_with_map();
    json plan = plan_json(encode_cuda_payload(p));
    edit(plan["plans"]["vadd"]["launches"][0]);
    try {
        decode_cuda_payload(payload_bytes(plan, p.cubin));
    } catch (const RuntimeError& e) {
        return e.what();
    }
    return "";
}

#define EXPECT_REFUSED(edit, part)                                                          \
    do {                                                                                    \
        std::string message = decode_error(edit);                                           \
        EXPECT_NE(message.find(part), std::string::npos) << "message: '" << message << "'"; \
        EXPECT_NE(message.find("tensor map"), std::string::npos) << message;                \
    } while (0)

TEST(CudaTensorMapPayload, RoundTrips) {
    CudaPayload p = payload_with_map();
    CudaPayload back = decode_cuda_payload(encode_cuda_payload(p));
    EXPECT_EQ(back, p);
    EXPECT_EQ(back.plans.at("vadd").launches[0].tensor_maps[0].strides[0].str({"k"}), "(k * 2)");
    EXPECT_EQ(back.plans.at("vadd").launches[0].params.back().kind, CudaParam::Kind::TensorMap);
}

TEST(CudaTensorMapPayload, ParameterKindIsNamed) {
    json launch =
        plan_json(encode_cuda_payload(payload_with_map()))["plans"]["vadd"]["launches"][0];
    EXPECT_EQ(launch["params"].back(), json::array({"tensor_map", 1}));
    EXPECT_EQ(launch["params"][0], json::array({"buffer", 0}));
    EXPECT_EQ(launch["tensor_maps"][0]["swizzle_bytes"], 128);
}

TEST(CudaTensorMapPayload, OldPayloadWithoutTensorMapsReads) {
    CudaPayload p = test::add_payload({1, 2, 3});
    json plan = plan_json(encode_cuda_payload(p));
    plan["plans"]["vadd"]["launches"][0].erase("tensor_maps");
    CudaPayload back = decode_cuda_payload(payload_bytes(plan, p.cubin));
    EXPECT_EQ(back, p);
    EXPECT_TRUE(back.plans.at("vadd").launches[0].tensor_maps.empty());
}

TEST(CudaTensorMapPayload, RefusesUnknownDtype) {
    EXPECT_REFUSED([](json& l) { l["tensor_maps"][0]["dtype"] = "complex64"; },
                   "element type 'complex64' is not one TMA copies");
}

TEST(CudaTensorMapPayload, RefusesRankZeroAndSix) {
    EXPECT_REFUSED(
        [](json& l) {
            json& m = l["tensor_maps"][0];
            m["dims"] = json::array();
            m["strides"] = json::array();
            m["box"] = json::array();
        },
        "rank 0 is outside 1..5");
    EXPECT_REFUSED(
        [](json& l) {
            json& m = l["tensor_maps"][1];
            for (int i = 0; i < 4; ++i) {
                m["dims"].push_back(m["dims"][0]);
                m["strides"].push_back(json::array({json::array({0, 64})}));
                m["box"].push_back(1);
            }
        },
        "tensor map 1: rank 6 is outside 1..5");
}

TEST(CudaTensorMapPayload, RefusesStrideCountNotRankMinusOne) {
    EXPECT_REFUSED([](json& l) { l["tensor_maps"][0]["strides"] = json::array(); },
                   "0 strides for rank 2");
}

TEST(CudaTensorMapPayload, RefusesBoxCountNotRank) {
    EXPECT_REFUSED([](json& l) { l["tensor_maps"][0]["box"] = json::array({64}); },
                   "1 box extents for rank 2");
}

TEST(CudaTensorMapPayload, RefusesBoxEntryOutside1To256) {
    EXPECT_REFUSED([](json& l) { l["tensor_maps"][0]["box"][1] = 257; },
                   "box extent 257 of dim 1 is outside 1..256");
    EXPECT_REFUSED([](json& l) { l["tensor_maps"][0]["box"][0] = 0; },
                   "box extent 0 of dim 0 is outside 1..256");
}

TEST(CudaTensorMapPayload, RefusesSwizzleNotAWidth) {
    EXPECT_REFUSED([](json& l) { l["tensor_maps"][0]["swizzle_bytes"] = 16; },
                   "a swizzle of 16 bytes is not 0, 32, 64 or 128");
}

TEST(CudaTensorMapPayload, RefusesNegativeBuffer) {
    EXPECT_REFUSED([](json& l) { l["tensor_maps"][0]["buffer"] = -1; }, "negative buffer index");
}

TEST(CudaTensorMapPayload, RefusesParameterIndexOutOfRange) {
    EXPECT_REFUSED([](json& l) { l["params"].back()[1] = 2; },
                   "tensor map parameter 2 out of range (the launch has 2 tensor maps)");
    EXPECT_REFUSED([](json& l) { l["params"].back()[1] = -1; }, "tensor map parameter -1");
    EXPECT_REFUSED([](json& l) { l.erase("tensor_maps"); }, "(the launch has 0 tensor maps)");
}

TEST(CudaTensorMapPayload, RefusesUnknownParameterKind) {
    std::string message = decode_error([](json& l) { l["params"][0][0] = "texture"; });
    EXPECT_NE(message.find("unknown parameter kind 'texture'"), std::string::npos) << message;
}

}  // namespace
}  // namespace tessel
