// Workspace blocks of generated code (runtime/Workspace.h).
#include "tessel/runtime/Workspace.h"

#include <atomic>
#include <cstdlib>
#include <vector>

namespace tessel {

namespace {

constexpr int64_t kWorkspaceAlign = 64;  // as NDArray's own allocations

// A kernel called again asks for the same blocks, and a large block straight from the allocator
// is fresh pages (glibc maps blocks above its threshold anew and returns freed ones to the
// system): touching them faulted every page in on every call, which cost more than a Winograd
// convolution's work at 56 x 56 (its 3 MiB of transformed tiles: 3.3 ms a call against 0.7 with
// the pages kept). So each thread keeps the blocks it frees, up to kKeptBlocks and kKeptBytes, and
// hands one of the same size out again.
constexpr size_t kKeptBlocks = 16;
constexpr uint64_t kKeptBytes = uint64_t(256) << 20;

std::atomic<int64_t> live_blocks{0};

// A block's size, in the 64 bytes before the block itself.
constexpr uint64_t kHeader = kWorkspaceAlign;

struct KeptBlocks {
    std::vector<void*> blocks;  // most recently freed last; each a header's address
    uint64_t bytes = 0;
    ~KeptBlocks() {
        for (void* b : blocks) std::free(b);
    }
};

KeptBlocks& kept() {
    thread_local KeptBlocks k;
    return k;
}

uint64_t size_of(void* base) {
    return *static_cast<uint64_t*>(base);
}

}  // namespace

int64_t workspace_live_blocks() {
    return live_blocks.load(std::memory_order_relaxed);
}

}  // namespace tessel

extern "C" void* tessel_workspace_alloc(int64_t bytes) {
    using namespace tessel;
    if (bytes <= 0) bytes = 1;
    // aligned_alloc wants a multiple of the alignment.
    const uint64_t rounded = (static_cast<uint64_t>(bytes) + kWorkspaceAlign - 1) &
                             ~static_cast<uint64_t>(kWorkspaceAlign - 1);
    KeptBlocks& k = kept();
    void* base = nullptr;
    for (size_t i = k.blocks.size(); i-- > 0;) {
        if (size_of(k.blocks[i]) != rounded) continue;
        base = k.blocks[i];
        k.blocks.erase(k.blocks.begin() + static_cast<std::ptrdiff_t>(i));
        k.bytes -= rounded;
        break;
    }
    if (!base) {
        base = std::aligned_alloc(kWorkspaceAlign, rounded + kHeader);
        if (!base) return nullptr;
        *static_cast<uint64_t*>(base) = rounded;
    }
    live_blocks.fetch_add(1, std::memory_order_relaxed);
    return static_cast<char*>(base) + kHeader;
}

extern "C" void tessel_workspace_free(void* block) {
    using namespace tessel;
    if (!block) return;
    live_blocks.fetch_sub(1, std::memory_order_relaxed);
    void* base = static_cast<char*>(block) - kHeader;
    const uint64_t bytes = size_of(base);
    KeptBlocks& k = kept();
    if (bytes > kKeptBytes) return std::free(base);
    // Room for it: the oldest kept blocks go first.
    while (!k.blocks.empty() && (k.blocks.size() >= kKeptBlocks || k.bytes + bytes > kKeptBytes)) {
        k.bytes -= size_of(k.blocks.front());
        std::free(k.blocks.front());
        k.blocks.erase(k.blocks.begin());
    }
    k.blocks.push_back(base);
    k.bytes += bytes;
}
