// Every argument check of Kernel::operator(): the error names the argument, and neither the
// kernel runs nor any memory is read or written (each buffer keeps its fill pattern).
#include <gtest/gtest.h>

#include <cstring>

#include "TestKernels.h"
#include "tessel/Error.h"

namespace tessel {
namespace {

class ArgumentCheck : public ::testing::Test {
protected:
    void SetUp() override {
        test::register_test_native();
        module_ = Module({test::add_signature(), test::add_signature("add_inplace", true)},
                         "test-native", {});
        storage_.assign(64, 0);
        for (size_t i = 0; i < 3; ++i) {
            arrays_.push_back(NDArray::empty({8}, float32()));
            std::memset(arrays_[i].data(), 0xA5, 32);
        }
        test::add_calls = 0;
    }

    /// Calls kernel `name` with `args`; expects a RuntimeError containing every string of
    /// `parts`, no kernel call, and untouched memory.
    void expect_rejected(const std::vector<NDArray>& args, std::vector<std::string> parts,
                         const std::string& name = "add") {
        std::vector<uint8_t> before_storage = storage_;
        try {
            module_.get(name)(args);
            ADD_FAILURE() << "expected RuntimeError";
        } catch (const RuntimeError& e) {
            for (const auto& p : parts)
                EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
                    << "'" << p << "' missing from: " << e.what();
        }
        EXPECT_EQ(test::add_calls, 0);
        EXPECT_EQ(storage_, before_storage);
        for (const NDArray& a : arrays_) {
            auto* bytes = static_cast<const uint8_t*>(a.data());
            for (int i = 0; i < 32; ++i) ASSERT_EQ(bytes[i], 0xA5);
        }
    }

    Module module_;
    std::vector<NDArray> arrays_;
    std::vector<uint8_t> storage_;  // malloc memory: 16-byte aligned on 64-bit glibc
};

TEST_F(ArgumentCheck, ValidCallRuns) {
    arrays_[0].at<float>(0) = 1.f;
    arrays_[1].at<float>(0) = 2.f;
    module_.get("add")(arrays_);
    EXPECT_EQ(test::add_calls, 1);
    EXPECT_EQ(arrays_[2].at<float>(0), 3.f);
}

TEST_F(ArgumentCheck, WrongCount) {
    expect_rejected({arrays_[0], arrays_[1]}, {"kernel 'add'", "takes 3 arguments, got 2"});
}

TEST_F(ArgumentCheck, WrongDtype) {
    NDArray i = NDArray::from_external(storage_.data(), {8}, int32(), cpu(), nullptr);
    expect_rejected({arrays_[0], i, arrays_[2]}, {"argument 1 ('B')", "float32", "int32"});
}

TEST_F(ArgumentCheck, WrongShapeAndInconsistentSymbol) {
    NDArray two_d = NDArray::from_external(storage_.data(), {2, 4}, float32(), cpu(), nullptr);
    expect_rejected({arrays_[0], arrays_[1], two_d}, {"argument 2 ('C')", "[n]", "[2, 4]"});
    NDArray short_one = NDArray::from_external(storage_.data(), {4}, float32(), cpu(), nullptr);
    expect_rejected({arrays_[0], short_one, arrays_[2]}, {"argument 1 ('B')", "'n'", "8"});
}

TEST_F(ArgumentCheck, WrongDevice) {
    NDArray gpu = NDArray::from_external(storage_.data(), {8}, float32(), cuda(0), nullptr);
    expect_rejected({gpu, arrays_[1], arrays_[2]}, {"argument 0 ('A')", "cuda:0", "cpu"});
}

TEST_F(ArgumentCheck, NonContiguous) {
    NDArray strided = NDArray::from_external(storage_.data(), {8}, float32(), cpu(), nullptr, {2});
    expect_rejected({arrays_[0], arrays_[1], strided}, {"argument 2 ('C')", "not contiguous"});
}

TEST_F(ArgumentCheck, Misaligned) {
    // B demands 16-byte alignment; element alignment (4) is not enough.
    NDArray b = NDArray::from_external(storage_.data(), {8}, float32(), cpu(), nullptr, {}, 4);
    expect_rejected({arrays_[0], b, arrays_[2]}, {"argument 1 ('B')", "aligned to 4", "16"});
    NDArray a = NDArray::from_external(storage_.data(), {8}, float32(), cpu(), nullptr, {}, 2);
    expect_rejected({a, arrays_[1], arrays_[2]}, {"argument 0 ('A')", "needs 4"});
}

TEST_F(ArgumentCheck, NullData) {
    NDArray null = NDArray::from_external(nullptr, {8}, float32(), cpu(), nullptr);
    expect_rejected({arrays_[0], null, arrays_[2]}, {"argument 1 ('B')", "null"});
    expect_rejected({arrays_[0], arrays_[1], NDArray()}, {"argument 2 ('C')", "null"});
}

TEST_F(ArgumentCheck, OverlappingOutputRejectedUnlessInPlace) {
    NDArray shifted =
        NDArray::from_external(arrays_[0].data(), {8}, float32(), cpu(), nullptr, {}, 16);
    expect_rejected({arrays_[0], arrays_[1], shifted},
                    {"argument 0 ('A')", "argument 2 ('C')", "overlap"});
    expect_rejected({arrays_[0], arrays_[1], arrays_[1]},
                    {"argument 1 ('B')", "argument 2 ('C')", "overlap"});
    // Inputs may share memory; an in-place output may alias an input.
    module_.get("add")({arrays_[0], arrays_[0], arrays_[2]});
    arrays_[0].at<float>(0) = 1.f;
    arrays_[1].at<float>(0) = 2.f;
    module_.get("add_inplace")({arrays_[0], arrays_[1], arrays_[0]});
    EXPECT_EQ(arrays_[0].at<float>(0), 3.f);
    EXPECT_EQ(test::add_calls, 2);
}

TEST_F(ArgumentCheck, FailingKernelStatusIsAnError) {
    Module m({test::add_signature("fail")}, "test-native", {});
    EXPECT_THROW(m.get("fail")(arrays_), RuntimeError);
}

}  // namespace
}  // namespace tessel
