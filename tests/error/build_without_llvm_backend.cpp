// build() in a tessel configured with TESSEL_USE_LLVM=OFF: a CompileError that says how to get
// the backend, never a crash. (With the backend built in, the codegen tests cover build().)
#include <gtest/gtest.h>

#include "tessel/driver/Build.h"
#include "tessel/te/Operation.h"

using namespace tessel;

TEST(ErrorBuildWithoutLLVM, IsACompileError) {
    if (has_llvm_backend()) GTEST_SKIP() << "this tessel has the LLVM backend";
    Tensor A = placeholder({8}, Float(32), "A");
    Tensor B = compute({8}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    try {
        build(s, {A, B}, "llvm");
        ADD_FAILURE() << "no error";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("TESSEL_USE_LLVM=ON"), std::string::npos) << e.what();
    }
    register_llvm_payload_loader();  // a no-op, and harmless
}
