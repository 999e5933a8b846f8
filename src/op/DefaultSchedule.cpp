// Default schedules (op/DefaultSchedule.h). One function a family, each a few primitives; the
// factors are divisors of the extents, so that no loop needs a tail guard inside a vector or a
// register tile.
#include "tessel/op/DefaultSchedule.h"

#include <algorithm>
#include <map>
#include <set>

#include "op/BlockedTileLoops.h"
#include "op/DefaultScheduleGpu.h"
#include "op/OpUtil.h"
#include "op/ReadAccess.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/schedule/TensorIntrin.h"
#include "tessel/te/DAGAnalysis.h"

namespace tessel::op {

using internal::BlockedOrder;
using internal::ceil_div;
using internal::dense_along;
using internal::divisor_at_most;
using internal::implicit_gemm_layout;
using internal::ImplicitGemmLayout;
using internal::plan_vector_axis;
using internal::reads_transposed;
using internal::VectorAxisPlan;

namespace {

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

// A maths function computed in software (a polynomial), tens of instructions a point.
bool transcendental(Intrinsic op) {
    switch (op) {
        case Intrinsic::exp:
        case Intrinsic::exp2:
        case Intrinsic::log:
        case Intrinsic::log2:
        case Intrinsic::tanh:
        case Intrinsic::sigmoid:
        case Intrinsic::erf:
        case Intrinsic::sin:
        case Intrinsic::cos:
        case Intrinsic::pow: return true;
        default: return false;
    }
}

// The work of a stage's loop nest: its points (leaf extents) times a cost per point, 1 plus 8 for
// each call of a maths function computed in software (exp, erf, tanh, pow, ...) in its body.
double stage_work(const Schedule& s, int stage) {
    double points = 1;
    for (size_t i = 0; i < s.stage(stage).leaf.size(); ++i)
        points *= double(std::max<int64_t>(leaf_extent(s, stage, static_cast<int>(i)), 1));
    double cost = 1;
    if (const ComputeOpNode* c = as_compute(s.stage(stage).op))
        for (const Expr& b : c->body)
            post_order_visit(b, [&](const IRNode* n) {
                if (n->node_type == IRNodeType::Call &&
                    transcendental(static_cast<const Call*>(n)->op))
                    cost += 8;
            });
    return points * cost;
}

// The work from which a stage pays for starting threads (worth_parallel): a parallel loop costs
// tens of microseconds (more when the cores are shared), more than a million-point element-wise
// stage, a norm or a softmax of a BERT layer takes on one core with vectors.
constexpr double kParallelWork = double(int64_t(1) << 21);

bool worth_parallel(const Schedule& s, int stage, double threshold = kParallelWork) {
    return stage_work(s, stage) >= threshold;
}

// Runs the outer loops [0, n) of a stage in parallel when it does enough work: the smallest prefix
// of them with at least 64 iterations, fused into one parallel loop. Nothing is fused otherwise:
// a fused loop indexes with divisions and remainders, and hides the bounds of padding from the
// loop partitioner.
void parallel_outer(Schedule& s, int stage, int n, double threshold = kParallelWork) {
    if (n < 1 || !worth_parallel(s, stage, threshold)) return;
    int prefix = 0;
    int64_t iterations = 1;
    while (prefix < n && iterations < 64)
        iterations *= std::max<int64_t>(leaf_extent(s, stage, prefix++), 1);
    if (iterations < 2) return;
    fuse_outer(s, stage, prefix);
    s.parallel(stage, 0);
}

Type dtype_of(const Stage& st) {
    return op_output(st.op, 0).dtype();
}

// The vector registers a register tile of `dtype` in vectors of `lanes` has: 32 with 512-bit
// vectors (AVX-512), else 16 (AVX2).
int64_t vector_registers(int64_t lanes, Type dtype) {
    return lanes * dtype.bits >= 512 ? 32 : 16;
}

// CPU: the innermost spatial loop split by up to two vector widths (a divisor of its extent), the
// inner part vectorised; the loops outside it run in parallel (parallel_outer). The innermost loop
// is not fused with the others before the split: a vector across rows would index with a division
// and a remainder per lane (a gather) where the split keeps it a dense access. A stage reading its
// input transposed is tiled instead (vector-width squares: each cache line read serves a whole
// tile), its tile's rows vectorised (a gather of one line each). `parallel_threshold`: the work
// from which its outer loops run in parallel (worth_parallel).
void schedule_injective_cpu(Schedule& s, int stage, const Target& target,
                            double parallel_threshold = kParallelWork) {
    const int spatial = num_spatial(s.stage(stage));
    if (spatial == 0) return;
    const int64_t inner = leaf_extent(s, stage, spatial - 1);
    if (inner < 1) return;
    const int64_t lanes = target.vector_lanes(dtype_of(s.stage(stage)));
    if (reads_transposed(as_compute(s.stage(stage).op)) && leaf_extent(s, stage, spatial - 2) > 1) {
        s.tile(stage, spatial - 2, spatial - 1,
               divisor_at_most(leaf_extent(s, stage, spatial - 2), lanes),
               divisor_at_most(inner, lanes));  // [outer..., io, jo, ii, ji]
        s.vectorize(stage, spatial + 1);
        parallel_outer(s, stage, spatial, parallel_threshold);
        return;
    }
    // Up to two vectors a step (LLVM splits them), as LLVM's own vectoriser interleaves, within
    // the schedule's lane cap (int8 on AVX-512: 64 lanes a vector).
    const int64_t width =
        divisor_at_most(inner, std::min<int64_t>(2 * lanes, s.limits().max_vector_lanes));
    if (width > 1) s.vectorize(stage, s.split(stage, spatial - 1, width).second);
    // [outer axes..., innermost / width]: the parallel loop.
    parallel_outer(s, stage, spatial, parallel_threshold);
}

// CPU, a reduction over its innermost loop that no vector along an output axis can take (a sum
// over rows, a norm's mean and variance, softmax's max and sum, argmax's pairs, a matrix-vector
// product): the innermost reduction loop is split by `f` (the smallest divisor of its extent
// from one to four vector widths) and the inner part factored out (rfactor) into a stage of f
// partial results per output point, reducing the outer part with the f lanes vectorised, in
// registers (a local cache of that stage computed at its copy-out's loop over four outputs of
// the last axis: four independent vector chains); the original stage then reduces the f
// partials. Returns whether it applied (two stages inserted at `stage`: the registers, the
// partials).
bool rfactor_innermost_cpu(Schedule& s, int stage, int64_t lanes) {
    const Stage& st = s.stage(stage);
    const ComputeOpNode* c = as_compute(st.op);
    const int spatial = num_spatial(st), total = static_cast<int>(st.leaf.size());
    if (total == spatial || lanes < 2 || !dense_along(c, c->reduce_axis.back().var())) return false;
    // Within the schedule's lane cap (16-bit and 8-bit values have 32 and 64 lanes a vector).
    const int64_t extent = leaf_extent(s, stage, total - 1);
    const int64_t low = std::min<int64_t>(lanes, s.limits().max_vector_lanes);
    const int64_t high = std::min<int64_t>(4 * lanes, s.limits().max_vector_lanes);
    int64_t f = low;
    while (f <= high && extent % f != 0) ++f;
    if (f > high) return false;
    s.split(stage, total - 1, f);
    const int rf = s.rfactor(stage, total, spatial);  // [spatial..., f, reductions...]
    const bool parallel = worth_parallel(s, rf, double(int64_t(1) << 20));
    const int local = s.cache_write(rf, "local"), copy = local + 1;
    const int64_t rows = divisor_at_most(leaf_extent(s, copy, spatial - 1), 4);
    s.split(copy, spatial - 1, rows);  // [spatial..., rows.outer, rows, f]
    s.vectorize(copy, spatial + 1);
    if (parallel) parallel_outer(s, copy, spatial, 0);
    s.compute_at(local, copy, static_cast<int>(s.stage(copy).leaf.size()) - 3);
    std::vector<int> order;
    for (int i = 0; i < spatial - 1; ++i) order.push_back(i);
    for (int i = spatial + 1; i <= total; ++i) order.push_back(i);
    order.push_back(spatial - 1);
    order.push_back(spatial);
    s.reorder(local, order);
    s.unroll(local, total - 1);
    s.vectorize(local, total);
    parallel_outer(s, copy + 1, spatial);
    return true;
}

// CPU, a reduction that is not tiled (pooling, sums, the rows of a norm): the reduction loops
// move inside the outer spatial loops and outside the innermost one, which is vectorised when it
// is long enough and every read is dense or invariant along it (a sum over columns); else the
// innermost reduction loop is vectorised through rfactor when the reads are dense along it (a sum
// over rows: rfactor_innermost_cpu); else (a pooling window with a stride) the loop nest stays
// scalar. The outer spatial loops run in parallel (parallel_outer). Returns the number of stages
// inserted (0 or 1).
int schedule_reduction_cpu(Schedule& s, int stage, const Target& target) {
    const Stage& st = s.stage(stage);
    const int spatial = num_spatial(st), total = static_cast<int>(st.leaf.size());
    if (spatial == 0) return 0;
    int64_t inner = leaf_extent(s, stage, spatial - 1);
    int64_t lanes = target.vector_lanes(dtype_of(st));
    const ComputeOpNode* c = as_compute(st.op);
    bool vector = inner >= 4 && lanes > 1 && total > spatial &&
                  dense_along(c, c->axis[static_cast<size_t>(spatial - 1)].var());
    if (!vector && rfactor_innermost_cpu(s, stage, lanes)) return 2;
    if (vector) {
        std::vector<int> order;
        for (int i = 0; i < spatial - 1; ++i) order.push_back(i);
        for (int i = spatial; i < total; ++i) order.push_back(i);
        order.push_back(spatial - 1);
        s.reorder(stage, order);
        s.vectorize(stage, s.split(stage, total - 1, divisor_at_most(inner, lanes)).second);
    }
    parallel_outer(s, stage, vector ? spatial - 1 : spatial);
    return 0;
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

// Storage order moving dimension `dim` of `ndim` last.
std::vector<int> order_with_last(int ndim, int dim) {
    std::vector<int> order;
    for (int i = 0; i < ndim; ++i)
        if (i != dim) order.push_back(i);
    order.push_back(dim);
    return order;
}

// The register tile of a vector-axis tile (schedule_vector_axis_cpu): kb = m vectors along the
// vector axis v, ut points along the innermost axis u; at most 16 vector accumulators.
struct VectorAxisTile {
    int d, v;  // the number of output axes, the vector axis
    int64_t lanes, m, kb, ut;
    bool rows_outside = false;  // the axes between v and u go outside v / kb (rows_outside_blocks)
};

// The consumer q: [outer axes and v / kb fused (parallel), axes between v and u, u / ut, v % kb,
// u % ut], the last vectorised (it transposes the tile out of the local buffer).
void vector_axis_consumer(Schedule& s, int q, const VectorAxisTile& t) {
    const int d = t.d, v = t.v;
    s.split(q, v, t.kb);
    s.split(q, d, t.ut);  // u moved to d by the first split
    std::vector<int> order, rows;
    for (int i = 0; i < v; ++i) order.push_back(i);
    for (int i = v + 2; i < d; ++i) rows.push_back(i);
    if (t.rows_outside) order.insert(order.end(), rows.begin(), rows.end());
    order.push_back(v);
    if (!t.rows_outside) order.insert(order.end(), rows.begin(), rows.end());
    order.push_back(d);
    order.push_back(v + 1);
    order.push_back(d + 1);
    s.reorder(q, order);
    fuse_outer(s, q, v + (t.rows_outside ? static_cast<int>(rows.size()) : 1));
    s.vectorize(q, static_cast<int>(s.stage(q).leaf.size()) - 1);
    if (leaf_extent(s, q, 0) > 1) s.parallel(q, 0);
}

// The producer p: [others, v / kb, u / ut, reductions, u % ut (unrolled), m (unrolled), lanes
// (vectorised)], its buffer stored with v innermost, computed at q's u / ut loop.
void vector_axis_producer(Schedule& s, int p, int q, const VectorAxisTile& t) {
    const int d = t.d, v = t.v, total = static_cast<int>(s.stage(p).leaf.size());
    s.split(p, v, t.kb);         // [.., vo, vkb, ..]
    s.split(p, v + 1, t.lanes);  // [.., vo, vm, vl, ..]
    s.split(p, d + 1, t.ut);     // u (now at d + 1) → [uo, ui]
    std::vector<int> order;
    for (int i = 0; i < v; ++i) order.push_back(i);
    for (int i = v + 3; i < d + 1; ++i) order.push_back(i);
    order.push_back(v);
    order.push_back(d + 1);
    for (int r = d + 3; r < total + 3; ++r) order.push_back(r);
    order.push_back(d + 2);
    order.push_back(v + 1);
    order.push_back(v + 2);
    s.reorder(p, order);
    const int leaves = static_cast<int>(s.stage(p).leaf.size());
    s.vectorize(p, leaves - 1);
    if (t.m > 1) s.unroll(p, leaves - 2);
    if (t.ut > 1) s.unroll(p, leaves - 3);
    s.storage_reorder(p, order_with_last(d, v));
    s.compute_at(p, q, d - v - 1);
}

// A constant placeholder: a weight, the same on every call.
bool is_constant(const Tensor& tensor) {
    const PlaceholderOpNode* p = as_placeholder(tensor.op());
    return p && p->constant;
}

// A stage computed element-wise from one constant placeholder alone (a transformed weight).
bool transform_of_constant(const Tensor& tensor) {
    const ComputeOpNode* c = as_compute(tensor.op());
    if (!c || !c->reduce_axis.empty()) return false;
    const std::vector<Tensor> inputs = op_inputs(tensor.op());
    return inputs.size() == 1 && is_constant(inputs[0]);
}

// A pack of `tensor` computed at (q, loop) when the tensor changes from call to call; a constant
// one (a weight) is packed once, outside the kernel, in the same layout (layout rewrite).
void place_pack(Schedule& s, int pack, const Tensor& tensor, int q, int loop) {
    if (is_constant(tensor))
        s.pre_transform(pack);
    else
        s.compute_at(pack, q, loop);
}

// Placeholder `tensor`, read by `p_op`'s stage with the vector axis as its index `dim`, copied at
// `q_op`'s outermost loop with `dim` innermost: [dim / kb, others..., dim % kb (vectorised)]. A
// constant one is packed once, its storage blocked alike over the whole tensor.
void vector_axis_pack(Schedule& s, const Tensor& tensor, int dim, const Operation& p_op,
                      const Operation& q_op, int64_t kb) {
    const int ndim = static_cast<int>(tensor.ndim());
    int pack = s.cache_read(s.stage_of(tensor), "global", {s.stage_of(p_op)});
    std::vector<int> order = {dim};
    for (int i = 0; i <= ndim; ++i)
        if (i != dim && i != dim + 1) order.push_back(i);
    order.push_back(dim + 1);
    if (is_constant(tensor)) {
        // Packed once for all of q's blocks: [dim / kb, others..., dim % kb], so that a block's
        // part stays contiguous, as the per-block copy is.
        s.storage_split(pack, dim, kb);
        s.storage_reorder(pack, order);
    } else {
        s.storage_reorder(pack, order_with_last(ndim, dim));
    }
    s.split(pack, dim, kb);
    s.reorder(pack, order);
    s.vectorize(pack, ndim);
    place_pack(s, pack, tensor, s.stage_of(q_op), 0);
}

// The bytes a tile's operation `c` reads, split into its input (the tensors `is_input` says) and
// its weight (the others): the rows-outside rules weigh them against L2.
template <class IsInput>
std::pair<int64_t, int64_t> input_and_weight_bytes(const ComputeOpNode* c,
                                                   const IsInput& is_input) {
    int64_t input = 0, weight = 0;
    for (const TensorRead* r : internal::tensor_reads(c)) {
        int64_t bytes = r->tensor.dtype().bytes();
        for (const Expr& e : r->tensor.shape()) bytes *= as_const_int(e).value_or(1);
        (is_input(r) ? input : weight) += bytes;
    }
    return {input, weight};
}

// Whether a vector-axis tile's rows (the output axes between the vector axis and the innermost:
// an NCHW convolution's output rows) go outside its blocks along the vector axis (its output
// channels). Blocks outside, each block reads the whole input: from memory again for every
// block once the input outgrows L2. Rows outside, a row's input is read once from memory and
// again from cache by each block, and the whole (packed) weight is read once a row. Chosen when
// the input is larger than half of L2 and the weight fits in half of it (a weight of all of L2
// was slower: ResNet-50's 1 x 1 stride-2 layer of 512 -> 1024 channels, 0.62 -> 0.53 x oneDNN).
bool rows_outside_blocks(const Schedule& s, int p, const VectorAxisPlan& plan,
                         const VectorAxisTile& t, const Target& target) {
    if (t.v + 2 >= t.d || leaf_extent(s, p, t.v) <= t.kb) return false;
    const auto [input, weight] =
        input_and_weight_bytes(as_compute(s.stage(p).dag_op), [&](const TensorRead* r) {
            return std::none_of(plan.packs.begin(), plan.packs.end(),
                                [&](const auto& pack) { return pack.first.same_as(r->tensor); });
        });
    const int64_t l2 = target.l2_cache_bytes();
    return input > l2 / 2 && weight <= l2 / 2;
}

// CPU: a tile vectorised along spatial axis plan.axis (v; u is the innermost): the consumer `q`
// tiled and parallel, the producer `p` in register tiles of ut x kb / lanes vectors at q's u / ut
// loop, the packed placeholders copied at q's outermost loop (one pack of the whole tensor a
// call).
void schedule_vector_axis_cpu(Schedule& s, int p, int q, const VectorAxisPlan& plan,
                              const Target& target) {
    VectorAxisTile t;
    t.d = num_spatial(s.stage(q));
    t.v = plan.axis;
    t.lanes = target.vector_lanes(dtype_of(s.stage(p)));
    t.m = leaf_extent(s, q, t.v) % (2 * t.lanes) == 0 ? 2 : 1;
    t.kb = t.m * t.lanes;
    t.ut = divisor_at_most(leaf_extent(s, q, t.d - 1), 16 / t.m);
    t.rows_outside = rows_outside_blocks(s, p, plan, t, target);
    vector_axis_consumer(s, q, t);
    vector_axis_producer(s, p, q, t);
    // Stage indices shift as packs are inserted; the DAG operations find the stages again.
    const Operation p_op = s.stage(p).dag_op, q_op = s.stage(q).dag_op;
    for (const auto& [tensor, dim] : plan.packs) vector_axis_pack(s, tensor, dim, p_op, q_op, t.kb);
}

// --- Blocked activations on CPUs (conv2d_nchwc) ---------------------------------------------

// The register tile of a stage with five output axes [n, channel blocks, rows, columns, channels
// of a block] whose block is whole vectors, every read dense or invariant along it (conv2d_nchwc's
// output): m blocks x ut columns of accumulators, each block `vectors` vectors, as many as the
// vector registers hold beside the m blocks' weight vectors and a broadcast of the input (28
// with AVX-512's 32 registers: 2 blocks x 14 columns; 12 with AVX2's 16).
struct BlockedTile {
    int64_t lanes = 0, vectors = 0, m = 1, ut = 1;
    /// RowsOutside by blocked_rows_outside, InputBlocksOutside by input_blocks_outside.
    BlockedOrder order = BlockedOrder::RowsInside;
};

// Whether a blocked tile's first reduction (conv2d_nchwc's input blocks) goes outside its rows,
// each row's accumulators then added to the pair of blocks' output between input blocks: when a
// row is at most half the tile's budget of columns (7 of 14 on AVX-512) and the window is larger
// than 1 x 1. Such a tile multiplies each weight vector by only ut inputs, so with the rows
// outside it reads the pair's whole weight (2 x 9 x C x 16 floats) from L2 once a row, and the
// loads, not the multiply-adds, set its pace; with the input blocks outside, a block's weights
// (18 KiB) stay in L1 for every row. ResNet-50's 512 3 x 3 layers at 7 x 7 on 2 Xeon cores: 0.67
// against 0.77 ms at stride 1, 0.72 against 0.80 at stride 2 (a 14 x 14 input); the 1 x 1 layers
// at 7 x 7 moved by -2 to +10 % within the noise and keep the rows outside. On 16 vector
// registers (AVX2: 6 columns of 2 vectors) so do rows of at most three tiles, whose tiles the
// evened-out widths leave at 4-5 columns (rows of 7 and 14): on 2 Zen 3 cores 512 3 x 3 at 7²
// 1.54-1.65 -> 1.40-1.47 ms, at stride 2 from 14² 1.67-1.79 -> 1.49-1.56, 256 at stride 2 from
// 28² 1.47-1.78 -> 1.32-1.47; 256 at 14² stride 1 alike, and rows of 28 and 56 alike or slower.
bool input_blocks_outside(const Operation& op, const BlockedTile& t, int64_t cap, int64_t row,
                          int64_t registers) {
    const bool short_row = 2 * t.ut <= cap || (registers == 16 && row <= 3 * cap);
    return t.order != BlockedOrder::RowsOutside && short_row &&
           !as_compute(op)->reduce_axis.empty() && internal::conv_window(op) > 1;
}

// A blocked conv's input (the read that uses the row axis) and weight bytes.
std::pair<int64_t, int64_t> blocked_input_and_weight_bytes(const ComputeOpNode* c) {
    return input_and_weight_bytes(c, [&](const TensorRead* r) {
        return std::any_of(r->indices.begin(), r->indices.end(),
                           [&](const Expr& e) { return uses_var(e, c->axis[2].var()); });
    });
}

// Whether a blocked tile of 16 vector registers (AVX2) under a 1 x 1 window takes the input
// blocks outside its rows, in a tile of 8 accumulators (2 blocks of 2 vectors x 2 columns, or 4
// x 1 on an odd row): when its blocks' weights over all input channels outgrow L1, as ResNet-50's
// 1 x 1 layers of 1024 and 2048 input channels (64 KiB and more a block against a Zen 3's 32).
// With the rows inside, each row streams those weights from L2 through 12 accumulators whose 6
// columns leave a guarded tail on rows of 14 and 7; with the input blocks outside, one block's
// weights (2-4 KiB) stay in L1 while the rows stream. On 2 Zen 3 cores: 2048 -> 512 at 7² 0.81-
// 0.92 against 0.62-0.67 ms, 1024 -> 2048 stride 2 at 14² 1.92-1.96 against 1.36-1.38, 1024 ->
// 256 at 14² 0.67-0.69 against 0.61-0.64; the layers of 512 input channels (32 KiB) moved within
// the noise. Not on 32 registers: the Xeon's 2 x 14 tile ran 1024 -> 256 at 14² at half the
// speed with the blocks outside.
bool pointwise_weights_outgrow_l1(const Operation& op, const BlockedTile& t, int64_t registers,
                                  int64_t channel_blocks, const Target& target) {
    if (registers != 16 || internal::conv_window(op) != 1 || target.l1d_cache_bytes() <= 0)
        return false;
    const int64_t weight = blocked_input_and_weight_bytes(as_compute(op)).second;
    return weight / channel_blocks * t.m > target.l1d_cache_bytes();
}

// Whether a blocked tile's output rows go outside its pairs of blocks (each row then reads its
// input once from memory, and the whole weight once from L2), as the vector-axis tile's
// (rows_outside_blocks): when the input is over a quarter of L2 and the weight fits in half of
// it. The input is the read that uses the row axis. On 2 Xeon cores, ResNet-50's 256 -> 512
// stride-2 1 x 1 layer at 56² took 0.57 ms so, against 0.68, 256 -> 128 0.48 against 0.57, the 3 x
// 3 layer of 64 channels at 56² (a 0.8 MiB input) 0.58 against 0.65; layers whose input fits
// a quarter of L2 were as fast or slower (256 -> 256 3 x 3 at 14²: 340 against 416 GFLOP/s).
bool blocked_rows_outside(const ComputeOpNode* c, const Target& target) {
    const auto [input, weight] = blocked_input_and_weight_bytes(c);
    const int64_t l2 = target.l2_cache_bytes();
    return input > l2 / 4 && weight <= l2 / 2;
}

// Whether a blocked tile of 16 vector registers (AVX2) under a 1 x 1 window, its weights not
// outgrowing L1 a block (pointwise_weights_outgrow_l1), takes the rows outside although the whole
// weight is over half of L2: when the input is over half of L2. The rows-inside tile (12
// accumulators, one pair of blocks) reads the whole input once a pair of output blocks, from
// memory once the input outgrows L2; with the rows outside, a row's input stays in L1 while the
// weight streams from L2 and L3. On 2 Zen 3 cores (512 KiB of L2), ResNet-50's 1 x 1 layers
// (network_cpu --default-rules --blocked, two runs each, x oneDNN): 256 -> 512 stride 2 at 56²
// 0.68, 0.68 -> 0.82, 1.01; 512 -> 256 at 28² 0.66, 0.80 -> 0.77, 0.94; 512 -> 1024 stride 2 at
// 28² 0.77, 0.84 -> 0.85, 0.91. An input within L2 (256 -> 1024 at 14², 200 KiB) gained
// nothing. The 32-register tile (AVX-512) keeps blocked_rows_outside's bound, which the Xeon's
// measurements set.
bool pointwise_rows_outside(const Operation& op, int64_t registers, const Target& target) {
    if (registers != 16 || internal::conv_window(op) != 1) return false;
    return blocked_input_and_weight_bytes(as_compute(op)).first > target.l2_cache_bytes() / 2;
}

// The blocked tile of tiled operation `i` of `a`, or nullopt when its output is no blocked one.
std::optional<BlockedTile> plan_blocked_tile(const DAGAnalysis& a, int i, const Target& target) {
    const std::vector<int64_t> ext = a.spatial_extents(i);
    const Operation& op = a.ops()[static_cast<size_t>(i)];
    const ComputeOpNode* c = as_compute(op);
    const Type dtype = op_output(op, 0).dtype();
    BlockedTile t;
    t.lanes = target.vector_lanes(dtype);
    if (ext.size() != 5 || t.lanes < 2 || ext[4] % t.lanes != 0 ||
        !dense_along(c, c->axis[4].var()))
        return std::nullopt;
    t.vectors = ext[4] / t.lanes;
    const int64_t registers = vector_registers(t.lanes, dtype);
    t.m = t.vectors == 1 && ext[1] % 2 == 0 ? 2 : 1;
    const int64_t cap = std::max<int64_t>((registers - t.m * t.vectors - 1) / (t.m * t.vectors), 1);
    t.ut = divisor_at_most(ext[3], cap);
    // A row no divisor near the budget serves takes the fewest tiles the budget allows, evened
    // out, the last one guarded: 14 columns under AVX2's 6 as 5 + 5 + 4, 7 as 4 + 3 (full tiles
    // of 6 left a tail of 2 or 1 columns, two or four times as many loads a multiply-add). On 2
    // Zen 3 cores (the 16-channel blocks of ResNet-50's layers): 3 x 3 at 14² 1.37-1.41 -> 1.21-
    // 1.25 ms, 512 at 7² 1.79-1.92 -> 1.53-1.68, 512 stride 2 at 14² 1.95-1.96 -> 1.71-1.81, 1 x 1
    // 512 -> 2048 at 7² 0.74 -> 0.64. Seven columns of two vectors (14 accumulators, the weights
    // read by the multiply-adds from L1) spilled: 2-4 x slower.
    if (2 * t.ut < cap && ext[3] > cap) {
        t.ut = ceil_div(ext[3], ceil_div(ext[3], cap));
    }
    if (blocked_rows_outside(c, target)) {
        t.order = BlockedOrder::RowsOutside;
    } else if (input_blocks_outside(op, t, cap, ext[3], registers)) {
        t.order = BlockedOrder::InputBlocksOutside;
    } else if (pointwise_weights_outgrow_l1(op, t, registers, ext[1], target)) {
        t.order = BlockedOrder::InputBlocksOutside;
        t.ut = ext[3] % 2 == 0 ? 2 : 1;
        t.m = std::max<int64_t>(registers / 2 / (t.vectors * t.ut), 1);
        while (ext[1] % t.m != 0) --t.m;
    } else if (pointwise_rows_outside(op, registers, target)) {
        t.order = BlockedOrder::RowsOutside;
    }
    return t;
}

// A blocked tile's zero padding (its injective producers) stays a stage of its own, computed
// before it, where the tile reads each of its elements at least 4 times (a 3 x 3 window at stride
// 1: 9): inlined, each read would test the bounds (64 -> 64 channels at 56 x 56: 220 against 350
// GFLOP/s on 2 Xeon cores). At stride 2 (2.25 reads) the copy cost more than the tests (0.26
// against 0.37), except under a tile whose columns do not divide the row (a guarded tail): the
// bounds' tests and the tail's together halved the speed (AVX2's 6 columns on ResNet-50's 3 x 3
// stride-2 layers at 14 and 7 output columns, 2 Zen 3 cores: 256 channels at 28² 3.36 against
// 1.73 ms, 512 at 14² 3.91 against 2.32; the 28-column layer, whose 4 columns divide it, ran
// alike either way). Returns the padding stages kept.
std::set<const OperationNode*> keep_padding_of_blocked_tiles(
    const DAGAnalysis& a, const std::vector<std::optional<BlockedTile>>& blocked,
    std::vector<bool>& inlined) {
    std::set<const OperationNode*> kept;
    for (int i = 0; i < a.num_ops(); ++i) {
        if (!blocked[static_cast<size_t>(i)]) continue;
        const std::vector<int64_t> out = a.spatial_extents(i);
        const double window = static_cast<double>(internal::conv_window(a.ops()[i]));
        for (int p : a.producers(i)) {
            const std::vector<int64_t> in = a.spatial_extents(p);
            if (in.size() != 5 || a.has_reduction(p)) continue;
            const double reads =
                window * static_cast<double>(out[2] * out[3]) / static_cast<double>(in[2] * in[3]);
            const bool guarded = out[3] % blocked[static_cast<size_t>(i)]->ut != 0;
            if (reads >= 4 || guarded) {
                inlined[static_cast<size_t>(p)] = false;
                kept.insert(a.ops()[static_cast<size_t>(p)].get());
            }
        }
    }
    return kept;
}

// The work (elements) from which a stage kept for a tile to read (the padding of a blocked tile,
// or of a tile vectorised along the output channels: an NCHW conv's) runs in parallel, below
// worth_parallel's bound for element-wise stages: the copy is a serial part of the convolution,
// the other core idle. On 2 Xeon cores (network_cpu --default-rules, medians of 4-5 runs, x
// oneDNN), blocked: ResNet-50's stem (3 x 230² padded, 159 K elements) 0.918 -> 0.964, the 3 x 3
// layer of 64 channels at 56² (215 K) 0.934-0.946 -> 0.959; NCHW: the stem 0.80 -> 0.84, 64
// channels at 56² 0.85 -> 0.90, 128 at stride 2 from 56² (430 K) 0.75 -> 0.83, 256 at stride 2
// from 28² (230 K) 0.71 -> 0.75. 128 channels at 28² (115 K) moved within the noise, and smaller
// copies are left serial.
constexpr double kPaddingParallelWork = double(int64_t(1) << 17);

// The consumer q split as [n, ko, km, oh, owo, owi, ki] (m blocks x ut columns), its loops
// ordered and its producer p computed inside by order_blocked_tile, the fused outer loop
// parallel.
void schedule_blocked_cpu(Schedule& s, int p, int q, const BlockedTile& t) {
    s.split(q, 1, t.m);  // [n, ko, km, oh, ow, ki]
    const int columns_step = static_cast<int>(s.steps().size());
    s.split(q, 4, t.ut);  // [n, ko, km, oh, owo, owi, ki]
    order_blocked_tile(s, p, q, t.order, columns_step, t.lanes);
    if (leaf_extent(s, q, 0) > 1) s.parallel(q, 0);
}

}  // namespace

namespace internal {

void order_blocked_tile(Schedule& s, int p, int q, BlockedOrder order, int columns_step,
                        int64_t lanes) {
    const bool blocks_outside = order == BlockedOrder::InputBlocksOutside;
    if (order == BlockedOrder::RowsOutside)
        s.reorder(q, {0, 3, 1, 4, 2, 5, 6});
    else
        s.reorder(q, {0, 1, 3, 4, 2, 5, 6});
    fuse_outer(s, q, blocks_outside ? 2 : 3);  // [fused, (oh,) owo, km, owi, ki]
    s.vectorize(q, static_cast<int>(s.stage(q).leaf.size()) - 1);
    s.compute_at(p, q, blocks_outside ? 0 : 1);
    const int leaves = static_cast<int>(s.stage(p).leaf.size());  // [n, m, oh, ow, ki, r...]
    std::vector<int> order_p;
    if (blocks_outside) {
        s.follow_split(p, 3, columns_step);  // [n, m, oh, owo, owi, ki, r...]
        s.split(p, 5, lanes);                // [n, m, oh, owo, owi, kv, kl, r...]
        order_p = {0, 7, 2, 3};
        for (int r = 8; r < leaves + 2; ++r) order_p.push_back(r);
        for (int k : {1, 4, 5, 6}) order_p.push_back(k);
    } else {                   // ow: the tile's columns (q's owi)
        s.split(p, 4, lanes);  // [n, m, oh, ut, kv, kl, r...]
        order_p = {0, 2};
        for (int r = 6; r < leaves + 1; ++r) order_p.push_back(r);
        for (int k : {3, 1, 4, 5}) order_p.push_back(k);
    }
    s.reorder(p, order_p);
    // The register tile: its two outer loops and its vectors unrolled, its lanes vectorised.
    const int n = static_cast<int>(s.stage(p).leaf.size());
    s.vectorize(p, n - 1);
    for (int k = n - 2; k >= n - 4; --k) s.unroll(p, k);
}

}  // namespace internal

namespace {

// --- GEMMs on CPUs: packed panels and register tiles sized from the target -------------------

// A matrix product the CPU GEMM schedule takes (matmul, batch_matmul, dense): two reads whose
// indices are each one bare axis or a constant; the "A" read uses the row axis i (the
// second-to-last output axis) and not the column axis j (the last), the "B" read uses j and not i.
// B is packed.
struct GemmPlan {
    bool ok = false;
    Tensor a;               ///< the operand read along the rows
    Tensor b;               ///< the operand packed into column panels
    int b_dim = 0;          ///< its dimension indexed by j
    bool a_k_last = false;  ///< A's last index is the reduction axis (a row of A is contiguous)
    /// B is a computed stage laid out in panels itself (Winograd's transformed filters) instead
    /// of copied into them.
    bool b_in_place = false;
};

GemmPlan plan_gemm(const ComputeOpNode* c) {
    GemmPlan plan;
    if (!c || c->axis.size() < 2 || c->reduce_axis.empty()) return plan;
    const Var& i = c->axis[c->axis.size() - 2].var();
    const Var& j = c->axis.back().var();
    std::vector<const TensorRead*> reads = internal::tensor_reads(c);
    if (reads.size() != 2) return plan;
    bool a_found = false;
    for (const TensorRead* r : reads) {
        for (const Expr& e : r->indices)  // a bare axis, or a constant (a batch of one)
            if (!e.as<Variable>() && !as_const_int(e)) return plan;
        int dim = -1;
        bool uses_i = internal::axis_use(r->indices, i, &dim) != internal::AxisUse::Invariant;
        internal::AxisUse j_use = internal::axis_use(r->indices, j, &dim);
        if (uses_i && j_use == internal::AxisUse::Invariant) {
            a_found = true;
            plan.a = r->tensor;
            plan.a_k_last = c->reduce_axis.size() == 1 &&
                            internal::axis_use(r->indices, c->reduce_axis[0].var(), &dim) ==
                                internal::AxisUse::UnitLast;
        } else if (!uses_i && j_use != internal::AxisUse::Invariant && !plan.b.defined()) {
            plan.b = r->tensor;
            plan.b_dim = j_use == internal::AxisUse::UnitLast
                             ? static_cast<int>(r->indices.size()) - 1
                             : dim;
        }
    }
    plan.ok = a_found && plan.b.defined() && plan.b.ndim() >= 2;
    return plan;
}

// The register tile and blocking of a GEMM on `target` (docs/operators.md, "Matrix products on
// CPUs"): a tile of mr rows by nr = two vectors of columns, as many rows as the vector registers
// hold beside two vectors of B and a broadcast of A (12 with 32 registers as AVX-512's, 6 with
// AVX2's 16); np panels of B a block, so that a block of packed B (K rows) takes a quarter of L2.
struct GemmTile {
    int64_t lanes, mr, nr, np;
};

GemmTile gemm_tile(int64_t m, int64_t n, int64_t k, Type dtype, const Target& target) {
    GemmTile t;
    t.lanes = target.vector_lanes(dtype);
    const int64_t registers = vector_registers(t.lanes, dtype);
    // Two vectors of columns (one when N fits in one): with one, every multiply-add would need
    // its own broadcast of A, and the loads, not the multiply-adds, would set the pace.
    const int64_t vectors = n > t.lanes ? 2 : 1;
    t.nr = vectors * t.lanes;
    t.mr = std::min(std::clamp<int64_t>((registers - vectors - 1) / vectors, 1, 12), m);
    // The fewest rows that give as few tiles: 31 rows as 11, 11 and 9, not 12, 12 and 7.
    t.mr = ceil_div(m, ceil_div(m, t.mr));
    const int64_t panel_bytes = k * t.nr * (dtype.bits / 8);
    const int64_t panels = (n + t.nr - 1) / t.nr;
    t.np = std::clamp<int64_t>(target.l2_cache_bytes() / 4 / std::max<int64_t>(panel_bytes, 1), 1,
                               std::min<int64_t>(8, panels));
    // A divisor of the whole panels, so that only a partial last panel is a block of its own.
    t.np = divisor_at_most(std::max<int64_t>(n / t.nr, 1), t.np);
    return t;
}

// Where a GEMM's cores work, and the tile that goes with it.
struct GemmParallel {
    enum Mode {
        Blocks,      ///< the column blocks, fused with the batch
        BatchAlone,  ///< the batch (a column tail would guard the blocks fused with it)
        PerBatch,    ///< each batch's column blocks (as BatchAlone, with too small a batch)
        Rows,        ///< the row tiles inside each block (the blocks serial)
    } mode = Rows;
    GemmTile tile;
};

// The cheaper of the column blocks and the row tiles in parallel, by a count of tile-panel
// products (mr x nr x K multiply-adds each) on the busiest core, plus the cost of starting a
// parallel loop (about 5 us) for each one started: the blocks start one, the rows two a block
// (the pack and the tiles). A tail (a partial block, a partial row tile) is peeled out of its
// parallel loop and runs on one core. Rows cost the row tiles of every panel, blocks the panels
// of every row tile. The blocks have fewer panels where that makes two a core;
// the row tiles take a row count within two of the largest that divides M, when one does.
GemmParallel choose_gemm_parallel(int64_t m, int64_t n, int64_t k, int batch, int64_t batches,
                                  Type dtype, const Target& target) {
    const int64_t cores = target.num_cores(), wanted = 2 * cores;
    auto busiest = [&](int64_t tasks, bool tail) {  // tasks on the busiest core
        return (tasks - (tail ? 1 : 0) + cores - 1) / cores + (tail ? 1 : 0);
    };
    const GemmTile base = gemm_tile(m, n, k, dtype, target);
    const int64_t panels = (n + base.nr - 1) / base.nr, whole = std::max<int64_t>(n / base.nr, 1);
    // A unit: one tile-panel product, in microseconds at two vector multiply-adds a cycle at
    // 2.5 GHz; a parallel loop costs about 5 us to start.
    const double unit = double(base.mr * base.nr * k) / double(base.lanes * 2 * 2500);
    const double start = 5.0 / std::max(unit, 1e-9);

    // The row tiles: a row count within two of the tile's that divides M, when one does.
    GemmParallel best;
    best.tile = base;
    for (int64_t mr = base.mr; mr >= std::max<int64_t>(base.mr - 2, 1); --mr)
        if (m % mr == 0) {
            best.tile.mr = mr;
            break;
        }
    // With a batch, the batch and the row tiles share one parallel loop (their tail a guard
    // inside it); without, the row tail is peeled onto one core.
    const int64_t row_tiles = (m + best.tile.mr - 1) / best.tile.mr;
    const int64_t row_tasks = batches * row_tiles;
    double best_cost =
        double(busiest(row_tasks, batch == 0 && m % best.tile.mr != 0)) * double(panels) +
        2 * start * double((panels + base.np - 1) / base.np);

    // The column blocks, for each number of panels a block up to the L2's (a divisor of the
    // whole panels, so that only a partial last panel is a block of its own).
    for (int64_t np = 1; np <= base.np; ++np) {
        if (whole % np != 0) continue;
        GemmParallel blocks;
        blocks.tile = base;
        blocks.tile.np = np;
        const bool column_tail = n % (base.nr * np) != 0;
        const int64_t per_batch = (panels + np - 1) / np;
        int64_t tasks = batches * per_batch, rounds_serial = 1;
        blocks.mode = GemmParallel::Blocks;
        if (batch > 0 && column_tail) {
            blocks.mode = batches >= wanted ? GemmParallel::BatchAlone : GemmParallel::PerBatch;
            tasks = blocks.mode == GemmParallel::BatchAlone ? batches : per_batch;
            rounds_serial = blocks.mode == GemmParallel::BatchAlone ? 1 : batches;
        }
        // With a short K a block is little work for its packing and its start: four blocks a
        // core at least there (2522 x 154 x 54 in five blocks ran slower on two cores than on
        // one; in its row tiles, at the speed of a square product).
        if (tasks < (k < 128 ? 2 * wanted : wanted)) continue;
        const bool peeled = column_tail && blocks.mode != GemmParallel::BatchAlone;
        // A task's panels: a block's np, or a whole batch's.
        const int64_t task_panels = blocks.mode == GemmParallel::BatchAlone ? panels : np;
        const double cost =
            double(rounds_serial) *
            (double(busiest(tasks, peeled)) * double(task_panels * ((m + base.mr - 1) / base.mr)) +
             start);
        if (cost <= best_cost) best = blocks, best_cost = cost;
    }
    return best;
}

// The CPU dot-product intrinsic (schedule/TensorIntrin.h) GEMM `p` runs its tiles with on
// `target`: uint8 x int8 on VNNI, bfloat16 on AVX512-BF16, when p's body is the intrinsic's
// product with A's rows contiguous along K, and K is a multiple of the group and N of the tile's
// columns (tensor intrinsics compute whole tiles); else nullptr. `mr` becomes a divisor of M of
// at least 4 rows (none: nullptr).
const TensorIntrin* gemm_dot_intrin(const Schedule& s, int p, const GemmPlan& plan, int64_t m,
                                    int64_t n, int64_t k, GemmTile* t, const Target& target) {
    if (!plan.a_k_last || !plan.a.defined()) return nullptr;
    const Stage& st = s.stage(p);
    const TensorIntrin* in =
        cpu_dot_intrin_for(target, plan.a.dtype(), plan.b.dtype(), dtype_of(st));
    if (!in) return nullptr;
    const std::vector<IterVar> axes = tensor_intrin_axes(*in);
    const int64_t lanes = as_const_int(axes[0].dom().extent).value();
    const int64_t group = as_const_int(axes[1].dom().extent).value();
    std::vector<MatchedRead> reads;
    const ComputeOpNode* c = as_compute(st.op);
    if (!match_tensor_intrin(*in, c->body[0], c->body[0].type(), &reads).empty()) return nullptr;
    if (n % t->nr != 0 && n % lanes == 0) {  // one vector of columns: whole tiles still
        t->nr = lanes;
        t->np = divisor_at_most(n / lanes, 2 * t->np);
    }
    if (k % group != 0 || n % t->nr != 0 || t->nr % lanes != 0) return nullptr;
    int64_t mr = t->mr;
    while (mr >= 4 && m % mr != 0) --mr;
    if (mr < 4) return nullptr;
    t->mr = mr;
    return in;
}

// CPU: a GEMM `p` computed in register tiles inside its element-wise consumer `q` (its epilogue,
// or the copy out of its local cache). q: [batch..., j / nc, i / mr, (j % nc) / nr, i % mr,
// j % nr (vectorised)]; p at q's panel loop: [batch..., k..., i % mr (unrolled), j % nr
// (vectorised)], the tile's accumulators in registers across all of K; B packed per block of
// nc columns into panels [j / nr][k][nr] at q's block loop. The blocks run in parallel (with
// the batch) when there are enough of them to fill the cores, else the row tiles inside a block
// do. Tails (a size no tile divides) are guarded; their vector code stays unmasked on the
// packed and local buffers (lower/VectorizeLoops.h).
void schedule_gemm_cpu(Schedule& s, int p, int q, const GemmPlan& plan, const Target& target) {
    const int d = num_spatial(s.stage(q));
    const int batch = d - 2;
    const int64_t m = leaf_extent(s, q, d - 2), n = leaf_extent(s, q, d - 1);
    int64_t k = 1;
    for (size_t r = static_cast<size_t>(d); r < s.stage(p).leaf.size(); ++r)
        k *= std::max<int64_t>(leaf_extent(s, p, static_cast<int>(r)), 1);
    int64_t batches = 1;
    for (int b = 0; b < batch; ++b) batches *= std::max<int64_t>(leaf_extent(s, q, b), 1);
    const GemmParallel par =
        choose_gemm_parallel(m, n, k, batch, batches, dtype_of(s.stage(p)), target);
    GemmTile t = par.tile;
    // The CPU's dot-product instruction for the tile's products where it applies.
    const TensorIntrin* dot = gemm_dot_intrin(s, p, plan, m, n, k, &t, target);
    const bool parallel_blocks = par.mode != GemmParallel::Rows;
    const bool batch_alone = par.mode == GemmParallel::BatchAlone;
    const bool per_batch = par.mode == GemmParallel::PerBatch;
    const bool parallel = worth_parallel(s, p);

    // q: [b..., i, j] → [b..., io, ii, jo, j1o, ji] → [b..., jo, io, j1o, ii, ji].
    s.split(q, batch, t.mr);
    s.split(q, batch + 2, t.nr);
    s.split(q, batch + 2, t.np);
    // With the rows in parallel the batch goes inside the block loop, fused with the rows:
    // [jo, b..., io, j1o, ii, ji], each block of B packed for every batch at once.
    const bool rows_with_batch = !parallel_blocks && batch > 0;
    std::vector<int> order;
    if (rows_with_batch) order.push_back(batch + 2);
    for (int b = 0; b < batch; ++b) order.push_back(b);
    if (rows_with_batch) {
        for (int x : {batch, batch + 3, batch + 1, batch + 4}) order.push_back(x);
    } else {
        for (int x : {batch + 2, batch, batch + 3, batch + 1, batch + 4}) order.push_back(x);
    }
    s.reorder(q, order);
    s.vectorize(q, batch + 4);
    // The parallel loop: the batch fused with the blocks; where a column tail would guard the
    // fused loop (no partitioning there: the tail's vectors would stay masked in every block),
    // the batch alone when it has two iterations a core, else the blocks of each batch.
    int block = batch;  // the block loop
    if (parallel && parallel_blocks) {
        if (batch_alone) {
            block = fuse_outer(s, q, batch);
            s.parallel(q, 0);
        } else if (per_batch) {
            s.parallel(q, batch);
        } else {
            block = 0;
            fuse_outer(s, q, batch + 1);
            s.parallel(q, 0);
        }
    } else if (rows_with_batch) {
        block = 0;  // [jo, b..., io, ...]: the batch and the rows fused, in parallel
        if (parallel) {
            std::vector<int> rows(static_cast<size_t>(batch + 1));
            for (int x = 0; x <= batch; ++x) rows[static_cast<size_t>(x)] = x + 1;
            s.fuse(q, rows);
            s.parallel(q, 1);
        }
    } else if (parallel && leaf_extent(s, q, batch + 1) > 1) {
        s.parallel(q, batch + 1);
    }
    const int panel_loop = rows_with_batch && !parallel ? batch + 2 : block + 2;

    // p at q's panel loop: [b..., i, j, k...] → [b..., k..., i, j].
    const int reductions = static_cast<int>(s.stage(p).leaf.size()) - d;
    int64_t group = 1;
    if (dot) {  // K in groups: [b..., i, j, k / group, k % group]
        group = as_const_int(tensor_intrin_axes(*dot)[1].dom().extent).value();
        s.split(p, d, group);
    }
    std::vector<int> inner;
    for (int b = 0; b < batch; ++b) inner.push_back(b);
    for (int r = 0; r < reductions; ++r) inner.push_back(d + r);
    inner.push_back(d - 2);
    inner.push_back(d - 1);
    if (dot) inner.push_back(d + 1);
    s.reorder(p, inner);
    const int leaves = static_cast<int>(s.stage(p).leaf.size());
    if (dot) {
        // [b..., k / group, i, j / lanes, j % lanes, k % group]: the last two the instruction,
        // the rows and the tile's vectors unrolled (their accumulators stay in registers).
        const int64_t lanes = as_const_int(tensor_intrin_axes(*dot)[0].dom().extent).value();
        s.split(p, leaves - 2, lanes);
        s.unroll(p, leaves - 2);
        if (t.mr > 1) s.unroll(p, leaves - 3);
        s.tensorize(p, leaves - 1, dot->name);
    } else {
        s.vectorize(p, leaves - 1);
        if (t.mr > 1) s.unroll(p, leaves - 2);
    }
    const Operation p_op = s.stage(p).dag_op, q_op = s.stage(q).dag_op;
    s.compute_at(p, q, panel_loop);

    // B packed into panels at q's block loop: storage [.., j / nr, (the rest), j % nr].
    const int ndim = static_cast<int>(plan.b.ndim());
    int pack = plan.b_in_place ? s.stage_of(plan.b)
                               : s.cache_read(s.stage_of(plan.b), "global", {s.stage_of(p_op)});
    // Its storage and its loops in one order: [batch..., j / nr, the other axis, j % nr], the
    // last vectorised.
    std::vector<int> panels_order;
    for (int x = 0; x < ndim - 2; ++x) panels_order.push_back(x);  // the batch dimensions
    panels_order.push_back(plan.b_dim);
    for (int x = ndim - 2; x <= ndim; ++x)
        if (x != plan.b_dim && x != plan.b_dim + 1) panels_order.push_back(x);
    panels_order.push_back(plan.b_dim + 1);
    if (dot) {
        // For the instruction: [batch..., j / nr, k / group, j % nr, k % group], a tile's rows
        // of B `group` elements apart.
        const int nd = ndim;
        const bool k_before_j = plan.b_dim == nd - 1;  // B is [.., k, j] (else [.., j, k])
        panels_order.resize(static_cast<size_t>(nd - 2));
        if (k_before_j) {  // [.., k, jo, ji] → [.., ko, ki, jo, ji]
            for (int x : {nd, nd - 2, nd + 1, nd - 1}) panels_order.push_back(x);
        } else {  // [.., jo, ji, k] → [.., jo, ji, ko, ki]
            for (int x : {nd - 2, nd, nd - 1, nd + 1}) panels_order.push_back(x);
        }
        const int k_pos = k_before_j ? nd - 2 : nd;
        s.storage_split(pack, plan.b_dim, t.nr);
        s.storage_split(pack, k_pos, group);
        s.storage_reorder(pack, panels_order);
        s.split(pack, plan.b_dim, t.nr);
        s.split(pack, k_pos, group);
        s.reorder(pack, panels_order);
    } else {
        s.storage_split(pack, plan.b_dim, t.nr);  // [.., jo, ji, ..] with ji at b_dim + 1
        s.storage_reorder(pack, panels_order);
        s.split(pack, plan.b_dim, t.nr);
        s.reorder(pack, panels_order);
        s.vectorize(pack, ndim);
    }
    if (parallel && !parallel_blocks) s.parallel(pack, ndim - 2);
    // (A computed B's batch, Winograd's 4 x 4 transforms, unrolled: their index selects fold.)
    if (plan.b_in_place)
        for (int x = 0; x < ndim - 2; ++x) s.unroll(pack, x);
    // (A transformed constant laid out in place is computed once too; a copy of a computed B
    // is not: its stage reads no placeholder.)
    if (plan.b_in_place && transform_of_constant(plan.b))
        s.pre_transform(pack);
    else
        place_pack(s, pack, plan.b, s.stage_of(q_op), block);
}

// --- Winograd's F(2 x 2, 3 x 3) on CPUs (op::conv2d_nchwc_winograd) ---------------------------

// A Winograd convolution's stages (op/Conv.h) as the DAG's operation indices, found by the names
// the operators give them: `<name>.winograd_input` and `.winograd_weight` read by
// `.winograd_product`, whose one reader is `<name>` (conv2d_nchwc_winograd) or
// `<name>.winograd_output`, itself read by `<name>` alone (conv2d_nchw_winograd, whose input is
// `<name>.winograd_layout`; `layout` and `nchw` are its two copies, -1 otherwise).
struct WinogradOps {
    int input = -1, weight = -1, product = -1, output = -1, layout = -1, nchw = -1;
    GemmPlan gemm;  ///< the product's: A the input's tiles, B the transformed filters
};

std::vector<WinogradOps> find_winograds(const DAGAnalysis& a) {
    static const std::string kProduct = ".winograd_product";
    std::vector<WinogradOps> found;
    for (int i = 0; i < a.num_ops(); ++i) {
        const std::string& name = a.ops()[static_cast<size_t>(i)]->name;
        if (name.size() <= kProduct.size() ||
            name.compare(name.size() - kProduct.size(), kProduct.size(), kProduct) != 0 ||
            a.consumers(i).size() != 1)
            continue;
        const std::string base = name.substr(0, name.size() - kProduct.size());
        WinogradOps w;
        w.product = i;
        w.output = a.consumers(i)[0];
        for (int p : a.producers(i)) {
            const std::string& producer = a.ops()[static_cast<size_t>(p)]->name;
            if (producer == base + ".winograd_input") w.input = p;
            if (producer == base + ".winograd_weight") w.weight = p;
        }
        w.gemm = plan_gemm(as_compute(a.ops()[static_cast<size_t>(i)]));
        auto name_of = [&](int op) -> const std::string& {
            return a.ops()[static_cast<size_t>(op)]->name;
        };
        if (name_of(w.output) == base + ".winograd_output" && a.consumers(w.output).size() == 1 &&
            name_of(a.consumers(w.output)[0]) == base && w.input >= 0) {
            w.nchw = a.consumers(w.output)[0];
            for (int p : a.producers(w.input))
                if (name_of(p) == base + ".winograd_layout") w.layout = p;
            if (w.layout < 0) continue;
        } else if (name_of(w.output) != base) {
            continue;
        }
        if (w.input < 0 || w.weight < 0 || !w.gemm.ok ||
            !w.gemm.b.op().same_as(a.ops()[static_cast<size_t>(w.weight)]))
            continue;
        w.gemm.b_in_place = true;
        found.push_back(w);
    }
    return found;
}

// The stride of a Winograd slice in elements: a cache line past a multiple of 4 KiB (float32).
constexpr int64_t kSliceAlign = 1024, kSliceOffset = 16;

// The widest vector of at most `lanes` that divides `extent` (1: none).
int64_t dividing_vector(int64_t extent, int64_t lanes) {
    while (lanes > 1 && extent % lanes != 0) lanes /= 2;
    return lanes;
}

// The four stages of a Winograd convolution: the input's tiles transformed in parallel over the
// tiles, each tile's 16 transforms unrolled (their index selects fold) over vectors of
// channels; the product as a batch of 16 GEMMs (schedule_gemm_cpu), the transformed filters laid
// out in its panels themselves (once, outside the kernel, for a constant weight); the output's
// 2 x 2 tiles unrolled over vectors of its channel block, in parallel over rows of tiles.
// Returns the operations it scheduled.
std::vector<Operation> schedule_winograd_cpu(Schedule& s, const DAGAnalysis& a,
                                             const WinogradOps& w, const Target& target) {
    const Type f32 = Float(32);
    const int64_t lanes = target.vector_lanes(f32);
    const Operation input = a.ops()[static_cast<size_t>(w.input)],
                    product = a.ops()[static_cast<size_t>(w.product)],
                    output = a.ops()[static_cast<size_t>(w.output)];
    // V [a, b, tile, c] -> [tile, c / vec, a, b, c % vec].
    const int v = s.stage_of(input);
    const int64_t channels = a.spatial_extents(w.input).back();
    if (const int64_t vec = dividing_vector(channels, lanes); vec > 1) {
        s.split(v, 3, vec);
        s.reorder(v, {2, 3, 0, 1, 4});
        s.vectorize(v, 4);
    } else {
        s.reorder(v, {2, 3, 0, 1});
    }
    s.unroll(v, 2);
    s.unroll(v, 3);
    if (worth_parallel(s, v)) s.parallel(v, 0);
    // A tile's 16 transforms go to (and the output's come from) 16 slices of V and M; slices a
    // multiple of 4 KiB apart (784 tiles x 64 channels at 56 x 56) fall in one set of L1.
    s.storage_align(v, 1, kSliceAlign, kSliceOffset);
    // M: its register tiles in a local cache, the product the copy out.
    const Operation cache = s.stage(s.cache_write(s.stage_of(product), "local")).op;
    schedule_gemm_cpu(s, s.stage_of(cache), s.stage_of(product), w.gemm, target);
    s.storage_align(s.stage_of(product), 1, kSliceAlign, kSliceOffset);
    // Y [n, k / kb, y, x, kb] -> [n, k / kb, y / 2, x / 2, y % 2, x % 2, kb].
    const int y = s.stage_of(output);
    s.split(y, 2, 2);
    s.split(y, 4, 2);
    s.reorder(y, {0, 1, 2, 4, 3, 5, 6});
    s.unroll(y, 4);
    s.unroll(y, 5);
    if (dividing_vector(a.spatial_extents(w.output).back(), lanes) > 1) s.vectorize(y, 6);
    fuse_outer(s, y, 3);
    if (worth_parallel(s, y)) s.parallel(y, 0);
    return {input, a.ops()[static_cast<size_t>(w.weight)], product, cache, output};
}

bool constant_extents(const DAGAnalysis& a, int op) {
    for (int64_t e : a.spatial_extents(op))
        if (e < 1) return false;
    for (int64_t e : a.reduction_extents(op))
        if (e < 1) return false;
    return true;
}

// Whether op `i` gets a data-reusing tile (choose_tiles).
bool tiled(const DAGAnalysis& a, int i) {
    return a.has_reduction(i) && a.needs_multi_level_tiling(i) &&
           op_num_outputs(a.ops()[static_cast<size_t>(i)]) == 1 && constant_extents(a, i);
}

// The GEMMs among the tiled operations: those plan_gemm takes with at least two rows (a
// matrix-vector product stays a vectorised reduction).
std::vector<GemmPlan> choose_gemms(const DAGAnalysis& a) {
    std::vector<GemmPlan> gemms(static_cast<size_t>(a.num_ops()));
    for (int i = 0; i < a.num_ops(); ++i) {
        if (!tiled(a, i)) continue;
        std::vector<int64_t> ext = a.spatial_extents(i);
        if (ext.size() >= 2 && ext[ext.size() - 2] >= 2)
            gemms[static_cast<size_t>(i)] = plan_gemm(as_compute(a.ops()[static_cast<size_t>(i)]));
    }
    return gemms;
}

// The vector-axis plans of the tiled operations (CPU only; empty plans elsewhere); a GEMM's is
// empty (its columns are the vector axis).
std::vector<VectorAxisPlan> choose_vector_axes(const DAGAnalysis& a,
                                               const std::vector<GemmPlan>& gemms,
                                               const Target& target) {
    std::vector<VectorAxisPlan> plans(static_cast<size_t>(a.num_ops()));
    for (int i = 0; i < a.num_ops(); ++i)
        if (tiled(a, i) && !gemms[static_cast<size_t>(i)].ok)
            plans[static_cast<size_t>(i)] = plan_vector_axis(a, i, target);
    return plans;
}

// The blocked tiles of the tiled operations (CPU) that neither the GEMM nor a vector axis other
// than the innermost serves (plan_blocked_tile).
std::vector<std::optional<BlockedTile>> choose_blocked_tiles(
    const DAGAnalysis& a, const std::vector<GemmPlan>& gemms,
    const std::vector<VectorAxisPlan>& plans, const Target& target) {
    std::vector<std::optional<BlockedTile>> blocked(static_cast<size_t>(a.num_ops()));
    for (int i = 0; i < a.num_ops(); ++i) {
        const VectorAxisPlan& plan = plans[static_cast<size_t>(i)];
        if (tiled(a, i) && !gemms[static_cast<size_t>(i)].ok && plan.axis < 0 && !plan.as_reduction)
            blocked[static_cast<size_t>(i)] = plan_blocked_tile(a, i, target);
    }
    return blocked;
}

// The stages to inline: injective non-outputs, except expensive ones (exp, branches) read by
// several stages, whose work inlining would repeat, and the producers of tiles vectorised along
// another axis than the innermost (padding): their values are broadcast, and inlined they would
// be recomputed for every block of the vector axis.
std::vector<bool> choose_inlined(const DAGAnalysis& a, const std::vector<VectorAxisPlan>& plans) {
    std::vector<bool> inlined(static_cast<size_t>(a.num_ops()), false);
    for (int i = 0; i < a.num_ops(); ++i)
        inlined[static_cast<size_t>(i)] =
            a.is_strictly_inlinable(i) || (a.is_inlinable(i) && a.consumers(i).size() == 1);
    for (int i = 0; i < a.num_ops(); ++i)
        if (plans[static_cast<size_t>(i)].axis >= 0)
            for (int producer : a.producers(i)) inlined[static_cast<size_t>(producer)] = false;
    return inlined;
}

// A GEMM whose tiles run on the CPU's dot-product instruction reads its A operand's rows from
// memory (the instruction's operand is a tensor read): a computed A (the shifted int8 operand
// of op/Matmul.h's s8 x s8 product) stays a stage of its own, not inlined.
void keep_dot_operands(const DAGAnalysis& a, const std::vector<GemmPlan>& gemms,
                       const Target& target, std::vector<bool>& inlined) {
    for (int i = 0; i < a.num_ops(); ++i) {
        const GemmPlan& g = gemms[static_cast<size_t>(i)];
        if (!g.ok || !g.a.defined() || !g.a_k_last) continue;
        const Type acc = op_output(a.ops()[static_cast<size_t>(i)], 0).dtype();
        if (!cpu_dot_intrin_for(target, g.a.dtype(), g.b.dtype(), acc)) continue;
        for (int p = 0; p < a.num_ops(); ++p)
            if (a.ops()[static_cast<size_t>(p)].same_as(g.a.op()))
                inlined[static_cast<size_t>(p)] = false;
    }
}

// One tile: the producer computed in tiles inside its consumer, and its vector-axis plan.
struct TilePlan {
    Operation producer, consumer;
    VectorAxisPlan vector_axis;
    GemmPlan gemm;
    std::optional<BlockedTile> blocked;
};

// The tiles, inserting a local cache for outputs (the cache is then the producer and the output
// the consumer).
std::vector<TilePlan> choose_tiles(Schedule& s, const DAGAnalysis& a,
                                   const std::vector<bool>& inlined,
                                   const std::vector<VectorAxisPlan>& plans,
                                   const std::vector<GemmPlan>& gemms,
                                   const std::vector<std::optional<BlockedTile>>& blocked,
                                   const std::vector<bool>& convs_as_gemms) {
    std::vector<TilePlan> tiles;
    for (int i = 0; i < a.num_ops(); ++i) {
        const Operation& op = a.ops()[static_cast<size_t>(i)];
        const VectorAxisPlan& plan = plans[static_cast<size_t>(i)];
        if (!tiled(a, i) || plan.as_reduction || convs_as_gemms[static_cast<size_t>(i)]) continue;
        const GemmPlan gemm = gemms[static_cast<size_t>(i)];
        const std::optional<BlockedTile>& b = blocked[static_cast<size_t>(i)];
        if (a.is_output(i)) {
            int cache = s.cache_write(s.stage_of(op), "local");
            tiles.push_back({s.stage(cache).op, op, plan, gemm, b});
            continue;
        }
        int consumer = a.elementwise_consumer(i, inlined);
        if (consumer >= 0 && !a.has_reduction(consumer))
            tiles.push_back({op, a.ops()[static_cast<size_t>(consumer)], plan, gemm, b});
    }
    return tiles;
}

// A 1 x 1 NCHW conv2d (groups of 1, float32) over at least this many output pixels (14 x 14)
// runs as the CPU GEMM (conv_as_gemm): at 7 x 7 the vector-axis tile was faster (2048 -> 512:
// 0.32 against 0.42 ms), at 14 x 14 as fast, stride 2 (28 x 28 in) 1.27 x slower.
constexpr int64_t kConvGemmMinPixels = 196;

// Whether the GEMM's register tile of a 1 x 1 conv with 32 vector registers (AVX-512: 12 rows of
// the weight, each K input channels long) reads more of the weight a panel than L1 holds. On a
// 2-core Zen 4 (32 KiB of L1), the vector-axis tile then ran faster, the weights constant
// (interleaved, 7-11 rounds): 1024 -> 256 and 1024 -> 512 at 14 x 14 1.19-1.28 x and 1.23-1.5 x,
// 2048 -> 512 at 14 x 14 1.29 x, 1024 -> 256 at 28 x 28 1.16 x; with rows within L1, 256 -> 1024
// at 14 x 14 and 512 -> 128 at 28 x 28 ran alike, 128 -> 512 at 28 x 28 1.2 x slower. With
// AVX2's 16 registers (6 rows), the vector-axis tile ran 2.6-3 x slower than the GEMM there, also
// where the rows outgrow L1 (2048 -> 512 at 14 x 14, AVX2 code on the same Zen 4).
bool gemm_rows_outgrow_l1(const Operation& op, int64_t pixels, const Target& target) {
    const ComputeOpNode* c = as_compute(op);
    const Type dtype = op_output(op, 0).dtype();
    const int64_t lanes = target.vector_lanes(dtype), l1 = target.l1d_cache_bytes();
    if (vector_registers(lanes, dtype) < 32 || l1 <= 0) return false;
    const int64_t m = as_const_int(c->axis[1].dom().extent).value_or(0);
    int64_t k = 1;
    for (const IterVar& r : c->reduce_axis) k *= as_const_int(r.dom().extent).value_or(0);
    const GemmTile t = gemm_tile(m, pixels, k, dtype, target);
    return t.mr * k * (dtype.bits / 8) > l1;
}

// Whether `op` is a float32 1 x 1 NCHW conv2d over at least kConvGemmMinPixels output pixels
// whose GEMM tile's weight rows fit L1 (gemm_rows_outgrow_l1): conv_as_gemm's checks before any
// reindexing.
bool pointwise_conv_over_many_pixels(const Operation& op, const Target& target) {
    const std::optional<ImplicitGemmLayout> layout = implicit_gemm_layout(op);
    if (!layout || layout->consumer_order.front() != 1 || op_output(op, 0).dtype() != Float(32))
        return false;
    const ComputeOpNode* c = as_compute(op);
    int64_t pixels = 1;
    for (size_t d : {0, 2, 3}) pixels *= as_const_int(c->axis[d].dom().extent).value_or(0);
    return internal::conv_window(op) == 1 && pixels >= kConvGemmMinPixels &&
           !gemm_rows_outgrow_l1(op, pixels, target);
}

// The product a 1 x 1 NCHW conv2d `op` (pointwise_conv_over_many_pixels) is reindexed into when
// it is a matrix product the CPU GEMM takes (groups of 1: both gathers two-dimensional), with its
// plan; nullopt, `s` unchanged, otherwise.
std::optional<std::pair<Operation, GemmPlan>> reindexed_gemm(Schedule& s, const Operation& op) {
    const ImplicitGemmLayout layout = *implicit_gemm_layout(op);
    Schedule saved = s;
    const int p = s.reindex(s.stage_of(op), layout.order, layout.groups);
    const ComputeOpNode* product = as_compute(s.stage(p).op);
    bool two_d = op_inputs(s.stage(p).op).size() == 2;
    for (const TensorRead* r : internal::tensor_reads(product))
        two_d = two_d && r->indices.size() == 2;
    GemmPlan plan = plan_gemm(product);
    if (two_d && plan.ok) return std::make_pair(s.stage(p).op, plan);
    s = saved;
    return std::nullopt;
}

// A 1 x 1 NCHW conv2d (operation `i`) over at least kConvGemmMinPixels output pixels as the CPU
// GEMM (schedule_gemm_cpu), `product` the matrix product reindexed_gemm made of it: output
// channels x pixels over input channels, the weight's rows A and the input's rows B, packed into
// column panels, so that a panel's reduction reads contiguous memory (the conv's vector-axis tile
// reads one input row per input channel, a new page each step); both gathers are inlined. The
// conv, a copy out of the product now, is inlined into its element-wise consumer where it has
// one; that consumer (or the conv) has its loops grouped as the product's axes and computes the
// product in its register tiles, as a matmul's epilogue does. Returns the consumer's operation.
Operation conv_as_gemm(Schedule& s, const DAGAnalysis& a, int i, const Operation& product,
                       const GemmPlan& plan, const std::vector<bool>& inlined,
                       const Target& target) {
    const Operation& conv = a.ops()[static_cast<size_t>(i)];
    const std::vector<Tensor> gathers = op_inputs(product);
    Operation consumer = conv;
    const int q = a.is_output(i) ? -1 : a.elementwise_consumer(i, inlined);
    if (q >= 0 && !a.has_reduction(q)) {
        s.compute_inline(s.stage_of(conv));
        consumer = a.ops()[static_cast<size_t>(q)];
    }
    internal::group_loops(s, s.stage_of(consumer), *implicit_gemm_layout(conv));
    schedule_gemm_cpu(s, s.stage_of(product), s.stage_of(consumer), plan, target);
    for (const Tensor& g : gathers) s.compute_inline(s.stage_of(g));
    return consumer;
}

}  // namespace

Schedule default_schedule_rules(const std::vector<Tensor>& outputs, const Target& target) {
    if (target.is_gpu()) return internal::default_schedule_gpu(outputs, target);
    Schedule s = create_schedule(outputs);
    DAGAnalysis a(outputs);
    std::vector<GemmPlan> gemms = choose_gemms(a);
    std::vector<VectorAxisPlan> plans = choose_vector_axes(a, gemms, target);
    std::vector<bool> inlined = choose_inlined(a, plans);
    keep_dot_operands(a, gemms, target, inlined);
    const std::vector<WinogradOps> winograds = find_winograds(a);
    for (const WinogradOps& w : winograds)
        for (int op : {w.input, w.weight, w.product, w.output, w.layout, w.nchw})
            if (op >= 0) inlined[static_cast<size_t>(op)] = false;
    const std::vector<std::optional<BlockedTile>> blocked =
        choose_blocked_tiles(a, gemms, plans, target);
    // The stages kept for a tile to read (paddings): copied in parallel from kPaddingParallelWork.
    std::set<const OperationNode*> kept_padding =
        keep_padding_of_blocked_tiles(a, blocked, inlined);
    for (int i = 0; i < a.num_ops(); ++i)
        if (plans[static_cast<size_t>(i)].axis >= 0)
            for (int p : a.producers(i))
                if (!inlined[static_cast<size_t>(p)] && !a.has_reduction(p))
                    kept_padding.insert(a.ops()[static_cast<size_t>(p)].get());
    // 1 x 1 convs as GEMMs (conv_as_gemm), reindexed before the other tiles are chosen.
    std::vector<std::optional<std::pair<Operation, GemmPlan>>> products(
        static_cast<size_t>(a.num_ops()));
    std::vector<bool> convs_as_gemms(static_cast<size_t>(a.num_ops()), false);
    for (int i = 0; i < a.num_ops(); ++i) {
        const Operation& op = a.ops()[static_cast<size_t>(i)];
        if (tiled(a, i) && pointwise_conv_over_many_pixels(op, target))
            products[static_cast<size_t>(i)] = reindexed_gemm(s, op);
        convs_as_gemms[static_cast<size_t>(i)] = products[static_cast<size_t>(i)].has_value();
    }
    std::vector<TilePlan> tiles =
        choose_tiles(s, a, inlined, plans, gemms, blocked, convs_as_gemms);
    for (int i = 0; i < a.num_ops(); ++i)
        if (inlined[static_cast<size_t>(i)]) s.compute_inline(s.stage_of(a.ops()[i]));
    std::map<const OperationNode*, bool> scheduled;
    for (int i = 0; i < a.num_ops(); ++i) {
        const auto& product = products[static_cast<size_t>(i)];
        if (!product) continue;
        const Operation consumer =
            conv_as_gemm(s, a, i, product->first, product->second, inlined, target);
        scheduled[product->first.get()] = scheduled[consumer.get()] = true;
    }
    for (const WinogradOps& w : winograds)
        for (const Operation& op : schedule_winograd_cpu(s, a, w, target))
            scheduled[op.get()] = true;
    for (const TilePlan& t : tiles) {
        if (scheduled.count(t.producer.get())) continue;  // (a Winograd product)
        bool q_tiled = scheduled.count(t.consumer.get()) > 0;
        int ps = s.stage_of(t.producer), qs = s.stage_of(t.consumer);
        if (t.gemm.ok && !q_tiled && num_spatial(s.stage(ps)) == num_spatial(s.stage(qs)))
            schedule_gemm_cpu(s, ps, qs, t.gemm, target);
        else if (t.vector_axis.axis >= 0 && !q_tiled)
            schedule_vector_axis_cpu(s, ps, qs, t.vector_axis, target);
        else if (t.blocked && !q_tiled)
            schedule_blocked_cpu(s, ps, qs, *t.blocked);
        else
            schedule_tiled_cpu(s, ps, qs, q_tiled, target);
        scheduled[t.producer.get()] = scheduled[t.consumer.get()] = true;
    }
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        if (as_placeholder(st.op) || st.attach != AttachKind::Root ||
            scheduled.count(st.op.get()) || scheduled.count(st.dag_op.get()))
            continue;
        const int stage = static_cast<int>(i);
        bool reduction = !as_compute(st.op)->reduce_axis.empty();
        if (reduction)
            i += static_cast<size_t>(schedule_reduction_cpu(s, stage, target));
        else if (kept_padding.count(st.dag_op.get()))
            schedule_injective_cpu(s, stage, target, kPaddingParallelWork);
        else
            schedule_injective_cpu(s, stage, target);
    }
    return s;
}

}  // namespace tessel::op
