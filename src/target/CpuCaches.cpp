// The host's cache sizes (target/CpuCaches.h).
#include "target/CpuCaches.h"

#include <unistd.h>

#include <cctype>
#include <fstream>

namespace tessel::internal {

namespace {

std::string read_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// The caches cpu0 lists in sysfs: the data or unified cache of each level.
CpuCaches from_sysfs() {
    CpuCaches c;
    for (int index = 0; index < 16; ++index) {
        std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
        std::string level = read_line(dir + "level"), type = read_line(dir + "type");
        if (level.empty()) break;
        if (type != "Data" && type != "Unified") continue;
        int64_t size = parse_cache_size(read_line(dir + "size"));
        if (size <= 0) continue;
        if (level == "1") c.l1d = size;
        if (level == "2") c.l2 = size;
        if (level == "3") c.l3 = size;
    }
    c.source = "sysfs";
    return c;
}

int64_t sysconf_size(int name) {
    long v = sysconf(name);
    return v > 0 ? v : 0;
}

CpuCaches from_sysconf() {
    CpuCaches c;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && \
    defined(_SC_LEVEL3_CACHE_SIZE)
    c.l1d = sysconf_size(_SC_LEVEL1_DCACHE_SIZE);
    c.l2 = sysconf_size(_SC_LEVEL2_CACHE_SIZE);
    c.l3 = sysconf_size(_SC_LEVEL3_CACHE_SIZE);
#endif
    c.source = "sysconf";
    return c;
}

CpuCaches detect() {
    CpuCaches c = from_sysfs();
    if (c.l1d <= 0 || c.l2 <= 0) c = from_sysconf();
    if (c.l1d <= 0 || c.l2 <= 0) c = {32 << 10, 1 << 20, 0, "assumed"};
    // A CPU without a third level (or one that does not say) is given its L2 as the last level.
    if (c.l3 <= 0) c.l3 = c.l2;
    return c;
}

}  // namespace

const CpuCaches& host_caches() {
    static const CpuCaches caches = detect();
    return caches;
}

std::string format_cache_size(int64_t bytes) {
    const char* units = "KMG";
    int unit = -1;
    while (unit < 2 && bytes % 1024 == 0 && bytes >= 1024) {
        bytes /= 1024;
        ++unit;
    }
    return std::to_string(bytes) + (unit >= 0 ? std::string(1, units[unit]) : "");
}

int64_t parse_cache_size(const std::string& text) {
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    if (digits == 0 || digits > 13 || text.size() > digits + 1) return -1;
    int64_t n = std::stoll(text.substr(0, digits));
    int shift = 0;
    if (digits < text.size()) {
        switch (std::toupper(static_cast<unsigned char>(text[digits]))) {
            case 'K': shift = 10; break;
            case 'M': shift = 20; break;
            case 'G': shift = 30; break;
            default: return -1;
        }
    }
    if (n < 1 || n > (int64_t(1) << (40 - shift))) return -1;
    return n << shift;
}

}  // namespace tessel::internal
