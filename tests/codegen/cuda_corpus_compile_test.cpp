// CI without a GPU: every program of the GPU schedule corpus (tests/gpu/GpuScheduleCorpus.h)
// runs as an SPMD program in the loop-IR interpreter (race detector on) and matches the
// reference, and NVRTC compiles it for sm_90 into a module with CUDA C and PTX sources.
#include <gtest/gtest.h>

#include "codegen/cuda/NVRTC.h"
#include "gpu/GpuScheduleCorpus.h"
#include "gpu/GpuTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

class CudaCorpusCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaCorpusCompile, InterpreterMatchesAndNvrtcCompiles) {
    if (!internal::has_nvrtc()) GTEST_SKIP() << "tessel built without the CUDA backend (NVRTC)";
    GpuProgram p = make_gpu_corpus_program(GetParam());
    std::optional<Module> m = expect_gpu_program_ok(p);
    if (m) {
        EXPECT_NE(m->get_source("cu").find("__global__"), std::string::npos) << p.name;
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CudaCorpusCompile, ::testing::ValuesIn(gpu_corpus_names()),
                         [](const auto& info) { return info.param; });
