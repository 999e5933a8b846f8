// Values of known options that cannot be: a bad feature spelling, a non-positive core count, an
// option given twice, contradicting float modes, a cache size that is no size or shrinks with the
// level.
#include "error/ExpectCompileError.h"
#include "tessel/Target.h"

using namespace tessel;
using tessel::testing::expect_compile_error;

TEST(CompileError, TargetWithBadOptionValue) {
    expect_compile_error([] { Target("llvm -mattr=avx2"); },
                         {"bad feature 'avx2'", "+name or -name"});
    expect_compile_error([] { Target("llvm -num-cores=0"); },
                         {"bad -num-cores value '0'", "positive integer"});
    expect_compile_error([] { Target("cuda -arch=sm_80 -num-cores=-4"); },
                         {"bad -num-cores value '-4'", "positive integer"});
    expect_compile_error([] { Target("cuda -arch=sm_80 -num-cores=8 -num-cores=9"); },
                         {"-num-cores given twice"});
    expect_compile_error([] { Target("llvm -mcpu=haswell -mcpu=znver3"); }, {"-mcpu given twice"});
    expect_compile_error([] { Target("llvm -fast-math -strict-float"); },
                         {"-fast-math and -strict-float contradict"});
    expect_compile_error([] { Target("llvm -l2=two"); },
                         {"bad -l2 value 'two'", "K, M or G suffix", "-l2=48K"});
    expect_compile_error([] { Target("llvm -l1d=99999999999999999999"); }, {"bad -l1d value"});
    expect_compile_error([] { Target("llvm -l3=2T"); }, {"bad -l3 value '2T'"});
    expect_compile_error([] { Target("llvm -l2=1M -l3=512K"); },
                         {"-l3=512K is smaller than a cache level above it"});
    expect_compile_error([] { Target("llvm -l1d=32K -l1d=48K"); }, {"-l1d given twice"});
}
