// Module: lookup, save/load round trip, corrupt and truncated bytes.
#include <gtest/gtest.h>

#include "TestKernels.h"
#include "tessel/Error.h"

namespace tessel {
namespace {

Module make_module() {
    test::register_test_native();
    KernelSignature fixed{"scale", DeviceType::CPU, {}};
    fixed.args.push_back({"X", float16(), {4, Dim("m")}, ArgAccess::ReadWrite, true, 64});
    return Module({test::add_signature(), fixed}, "test-native", {1, 2, 3, 0, 255},
                  {{"ll", "define void @add()"}, {"asm", "add:\n  ret"}});
}

TEST(Module, GetAndSources) {
    Module m = make_module();
    EXPECT_EQ(m.kernel_names(), (std::vector<std::string>{"add", "scale"}));
    EXPECT_EQ(m.get("add").signature(), test::add_signature());
    EXPECT_EQ(m.get_source("asm"), "add:\n  ret");
    EXPECT_THROW(m.get_source("cuda"), RuntimeError);
    try {
        m.get("nope");
        FAIL();
    } catch (const RuntimeError& e) {
        EXPECT_NE(std::string(e.what()).find("'add', 'scale'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Module({test::add_signature(), test::add_signature()}, "test-native", {}),
                 RuntimeError);
    EXPECT_THROW(Module({test::add_signature("missing")}, "test-native", {}), RuntimeError);
    EXPECT_THROW(Module({test::add_signature()}, "no-such-format", {}), RuntimeError);
}

TEST(Module, SaveLoadRoundTrip) {
    Module m = make_module();
    Module back = Module::load(m.save());
    EXPECT_EQ(back.signatures(), m.signatures());
    EXPECT_EQ(back.payload(), m.payload());
    EXPECT_EQ(back.payload_format(), "test-native");
    EXPECT_EQ(back.sources(), m.sources());
    EXPECT_EQ(back.save(), m.save());
    NDArray a = NDArray::empty({3}, float32()), c = NDArray::empty({3}, float32());
    for (int i = 0; i < 3; ++i) a.at<float>(i) = float(i);
    NDArray b = NDArray::empty({3}, float32());
    for (int i = 0; i < 3; ++i) b.at<float>(i) = 10.f;
    back.get("add")({a, b, c});
    EXPECT_EQ(c.at<float>(2), 12.f);
}

TEST(Module, TruncatedBytesAreRejected) {
    std::vector<uint8_t> bytes = make_module().save();
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
        EXPECT_THROW(Module::load(cut), RuntimeError) << "truncated to " << n << " bytes";
    }
    bytes.push_back(0);
    EXPECT_THROW(Module::load(bytes), RuntimeError);
}

TEST(Module, CorruptBytesAreRejectedOrLoadCleanly) {
    std::vector<uint8_t> bytes = make_module().save();
    for (size_t i = 0; i < bytes.size(); ++i) {
        for (uint8_t flip : {0x01, 0x80, 0xff}) {
            std::vector<uint8_t> bad = bytes;
            bad[i] ^= flip;
            try {
                Module::load(bad);  // a flip inside a string may still be a valid module
            } catch (const RuntimeError&) {
            }
        }
    }
    std::vector<uint8_t> version = bytes;
    version[8] = 2;
    EXPECT_THROW(Module::load(version), RuntimeError);
    std::vector<uint8_t> magic = bytes;
    magic[0] = 'X';
    EXPECT_THROW(Module::load(magic), RuntimeError);
}

}  // namespace
}  // namespace tessel
