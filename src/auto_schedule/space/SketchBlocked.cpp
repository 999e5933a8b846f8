// The CPU blocked-tile sketch rule, multi_level_tiling_blocked: a stage with five output axes
// [n, channel blocks, rows, columns, channels of a block] whose block is whole vectors and every
// read dense or invariant along it (conv2d_nchwc's output: docs/operators.md, "Blocked
// activations") is scheduled as the operator library's CPU default for it, with open lengths:
//   output q: [outer loops fused (parallel), (rows,) column tiles, m blocks, ut columns, block]
//   accumulator p inside it, [..., reductions, ut, m, vectors (unrolled), lanes (vectorised)]
// one sketch for each of the default's three orders (op/BlockedTileLoops.h: rows inside the
// groups of blocks, rows outside them, the input blocks outside the rows), which the default
// chooses from the cache sizes and the tuner measures. m (up to 4 blocks) and ut (columns) are
// tile groups; annotation (AnnotateBlocked.cpp) rejects tiles whose accumulators overflow the
// vector registers. The zero padding of the input stays a Plain stage: annotation puts it at the
// root, inline or inside the tile, as any stage's. docs/auto_schedule.md.
#include "SketchUtil.h"
#include "op/BlockedTileLoops.h"
#include "op/ReadAccess.h"
#include "tessel/auto_schedule/space/Sketch.h"

namespace tessel::internal {

namespace {

using op::internal::BlockedOrder;

// Output blocks a tile holds at most (the default's are 1 or 2; 4 blocks of 7 columns fill
// AVX-512's registers as 2 of 14 do), and columns at most (28 accumulators and a weight vector
// and a broadcast: AVX-512's 32 registers; annotation rejects what does not fit).
constexpr int64_t kMaxTileBlocks = 4;
constexpr int64_t kMaxTileColumns = 28;

int64_t const_extent(const IterVar& v) {
    return as_const_int(v.dom().extent).value_or(0);
}

// The vector lanes of the stage's blocked output on the task's CPU, or 0 when the stage is no
// blocked tile: five output axes whose last is whole vectors and read densely, a reduction, data
// reuse, an untouched root nest.
int64_t blocked_lanes(const SketchContext& ctx, const Sketch& sk, int st) {
    const Schedule& s = sk.schedule;
    const Stage& stage = s.stage(st);
    const int i = ctx.dag_index(s, st);
    if (ctx.gpu() || sk.stages[st].kind != SketchStageKind::Plain || i < 0 ||
        stage.leaf != stage.root || stage.attach != AttachKind::Root ||
        !ctx.dag.needs_multi_level_tiling(i))
        return 0;
    const ComputeOpNode* c = as_compute(stage.op);
    if (!c || c->axis.size() != 5 || c->reduce_axis.empty() || c->body.size() != 1) return 0;
    const int64_t lanes = ctx.task.target().vector_lanes(c->body[0].type());
    const int64_t block = const_extent(c->axis[4]);
    for (const IterVar& v : c->axis)
        if (const_extent(v) <= 0) return 0;
    if (lanes < 2 || block % lanes != 0 || !op::internal::dense_along(c, c->axis[4].var()))
        return 0;
    return lanes;
}

RuleCondition blocked_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    if (blocked_lanes(ctx, sk, st) == 0) return RuleCondition::Skip;
    const bool output = sk.schedule.stage(st).is_output;
    return output || untouched_epilogue(ctx, sk, st) >= 0 ? RuleCondition::ApplyAndSkipRest
                                                          : RuleCondition::Skip;
}

const char* order_name(BlockedOrder order) {
    switch (order) {
        case BlockedOrder::RowsInside: return "rows_inside";
        case BlockedOrder::RowsOutside: return "rows_outside";
        case BlockedOrder::InputBlocksOutside: return "input_blocks_outside";
    }
    return "";
}

std::vector<std::pair<Sketch, int>> blocked_apply(const SketchContext& ctx, const Sketch& in,
                                                  int st) {
    const int64_t lanes = blocked_lanes(ctx, in, st);
    std::vector<std::pair<Sketch, int>> out;
    for (BlockedOrder order :
         {BlockedOrder::RowsInside, BlockedOrder::RowsOutside, BlockedOrder::InputBlocksOutside}) {
        Sketch sk = in;
        const int p = st, q = tile_output_stage(ctx, sk, st);
        TileGroup blocks = split_levels(sk, q, 1, 2, kMaxTileBlocks);    // [n, ko, km, oh, ow, ki]
        TileGroup columns = split_levels(sk, q, 4, 2, kMaxTileColumns);  // [.., owo, owi, ki]
        op::internal::order_blocked_tile(sk.schedule, p, q, order, columns.steps[0], lanes);
        sk.schedule.parallel(q, 0);
        sk.tiles.push_back(blocks);
        sk.tiles.push_back(columns);
        sk.stages[p].kind = SketchStageKind::Blocked;
        sk.stages[q].kind = SketchStageKind::BlockedOutput;
        sk.trace.push_back(sk.schedule.stage(p).name() + ": multi_level_tiling_blocked(" +
                           order_name(order) + ")");
        out.emplace_back(std::move(sk), p - 1);
    }
    return out;
}

}  // namespace

SketchRule blocked_rule() {
    return {"multi_level_tiling_blocked", blocked_condition, blocked_apply};
}

}  // namespace tessel::internal
