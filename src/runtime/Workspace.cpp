// Workspace blocks of generated code (runtime/Workspace.h).
#include "tessel/runtime/Workspace.h"

#include <atomic>
#include <cstdlib>

namespace tessel {

namespace {

constexpr int64_t kWorkspaceAlign = 64;  // as NDArray's own allocations
std::atomic<int64_t> live_blocks{0};

}  // namespace

int64_t workspace_live_blocks() {
    return live_blocks.load(std::memory_order_relaxed);
}

}  // namespace tessel

extern "C" void* tessel_workspace_alloc(int64_t bytes) {
    if (bytes <= 0) bytes = 1;
    // aligned_alloc wants a multiple of the alignment.
    uint64_t rounded = (static_cast<uint64_t>(bytes) + tessel::kWorkspaceAlign - 1) &
                       ~static_cast<uint64_t>(tessel::kWorkspaceAlign - 1);
    void* block = std::aligned_alloc(tessel::kWorkspaceAlign, rounded);
    if (block) tessel::live_blocks.fetch_add(1, std::memory_order_relaxed);
    return block;
}

extern "C" void tessel_workspace_free(void* block) {
    if (!block) return;
    tessel::live_blocks.fetch_sub(1, std::memory_order_relaxed);
    std::free(block);
}
