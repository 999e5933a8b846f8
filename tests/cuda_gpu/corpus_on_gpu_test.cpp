// On a GPU: every program of the GPU schedule corpus (tests/gpu/GpuScheduleCorpus.h) runs on
// device 0 on random inputs, its outputs poisoned before the launch, and matches the reference
// interpreter. Without a GPU every test is skipped, saying why. Kept quick: the GPU host also
// runs this binary under compute-sanitizer memcheck and racecheck (scripts/gpu-host.sh).
#include <gtest/gtest.h>

#include "gpu/GpuScheduleCorpus.h"
#include "gpu/GpuTestUtil.h"
#include "tessel/runtime/CUDA.h"

using namespace tessel;
using namespace tessel::testing;

class CudaCorpusOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaCorpusOnGpu, MatchesReference) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU: " << cuda_unavailable_reason();
    expect_gpu_program_runs(make_gpu_corpus_program(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Corpus, CudaCorpusOnGpu, ::testing::ValuesIn(gpu_corpus_names()),
                         [](const auto& info) { return info.param; });
