// Storage layouts of cache stages (storage_split, storage_reorder, storage_align): schedule_ops
// indexes the stage's buffer in its storage dimensions, storage_flatten turns them into padded
// flat addresses. Before / expected IR.
#include <gtest/gtest.h>

#include "tessel/lower/Lower.h"
#include "tessel/lower/ScheduleOps.h"
#include "tessel/lower/StorageFlatten.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

namespace tessel {
namespace {

// B[8][6] copied into B.global, packed as [ceil(6/4)][8][4] with the panel stride padded to 33.
struct Packed {
    Tensor A, B, C;
    Schedule s;
    Packed() : s(make()) {}
    Schedule make() {
        A = placeholder({8}, Float(32), "A");
        B = placeholder({8, 6}, Float(32), "B");
        IterVar k = reduce_axis({0, 8}, "k");
        C = compute(
            {6}, [&](Var j) { return sum(A(k) * B(k, j), {k}); }, "C");
        Schedule sch = create_schedule({C});
        int bp = sch.cache_read(sch.stage_of(B), "global", {sch.stage_of(C)});
        sch.storage_split(bp, 1, 4);         // [k][j.outer][j.inner]
        sch.storage_reorder(bp, {1, 0, 2});  // [j.outer][k][j.inner]
        sch.storage_align(bp, 0, 11, 0);     // panel stride 32 -> 33
        return sch;
    }
};

TEST(StorageLayout, ScheduleOpsIndexesTheStorageDimensions) {
    Packed p;
    LoweredFunc f = schedule_ops(p.s, {p.A, p.B, p.C}, "main");
    EXPECT_EQ(to_string(f),
              "def main(A, B, C):\n"
              "    allocate B.global: float32[66] (global)\n"
              "    for i0 in range(0, 8):\n"
              "        for i1 in range(0, 6):\n"
              "            B.global[i1 // 4, i0, i1 % 4] = B[i0, i1]\n"
              "    for i0_1 in range(0, 6):\n"
              "        C[i0_1] = 0.0f\n"
              "        for k in range(0, 8):\n"
              "            C[i0_1] = C[i0_1] + A[k] * B.global[i0_1 // 4, k, i0_1 % 4]\n");
}

TEST(StorageLayout, StorageFlattenUsesThePaddedStrides) {
    Packed p;
    LoweredFunc f = storage_flatten(schedule_ops(p.s, {p.A, p.B, p.C}, "main"));
    // Panel stride 32 padded to 33 (storage_align 11, 0), k stride 4; 2 panels of 33 elements.
    EXPECT_EQ(
        to_string(f),
        "def main(A, B, C):\n"
        "    allocate B.global: float32[66] (global)\n"
        "    for i0 in range(0, 8):\n"
        "        for i1 in range(0, 6):\n"
        "            B.global[i1 // 4 * 33 + i0 * 4 + i1 % 4] = B[i0 * 6 + i1]\n"
        "    for i0_1 in range(0, 6):\n"
        "        C[i0_1] = 0.0f\n"
        "        for k in range(0, 8):\n"
        "            C[i0_1] = C[i0_1] + A[k] * B.global[i0_1 // 4 * 33 + k * 4 + i0_1 % 4]\n");
}

}  // namespace
}  // namespace tessel
