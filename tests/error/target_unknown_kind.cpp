// A target string of an unknown kind names the word and lists the kinds.
#include "error/ExpectCompileError.h"
#include "tessel/Target.h"

using namespace tessel;
using tessel::testing::expect_compile_error;

TEST(CompileError, TargetOfUnknownKind) {
    expect_compile_error([] { Target("opencl -device=mali"); },
                         {"'opencl -device=mali'", "unknown kind 'opencl'", "llvm, cuda"});
    expect_compile_error([] { Target("  "); }, {"empty target string", "llvm, cuda"});
}
