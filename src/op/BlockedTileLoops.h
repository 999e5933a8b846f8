// The loops of a blocked register tile (conv2d_nchwc's output on CPUs; docs/operators.md,
// "Blocked activations"): the CPU default (DefaultSchedule.cpp) chooses the tile's lengths and
// its order from the machine, the tuner's blocked sketch (auto_schedule/space/SketchBlocked.cpp)
// leaves the lengths open and tries each order.
#pragma once

#include <cstdint>

#include "tessel/schedule/Schedule.h"

namespace tessel::op::internal {

/// Where a blocked tile's output rows and its first reduction (the input blocks) go.
enum class BlockedOrder : uint8_t {
    /// [n, blocks / m, rows, ...]: each group of m output blocks reads its weight once, its rows
    /// inside it (the input read again by every group).
    RowsInside,
    /// [n, rows, blocks / m, ...]: each row reads its input once, the whole weight once a row
    /// (the input larger than the weight).
    RowsOutside,
    /// RowsInside with the input blocks outside the rows: a block's weights stay in L1 for every
    /// row of the group, each row's accumulators added to the output between input blocks (a
    /// row of few columns).
    InputBlocksOutside,
};

/// Orders the loops of a blocked tile whose consumer `q` is split as [n, ko, km, oh, owo, owi,
/// ki] (m = km output blocks by owi columns, owi made by split step `columns_step`, ki the
/// block's channels, whole vectors of `lanes`) and computes its producer `p` (the reduction) in
/// it:
///   q: [outer loops fused, (oh,) owo, km, owi, ki (vectorised)], the fused loop first (the
///      caller parallelises it): n, ko and oh (RowsInside, RowsOutside: oh before ko), or n and
///      ko (InputBlocksOutside)
///   p at q's owo loop: [n, oh, reductions in the operation's order, owi, km, vectors, lanes],
///      or at q's fused loop (InputBlocksOutside; its columns split as q's by follow_split):
///      [n, first reduction, oh, owo, the other reductions, km, owi, vectors, lanes]
/// with the register tile's loops unrolled and the lanes vectorised. `p` must come before `q`.
void order_blocked_tile(Schedule& s, int p, int q, BlockedOrder order, int columns_step,
                        int64_t lanes);

}  // namespace tessel::op::internal
