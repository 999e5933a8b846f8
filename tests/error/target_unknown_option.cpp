// An unknown option of a target names it and lists the options of the target's kind.
#include "error/ExpectCompileError.h"
#include "tessel/Target.h"

using namespace tessel;
using tessel::testing::expect_compile_error;

TEST(CompileError, TargetWithUnknownOption) {
    expect_compile_error([] { Target("llvm -mcpu=haswell -O3"); },
                         {"unknown option '-O3' for llvm", "-mcpu=<cpu>",
                          "-mattr=", "-num-cores=", "-fast-math", "-strict-float"});
    expect_compile_error([] { Target("cuda -arch=sm_90 -strict-float"); },
                         {"unknown option '-strict-float' for cuda", "-arch=sm_XX", "-fast-math"});
}
