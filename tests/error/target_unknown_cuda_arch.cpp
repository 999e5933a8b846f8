// A GPU architecture tessel does not know names it and lists the known ones.
#include "error/ExpectCompileError.h"
#include "tessel/Target.h"

using namespace tessel;
using tessel::testing::expect_compile_error;

TEST(CompileError, TargetWithUnknownCudaArch) {
    expect_compile_error(
        [] { Target("cuda -arch=sm_42"); },
        {"unknown architecture 'sm_42'", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"});
    expect_compile_error([] { Target("cuda -arch=compute_90"); },
                         {"unknown architecture 'compute_90'"});
    expect_compile_error([] { Target("cuda -arch=sm_80a"); }, {"'a' or 'f' suffix"});
}
