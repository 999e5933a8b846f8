// The host's cache sizes for Target (docs/target.md, "The memory hierarchy"): read from Linux's
// sysfs (/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}), else from the C library's
// sysconf (glibc answers from cpuid), else assumed (a common desktop core's sizes), saying which.
#pragma once

#include <cstdint>
#include <string>

namespace tessel::internal {

/// Cache sizes in bytes (0: unknown) and where they were read.
struct CpuCaches {
    int64_t l1d = 0, l2 = 0, l3 = 0;
    std::string source;  ///< "sysfs", "sysconf" or "assumed"
};

/// This machine's caches, read once (see the file comment); every size positive.
const CpuCaches& host_caches();

/// A size as sysfs and target strings write it: "48K", "2M", "1536K", "100" (bytes).
std::string format_cache_size(int64_t bytes);

/// Parses "<n>", "<n>K", "<n>M" or "<n>G" (binary multiples; lower case too) into bytes; -1 when
/// the text is not one of those or the size is outside [1, 2^40].
int64_t parse_cache_size(const std::string& text);

}  // namespace tessel::internal
