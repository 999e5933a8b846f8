// Regression test: ResNet-50 conv2d candidates took 5-15 s to build on a 2-core machine
// (docs/perf/conv-build-time.md). The tuner's CPU sketches compute the padding stage inside the
// convolution's reduction loops; its zero-padding guard depends on the output tile (yo, xo) and
// the kernel offsets (ry, rx), so partition_loops split every one of those loops into head, main
// and tail parts, each holding a copy of the whole tile (padding copy and reduction alike):
// up to 3 x 3 x 3 x 3 copies here, hundreds of loops in a ResNet layer, and LLVM's loop passes grow
// faster than the code. partition_loops now splits a loop only where at least half of its body's
// work is guarded on it and the split copies few loops; the padding copy's own loops are still
// split. Checked on the structure (loops before and after partitioning), not on wall time, and
// against the reference interpreter.
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/Lower.h"
#include "tessel/op/Conv.h"

namespace tessel {
namespace {

int64_t count_loops(const Stmt& s) {
    int64_t n = 0;
    post_order_visit(s, [&](const IRNode* node) { n += node->node_type == IRNodeType::For; });
    return n;
}

// conv2d_nchw 1x4x16x16 by 8x4x3x3, padding 1; the output tiled by 4 channels x 4 x 4 with the
// reduction loops outside the tile, the padding computed at rx (a 1 x 4 x 4 patch per kernel
// offset, read by the 4 channels), as the tuner's multi-level tiling sketch lays out a
// convolution.
Schedule conv_with_pad_in_reduction(Tensor* x, Tensor* w, Tensor* y) {
    *x = placeholder({1, 4, 16, 16}, Float(32), "x");
    *w = placeholder({8, 4, 3, 3}, Float(32), "w");
    *y = op::conv2d_nchw(*x, *w, op::conv_params(1, 1));
    Schedule s = create_schedule({*y});
    int conv = s.stage_of(*y), pad = -1;
    for (int i = 0; i < static_cast<int>(s.stages().size()); ++i)
        if (s.stage(i).name() == "conv2d_nchw.pad") pad = i;
    EXPECT_GE(pad, 0);
    s.split(conv, 1, 4);                              // n ko ki h w rc ry rx
    s.tile(conv, 3, 4, 4, 4);                         // n ko ki yo xo yi xi rc ry rx
    s.reorder(conv, {0, 1, 3, 4, 7, 8, 9, 2, 5, 6});  // n ko yo xo rc ry rx ki yi xi
    s.compute_at(pad, conv, 6);
    return s;
}

TEST(Regression, ConvPadPartitionCopiesNotTheWholeTile) {
    Tensor x, w, y;
    Schedule s = conv_with_pad_in_reduction(&x, &w, &y);
    Target target("llvm");
    LowerOptions before_partition;
    before_partition.stop_after = "inject_double_buffer";
    int64_t loops_before = count_loops(lower(s, {x, w, y}, target, "main", before_partition).body);
    LowerOptions after_partition;
    after_partition.stop_after = "partition_loops";
    LoweredFunc f = lower(s, {x, w, y}, target, "main", after_partition);
    int64_t loops_after = count_loops(f.body);
    // Before the fix 14 loops became 248 (yo, xo, ry and rx each split in three around the
    // padding copy); now 24: only the padding copy's row and column loops split.
    EXPECT_LE(loops_after, 2 * loops_before)
        << loops_before << " loops became " << loops_after << ":\n"
        << to_string(f);
    testing::expect_matches_reference(s, 4 * 3 * 3);
}

}  // namespace
}  // namespace tessel
