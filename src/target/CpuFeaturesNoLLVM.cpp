// CPU names and features without LLVM (target/CpuFeatures.h): the host is "generic" with the
// features /proc/cpuinfo lists, named as LLVM names them; names are not checked, and a few known
// CPU names imply their vector width. Only built when TESSEL_USE_LLVM is off.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "target/CpuFeatures.h"

namespace tessel::internal {

namespace {

// /proc/cpuinfo flag → LLVM feature name, for the features that matter to code generation.
const std::map<std::string, std::string>& flag_names() {
    static const std::map<std::string, std::string> names = {
        {"sse", "sse"},
        {"sse2", "sse2"},
        {"pni", "sse3"},
        {"ssse3", "ssse3"},
        {"sse4_1", "sse4.1"},
        {"sse4_2", "sse4.2"},
        {"avx", "avx"},
        {"avx2", "avx2"},
        {"fma", "fma"},
        {"f16c", "f16c"},
        {"avx512f", "avx512f"},
        {"avx512bw", "avx512bw"},
        {"avx512dq", "avx512dq"},
        {"avx512vl", "avx512vl"},
        {"avx512cd", "avx512cd"},
        {"avx512_vnni", "avx512vnni"},
        {"avx512_bf16", "avx512bf16"},
        {"avx512_fp16", "avx512fp16"},
        {"avx_vnni", "avxvnni"},
        {"bmi1", "bmi"},
        {"bmi2", "bmi2"},
        {"popcnt", "popcnt"},
        {"abm", "lzcnt"},
        {"movbe", "movbe"},
        {"aes", "aes"},
        {"pclmulqdq", "pclmul"},
        {"sha_ni", "sha"},
        {"adx", "adx"},
        {"rdrand", "rdrnd"},
        {"rdseed", "rdseed"},
        {"cx16", "cx16"},
        {"vaes", "vaes"},
        {"vpclmulqdq", "vpclmulqdq"},
        {"gfni", "gfni"},
        {"asimd", "neon"},
    };
    return names;
}

// CPU names whose vector width is known without LLVM's tables.
int named_cpu_bits(const std::string& cpu) {
    static const char* const avx512[] = {"skylake-avx512", "cascadelake",    "cooperlake",
                                         "icelake-server", "icelake-client", "tigerlake",
                                         "sapphirerapids", "emeraldrapids",  "graniterapids",
                                         "znver4",         "znver5",         "x86-64-v4"};
    static const char* const avx[] = {"sandybridge", "ivybridge", "haswell",    "broadwell",
                                      "skylake",     "alderlake", "raptorlake", "znver1",
                                      "znver2",      "znver3",    "x86-64-v3"};
    for (const char* c : avx512)
        if (cpu == c) return 512;
    for (const char* c : avx)
        if (cpu == c) return 256;
#if defined(__x86_64__) || defined(__aarch64__)
    return 128;  // SSE2 / NEON are part of the baseline
#else
    return 0;
#endif
}

std::vector<std::string> proc_cpuinfo_features() {
    std::ifstream in("/proc/cpuinfo");
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        for (std::string w; words >> w;) {
            auto it = flag_names().find(w);
            if (it != flag_names().end()) out.push_back("+" + it->second);
        }
        break;
    }
    return out;
}

}  // namespace

CpuDescription resolve_cpu(const std::string&, const std::string& cpu,
                           const std::vector<std::string>& mattr) {
    std::map<std::string, bool> last;  // the last mention of a feature wins
    for (const std::string& f : mattr) last[f.substr(1)] = f[0] == '+';
    CpuDescription d;
    d.cpu = cpu;
    for (const auto& [name, on] : last) d.features.push_back((on ? "+" : "-") + name);
    d.vector_bits = named_cpu_bits(cpu);
    auto on = [&](const char* f) { return last.count(f) && last.at(f); };
    if (on("avx512f"))
        d.vector_bits = 512;
    else if ((on("avx") || on("avx2")) && d.vector_bits < 256)
        d.vector_bits = 256;
    if (last.count("avx512f") && !last.at("avx512f") && d.vector_bits > 256) d.vector_bits = 256;
    return d;
}

std::set<std::string> enabled_cpu_features(const std::string&,
                                           const std::vector<std::string>& features) {
    std::set<std::string> on;
    for (const std::string& f : features)
        if (!f.empty() && f[0] == '+') on.insert(f.substr(1));
    return on;
}

CpuDescription host_cpu() {
    static const CpuDescription host = resolve_cpu("llvm", "generic", proc_cpuinfo_features());
    return host;
}

}  // namespace tessel::internal
