// GPU limits by architecture: the CUDA C++ Programming Guide's "Technical Specifications per
// Compute Capability" (threads, shared memory, registers, warp size), and the SM count of one
// representative part per architecture. The driver's numbers replace these where device 0 has the
// target's architecture (Target.cpp).
#include "target/GpuArchTable.h"

namespace tessel::internal {

namespace {

constexpr int kVthread = 8;  // Ansor's max_vthread_extent for CUDA
constexpr int64_t k48K = 48 * 1024;

struct Entry {
    const char* arch;
    const char* part;  // whose SM count the entry carries
    GpuLimits limits;
};

// clang-format off
// arch      part                 threads  shared  opt-in shared  registers  warp  vthread  SMs
const Entry kTable[] = {
    {"sm_70",  "Tesla V100",        {1024, k48K,  96 * 1024, 65536, 32, kVthread,  80, false}},
    {"sm_72",  "Jetson AGX Xavier", {1024, k48K,  96 * 1024, 65536, 32, kVthread,   8, false}},
    {"sm_75",  "Tesla T4",          {1024, k48K,  64 * 1024, 65536, 32, kVthread,  40, false}},
    {"sm_80",  "A100",              {1024, k48K, 163 * 1024, 65536, 32, kVthread, 108, false}},
    {"sm_86",  "A10",               {1024, k48K,  99 * 1024, 65536, 32, kVthread,  72, false}},
    {"sm_87",  "Jetson AGX Orin",   {1024, k48K, 163 * 1024, 65536, 32, kVthread,  16, false}},
    {"sm_89",  "L4",                {1024, k48K,  99 * 1024, 65536, 32, kVthread,  58, false}},
    {"sm_90",  "H100 SXM",          {1024, k48K, 227 * 1024, 65536, 32, kVthread, 132, false}},
    {"sm_100", "B200",              {1024, k48K, 227 * 1024, 65536, 32, kVthread, 148, false}},
    {"sm_120", "GeForce RTX 5090",  {1024, k48K,  99 * 1024, 65536, 32, kVthread, 170, false}},
};
// clang-format on

}  // namespace

std::string gpu_base_arch(const std::string& arch) {
    if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f'))
        return arch.substr(0, arch.size() - 1);
    return arch;
}

const GpuLimits* gpu_arch_limits(const std::string& arch) {
    std::string base = gpu_base_arch(arch);
    for (const Entry& e : kTable)
        if (base == e.arch) return &e.limits;
    return nullptr;
}

std::vector<std::string> gpu_arch_names() {
    std::vector<std::string> names;
    for (const Entry& e : kTable) names.push_back(e.arch);
    return names;
}

}  // namespace tessel::internal
