// The GPU schedule corpus: named, complete GPU programs covering every GPU primitive (blockIdx and
// threadIdx x/y/z, vthread, shared and local scopes through cache_read / cache_write / set_scope,
// compute_at inside kernels, cross-thread sum / max / min / argmax reductions, rfactor with a
// cross-thread reduction, float4 vectorization and unrolling inside kernels, float16 and
// bfloat16, two kernels with a global intermediate, symbolic extents), most of them the schedules
// of the GPU correctness tests (tests/correctness/schedule_bind_test.cpp ...). The CI test
// (tests/codegen/cuda_corpus_compile_test.cpp) checks each in the SPMD interpreter and compiles
// it with NVRTC; the GPU test (tests/cuda_gpu/) runs each on the GPU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpu/GpuCheck.h"

namespace tessel::testing {

/// One corpus entry: a name (a valid GoogleTest parameter name) and a factory.
struct GpuCorpusEntry {
    std::string name;
    std::function<GpuProgram()> make;
};

/// Every corpus entry, in a fixed order.
const std::vector<GpuCorpusEntry>& gpu_schedule_corpus();

/// The names of the corpus entries (for INSTANTIATE_TEST_SUITE_P).
std::vector<std::string> gpu_corpus_names();

/// The entry called `name`'s program; std::invalid_argument for an unknown name.
GpuProgram make_gpu_corpus_program(const std::string& name);

}  // namespace tessel::testing
