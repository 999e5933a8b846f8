// Workspace blocks of generated CPU code (runtime/Workspace.h): a thread gets the block it freed
// back for the next allocation of its size (its pages already in memory), blocks are 64-byte
// aligned and distinct while live, and the live count is of blocks the code holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "tessel/runtime/Workspace.h"

namespace tessel {
namespace {

TEST(Workspace, AFreedBlockIsReusedForItsSize) {
    const int64_t live = workspace_live_blocks();
    void* a = tessel_workspace_alloc(3 << 20);
    void* b = tessel_workspace_alloc(3 << 20);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a, b);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
    EXPECT_EQ(workspace_live_blocks(), live + 2);
    std::memset(a, 1, 3 << 20);
    tessel_workspace_free(a);
    EXPECT_EQ(workspace_live_blocks(), live + 1);
    void* other = tessel_workspace_alloc(1000);  // another size: another block
    EXPECT_NE(other, a);
    void* again = tessel_workspace_alloc((3 << 20) - 5);  // the same size, rounded to 64
    EXPECT_EQ(again, a);
    EXPECT_EQ(workspace_live_blocks(), live + 3);
    for (void* p : {b, other, again}) tessel_workspace_free(p);
    tessel_workspace_free(nullptr);
    EXPECT_EQ(workspace_live_blocks(), live);
}

TEST(Workspace, ThreadsKeepTheirOwnBlocks) {
    void* mine = tessel_workspace_alloc(4096);
    tessel_workspace_free(mine);
    void* theirs = nullptr;
    std::thread t([&] {
        theirs = tessel_workspace_alloc(4096);
        tessel_workspace_free(theirs);  // kept by that thread, freed when it exits
    });
    t.join();
    EXPECT_NE(theirs, mine);
    void* again = tessel_workspace_alloc(4096);
    EXPECT_EQ(again, mine);
    tessel_workspace_free(again);
}

TEST(Workspace, ManyBlocksStayBounded) {
    // More blocks than a thread keeps: every allocation still succeeds and is distinct.
    void* blocks[40];
    for (int i = 0; i < 40; ++i) blocks[i] = tessel_workspace_alloc(64 * (i + 1));
    for (int i = 0; i < 40; ++i) {
        ASSERT_NE(blocks[i], nullptr);
        for (int j = 0; j < i; ++j) ASSERT_NE(blocks[i], blocks[j]);
        std::memset(blocks[i], i, 64 * (i + 1));
    }
    for (void* b : blocks) tessel_workspace_free(b);
    void* large = tessel_workspace_alloc(int64_t(300) << 20);  // above what a thread keeps
    ASSERT_NE(large, nullptr);
    tessel_workspace_free(large);
}

}  // namespace
}  // namespace tessel
