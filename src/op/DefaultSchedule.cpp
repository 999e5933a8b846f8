// Default schedules (op/DefaultSchedule.h). One function a family, each a few primitives; the
// factors are divisors of the extents, so that no loop needs a tail guard inside a vector or a
// register tile.
#include "tessel/op/DefaultSchedule.h"

#include "tessel/auto_schedule/ApplyHistoryBest.h"

#include <algorithm>
#include <map>

#include "tessel/auto_schedule/DAGAnalysis.h"

namespace tessel::op {

namespace {

// The largest divisor of `extent` that is at most `cap` (at least 1).
int64_t divisor_at_most(int64_t extent, int64_t cap) {
    for (int64_t f = std::min(extent, cap); f > 1; --f)
        if (extent % f == 0) return f;
    return 1;
}

// The stage computing operation `op` now (stages shift when caches are inserted).
int stage_of_op(const Schedule& s, const Operation& op) {
    return s.stage_of(op_output(op, 0));
}

int num_spatial(const Stage& st) {
    int n = 0;
    for (int id : st.leaf) n += st.iters[id].kind == IterKind::Spatial ? 1 : 0;
    return n;
}

// Fuses leaves [0, n) of a stage into one (nothing for n <= 1); returns the number of leaves
// that replaced them (0 or 1).
int fuse_outer(Schedule& s, int stage, int n) {
    if (n <= 1) return n;
    std::vector<int> leaves(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) leaves[static_cast<size_t>(i)] = i;
    s.fuse(stage, leaves);
    return 1;
}

// The constant extent of leaf `pos` of a stage, or -1.
int64_t leaf_extent(const Schedule& s, int stage, int pos) {
    const Stage& st = s.stage(stage);
    return st.iters[st.leaf[static_cast<size_t>(pos)]].const_extent().value_or(-1);
}

// Whether a stage does enough work (points of its loop nest) to pay for starting threads: a
// parallel loop costs tens of microseconds, more than a small norm or softmax takes serially.
bool worth_parallel(const Schedule& s, int stage) {
    int64_t points = 1;
    for (size_t i = 0; i < s.stage(stage).leaf.size(); ++i)
        points *= std::max<int64_t>(leaf_extent(s, stage, static_cast<int>(i)), 1);
    return points >= (int64_t(1) << 17);
}

Type dtype_of(const Stage& st) {
    return op_output(st.op, 0).dtype();
}

// GPU: the stage's spatial leaves fused, split by the block size, bound to blocks and threads;
// returns the position of the thread loop (-1 when there is nothing to bind).
int bind_spatial(Schedule& s, int stage, const Target& target) {
    int spatial = num_spatial(s.stage(stage));
    if (spatial == 0) return -1;
    fuse_outer(s, stage, spatial);
    int64_t total = leaf_extent(s, stage, 0);
    if (total < 1) return -1;
    int64_t threads = std::min<int64_t>(total, std::min(256, target.max_threads_per_block()));
    auto [outer, inner] = s.split(stage, 0, threads);
    s.bind(stage, outer, IterAnnotation::BlockX);
    s.bind(stage, inner, IterAnnotation::ThreadX);
    return inner;
}

// CPU: every spatial loop fused, split by the vector width, the inner part vectorised and the
// outer part run in parallel.
void schedule_injective_cpu(Schedule& s, int stage, const Target& target) {
    int spatial = num_spatial(s.stage(stage));
    if (spatial == 0) return;
    fuse_outer(s, stage, spatial);
    int64_t total = leaf_extent(s, stage, 0);
    if (total < 1) return;
    int64_t lanes = divisor_at_most(total, target.vector_lanes(dtype_of(s.stage(stage))));
    if (lanes > 1) {
        auto [outer, inner] = s.split(stage, 0, lanes);
        s.vectorize(stage, inner);
        if (total / lanes > 1 && worth_parallel(s, stage)) s.parallel(stage, outer);
    } else if (total > 1 && worth_parallel(s, stage)) {
        s.parallel(stage, 0);
    }
}

// CPU, a reduction that is not tiled (pooling, sums, the rows of a norm): the reduction loops
// move inside the outer spatial loops and outside the innermost one, which is vectorised when it
// is long enough; the outer spatial loops are fused and run in parallel.
void schedule_reduction_cpu(Schedule& s, int stage, const Target& target) {
    const Stage& st = s.stage(stage);
    const int spatial = num_spatial(st), total = static_cast<int>(st.leaf.size());
    if (spatial == 0) return;
    int64_t inner = leaf_extent(s, stage, spatial - 1);
    int64_t lanes = target.vector_lanes(dtype_of(st));
    bool vector = op_num_outputs(st.op) == 1 && inner >= 4 && lanes > 1 && total > spatial;
    if (vector) {
        std::vector<int> order;
        for (int i = 0; i < spatial - 1; ++i) order.push_back(i);
        for (int i = spatial; i < total; ++i) order.push_back(i);
        order.push_back(spatial - 1);
        s.reorder(stage, order);
        auto [o, in] = s.split(stage, total - 1, divisor_at_most(inner, lanes));
        s.vectorize(stage, in);
        (void)o;
    }
    int outer = fuse_outer(s, stage, vector ? spatial - 1 : spatial);
    if (outer == 1 && leaf_extent(s, stage, 0) > 1 && worth_parallel(s, stage))
        s.parallel(stage, 0);
}

// GPU, a reduction that is not tiled: one thread per output point, the reduction serial.
void schedule_reduction_gpu(Schedule& s, int stage, const Target& target) {
    bind_spatial(s, stage, target);
}

// Splits the last two spatial axes of a stage into a register tile (rows of at most 8, columns
// of the vector width) and moves the tile inside: [outer..., io, jo, (reductions...), ii, ji].
// Returns the number of leaves before the tile's rows (the outer loops).
int tile_last_two(Schedule& s, int stage, int64_t lanes) {
    const int d = num_spatial(s.stage(stage));
    const int total = static_cast<int>(s.stage(stage).leaf.size());
    s.split(stage, d - 1, divisor_at_most(leaf_extent(s, stage, d - 1), lanes));
    if (d == 1) {  // [jo, ji, r...] → [jo, r..., ji]
        std::vector<int> order = {0};
        for (int r = 2; r <= total; ++r) order.push_back(r);
        order.push_back(1);
        s.reorder(stage, order);
        return 1;
    }
    s.split(stage, d - 2, divisor_at_most(leaf_extent(s, stage, d - 2), 8));
    // [0..d-3, io, ii, jo, ji, r...] → [0..d-3, io, jo, r..., ii, ji]
    std::vector<int> order;
    for (int i = 0; i < d - 2; ++i) order.push_back(i);
    order.push_back(d - 2);
    order.push_back(d);
    for (int r = d + 2; r < total + 2; ++r) order.push_back(r);
    order.push_back(d - 1);
    order.push_back(d + 1);
    s.reorder(stage, order);
    return d;
}

// CPU: a data-reusing stage `p` (matmul, conv) computed in register tiles inside its element-wise
// consumer `q` (its epilogue, or the copy out of its local cache): q is tiled the same way, its
// loops outside the tile fused and parallel, and p computed at that loop with its reductions
// outside the tile, the tile's columns vectorised and its rows unrolled.
void schedule_tiled_cpu(Schedule& s, int p, int q, bool q_tiled, const Target& target) {
    const int64_t lanes = target.vector_lanes(dtype_of(s.stage(p)));
    if (!q_tiled) {
        int outer = tile_last_two(s, q, lanes);
        const int tile = static_cast<int>(s.stage(q).leaf.size());
        s.vectorize(q, tile - 1);
        fuse_outer(s, q, outer);
        if (leaf_extent(s, q, 0) > 1) s.parallel(q, 0);
    }
    int outer = tile_last_two(s, p, lanes);
    const int leaves = static_cast<int>(s.stage(p).leaf.size());
    s.vectorize(p, leaves - 1);
    if (outer > 1 && leaf_extent(s, p, leaves - 2) > 1) s.unroll(p, leaves - 2);
    s.compute_at(p, q, 0);
}

// GPU: one thread per point of the consumer `q`; the producer `p` in its registers.
void schedule_tiled_gpu(Schedule& s, int p, int q, bool q_tiled, const Target& target) {
    int thread = q_tiled ? 1 : bind_spatial(s, q, target);
    if (thread < 0) return;
    if (s.stage(p).scope != StorageScope::Local) s.set_scope(p, StorageScope::Local);
    s.compute_at(p, q, thread);
}

// The stages to inline: injective non-outputs, except expensive ones (exp, branches) read by
// several stages, whose work inlining would repeat.
std::vector<bool> choose_inlined(const DAGAnalysis& a) {
    std::vector<bool> inlined(static_cast<size_t>(a.num_ops()), false);
    for (int i = 0; i < a.num_ops(); ++i)
        inlined[static_cast<size_t>(i)] =
            a.is_strictly_inlinable(i) || (a.is_inlinable(i) && a.consumers(i).size() == 1);
    return inlined;
}

bool constant_extents(const DAGAnalysis& a, int op) {
    for (int64_t e : a.spatial_extents(op))
        if (e < 1) return false;
    for (int64_t e : a.reduction_extents(op))
        if (e < 1) return false;
    return true;
}

// The (producer, consumer) operations to tile, inserting a local cache for outputs (the cache
// is then the producer and the output the consumer).
std::vector<std::pair<Operation, Operation>> choose_tiles(Schedule& s, const DAGAnalysis& a,
                                                          const std::vector<bool>& inlined) {
    std::vector<std::pair<Operation, Operation>> tiles;
    for (int i = 0; i < a.num_ops(); ++i) {
        const Operation& op = a.ops()[static_cast<size_t>(i)];
        if (!a.has_reduction(i) || !a.needs_multi_level_tiling(i) || op_num_outputs(op) != 1 ||
            !constant_extents(a, i))
            continue;
        if (a.is_output(i)) {
            int cache = s.cache_write(stage_of_op(s, op), "local");
            tiles.emplace_back(s.stage(cache).op, op);
            continue;
        }
        int consumer = a.elementwise_consumer(i, inlined);
        if (consumer >= 0 && !a.has_reduction(consumer))
            tiles.emplace_back(op, a.ops()[static_cast<size_t>(consumer)]);
    }
    return tiles;
}

}  // namespace

Schedule default_schedule(const std::vector<Tensor>& outputs, const Target& target) {
    if (ApplyHistoryBest* best = current_apply_history_best())
        return best->choose(outputs, target,
                            [&] { return default_schedule_rules(outputs, target); });
    return default_schedule_rules(outputs, target);
}

Schedule default_schedule_rules(const std::vector<Tensor>& outputs, const Target& target) {
    Schedule s = create_schedule(outputs);
    DAGAnalysis a(outputs);
    std::vector<bool> inlined = choose_inlined(a);
    std::vector<std::pair<Operation, Operation>> tiles = choose_tiles(s, a, inlined);
    for (int i = 0; i < a.num_ops(); ++i)
        if (inlined[static_cast<size_t>(i)]) s.compute_inline(stage_of_op(s, a.ops()[i]));
    std::map<const OperationNode*, bool> scheduled;
    for (const auto& [p, q] : tiles) {
        bool q_tiled = scheduled.count(q.get()) > 0;
        int ps = stage_of_op(s, p), qs = stage_of_op(s, q);
        if (target.is_gpu())
            schedule_tiled_gpu(s, ps, qs, q_tiled, target);
        else
            schedule_tiled_cpu(s, ps, qs, q_tiled, target);
        scheduled[p.get()] = scheduled[q.get()] = true;
    }
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        if (as_placeholder(st.op) || st.attach != AttachKind::Root ||
            scheduled.count(st.op.get()) || scheduled.count(st.dag_op.get()))
            continue;
        const int stage = static_cast<int>(i);
        bool reduction = !as_compute(st.op)->reduce_axis.empty();
        if (target.is_gpu())
            schedule_reduction_gpu(s, stage, target);
        else if (reduction)
            schedule_reduction_cpu(s, stage, target);
        else
            schedule_injective_cpu(s, stage, target);
    }
    return s;
}

}  // namespace tessel::op
