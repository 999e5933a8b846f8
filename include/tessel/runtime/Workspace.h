// Scratch memory of generated CPU code: the heap blocks of `Allocate`s too large (or too dynamic)
// for the stack. Generated code calls the C entry points below, which the JIT and exported
// kernels resolve to libtessel_runtime; every block a kernel allocates is freed before it returns,
// on success and on every failure path, which workspace_live_blocks() lets tests check.
#pragma once

#include <cstdint>

namespace tessel {

/// The number of workspace blocks allocated and not yet freed, across all threads.
int64_t workspace_live_blocks();

}  // namespace tessel

extern "C" {
/// A block of `bytes` (> 0) aligned to 64 bytes, or null when memory is exhausted (the kernel
/// then fails with status 2). Thread-safe. A block of the same size that this thread freed
/// before is handed out again (its pages already in memory).
void* tessel_workspace_alloc(int64_t bytes);
/// Frees a block of tessel_workspace_alloc; null is ignored. Thread-safe. The thread keeps the
/// block for its next allocation of that size (up to 16 blocks and 256 MiB a thread, the oldest
/// returned to the system first; all of them when the thread exits).
void tessel_workspace_free(void* block);
}
