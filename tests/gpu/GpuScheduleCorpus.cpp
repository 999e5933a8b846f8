// The GPU schedule corpus's list (see GpuScheduleCorpus.h); the programs are in GpuCorpus*.cpp.
#include "gpu/GpuScheduleCorpus.h"

#include <stdexcept>

#include "gpu/GpuCorpusParts.h"

namespace tessel::testing {

const std::vector<GpuCorpusEntry>& gpu_schedule_corpus() {
    using namespace corpus;
    static const std::vector<GpuCorpusEntry> entries = {
        {"bind_blocks_threads", bind_blocks_threads},
        {"bind_matmul_grid", bind_matmul_grid},
        {"bind_xyz", bind_xyz},
        {"local_producer", local_producer},
        {"shared_producer", shared_producer},
        {"vthread_strided", vthread_strided},
        {"vthread_shared", vthread_shared},
        {"shared_gemm", shared_gemm},
        {"shared_gemm_partial_tiles", shared_gemm_partial_tiles},
        {"cache_read_shared_gemm", cache_read_shared_gemm},
        {"cache_read_local", cache_read_local},
        {"cache_write_local", cache_write_local},
        {"cross_thread_sum", cross_thread_sum},
        {"cross_thread_sum_partial", cross_thread_sum_partial},
        {"cross_thread_max", cross_thread_max},
        {"cross_thread_min", cross_thread_min},
        {"cross_thread_two_axes", cross_thread_two_axes},
        {"cross_thread_argmax", cross_thread_argmax},
        {"cross_thread_result_in_shared", cross_thread_result_in_shared},
        {"rfactor_cross_thread", rfactor_cross_thread},
        {"softmax_block_per_row", softmax_block_per_row},
        {"vectorize_float4", vectorize_float4},
        {"unroll_in_kernel", unroll_in_kernel},
        {"float16_elementwise", float16_elementwise},
        {"bfloat16_elementwise", bfloat16_elementwise},
        {"two_kernels_global_intermediate", two_kernels_global_intermediate},
        {"symbolic_extent", symbolic_extent},
    };
    return entries;
}

std::vector<std::string> gpu_corpus_names() {
    std::vector<std::string> names;
    for (const GpuCorpusEntry& e : gpu_schedule_corpus()) names.push_back(e.name);
    return names;
}

GpuProgram make_gpu_corpus_program(const std::string& name) {
    for (const GpuCorpusEntry& e : gpu_schedule_corpus())
        if (e.name == name) return e.make();
    throw std::invalid_argument("GPU corpus: no program '" + name + "'");
}

}  // namespace tessel::testing
