// With LLVM built in, an unknown CPU or feature names it and lists LLVM's known ones.
#include "error/ExpectCompileError.h"
#include "tessel/Target.h"
#include "tessel/driver/Build.h"

using namespace tessel;
using tessel::testing::expect_compile_error;

TEST(CompileError, TargetWithUnknownCpuOrFeature) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names are checked against LLVM's tables";
#if defined(__x86_64__)
    expect_compile_error([] { Target("llvm -mcpu=pentium9"); },
                         {"unknown CPU 'pentium9'", "known: generic", "haswell", "skylake-avx512"});
    expect_compile_error([] { Target("llvm -mattr=+avx9"); },
                         {"unknown CPU feature '+avx9'", "known:", "avx2", "avx512f"});
#else
    expect_compile_error([] { Target("llvm -mcpu=pentium9"); }, {"unknown CPU 'pentium9'"});
#endif
}
