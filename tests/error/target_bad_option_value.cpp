// Values of known options that cannot be: a bad feature spelling, a non-positive core count, an
// option given twice, contradicting float modes.
#include "error/ExpectCompileError.h"
#include "tessel/Target.h"

using namespace tessel;
using tessel::testing::expect_compile_error;

TEST(CompileError, TargetWithBadOptionValue) {
    expect_compile_error([] { Target("llvm -mattr=avx2"); },
                         {"bad feature 'avx2'", "+name or -name"});
    expect_compile_error([] { Target("llvm -num-cores=0"); },
                         {"bad -num-cores value '0'", "positive integer"});
    expect_compile_error([] { Target("llvm -mcpu=haswell -mcpu=znver3"); }, {"-mcpu given twice"});
    expect_compile_error([] { Target("llvm -fast-math -strict-float"); },
                         {"-fast-math and -strict-float contradict"});
}
