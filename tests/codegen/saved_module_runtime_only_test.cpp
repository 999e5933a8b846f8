// A CPU module saved by build() loads and runs in a program linked with libtessel_runtime alone
// (tests/runtime_only/run_saved_module.cpp): object code, linked by the runtime, no LLVM.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tessel/Tolerance.h"
#include "tessel/driver/Build.h"
#include "tessel/driver/DefaultSchedule.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Matmul.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

void write_bytes(const std::string& path, const void* data, size_t size) {
    std::ofstream(path, std::ios::binary).write(static_cast<const char*>(data), size);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(SavedModuleRuntimeOnly, MatmulWithExpEpilogueRunsWithoutLLVM) {
    Tensor A = placeholder({33, 20}, Float(32), "A");
    Tensor B = placeholder({20, 17}, Float(32), "B");
    Tensor C = op::exp(op::matmul(A, B));  // parallel loops, vectors, libm or libmvec calls
    Schedule s = op::default_schedule({C}, Target("llvm"));
    Module m = build(s, {A, B, C}, "llvm", "mm_exp");
    EXPECT_EQ(m.payload_format(), "cpu-object");
    HostArray a = HostArray::random(Float(32), {33, 20}, 1),
              b = HostArray::random(Float(32), {20, 17}, 2);
    HostArray c(Float(32), {33, 17});
    std::string dir = ::testing::TempDir() + "saved_module_" + std::to_string(getpid());
    ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
    std::vector<uint8_t> saved = m.save();
    write_bytes(dir + "/m.tslm", saved.data(), saved.size());
    write_bytes(dir + "/a", a.data(), a.nbytes());
    write_bytes(dir + "/b", b.data(), b.nbytes());
    write_bytes(dir + "/c", c.data(), c.nbytes());
    std::string command = std::string(TESSEL_RUN_SAVED_MODULE) + " " + dir + "/m.tslm mm_exp " +
                          dir + "/a " + dir + "/b " + dir + "/c";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::vector<uint8_t> out = read_bytes(dir + "/c");
    ASSERT_EQ(out.size(), c.nbytes());
    std::memcpy(c.data(), out.data(), out.size());
    HostArray expected = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    EXPECT_CLOSE_TO_REFERENCE(c, expected, tolerance_for(Float(32), 20).scaled(4));
    // The program links no LLVM.
    std::string ldd = "ldd " + std::string(TESSEL_RUN_SAVED_MODULE) + " | grep -qi llvm";
    EXPECT_NE(std::system(ldd.c_str()), 0);
}
