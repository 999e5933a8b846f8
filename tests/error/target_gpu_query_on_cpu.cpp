// A GPU query of a CPU target is a CompileError naming the target.
#include "error/ExpectCompileError.h"
#include "tessel/Target.h"

using namespace tessel;
using tessel::testing::expect_compile_error;

TEST(CompileError, GpuQueryOfCpuTarget) {
    Target t("llvm -mcpu=haswell -num-cores=4");
    expect_compile_error(
        [&] { (void)t.max_threads_per_block(); },
        {"'llvm -mcpu=haswell -num-cores=4' is a CPU target", "threads per block"});
}
