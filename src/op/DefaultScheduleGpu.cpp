// Default schedules for GPUs (op/DefaultScheduleGpu.h). The rules, in the order they are applied:
//  1. every injective stage that is not an output is inlined (recomputing an exp or a padding
//     check on a GPU costs less than the memory traffic of storing it);
//  2. row groups (softmax, log_softmax, layer_norm, rms_norm: an output read row-wise through row
//     reductions) get a warp per row for rows up to kWarpRowMax floats, several rows a block, the
//     block's rows copied once into shared memory (128-bit accesses where the row length allows),
//     the reductions across the warp's lanes in registers; longer rows a block each, the
//     reductions across the block, the row staged in shared memory up to kBlockRowSharedMax
//     floats (tutorials/06_gpu_softmax.py, steps 2 and 3);
//  3. data-reusing stages (matmul, dense, batch_matmul, conv2d) are computed in register tiles
//     inside their element-wise consumer (the epilogue, or the copy out of a local cache): the
//     consumer's tile on blocks and threads, the operands' tiles in shared memory at the outer
//     reduction loop, double-buffered; matmul-like ones also read their shared tiles through
//     per-thread register caches with 128-bit loads, the shared tiles stored k-major, with the
//     tile sizes chosen for the shape by a model of the waves (gpu_matmul_tile; tutorial
//     05_gpu_gemm.py's steps 4 to 6 choose between two); conv2d with groups of 1 is first
//     reindexed into such a product (an implicit GEMM, implicit_gemm), grouped ones get the
//     direct convolution's tiles (op/GpuConvTiles.h);
//     tiny products and depthwise convolutions keep one thread per output;
//  4. other root reductions over one dense axis (sums, means, max over the last axis) reduce
//     across a warp or a block per output; the rest (pooling, sums over other axes) one thread per
//     output;
//  5. injective outputs are bound to blocks of 256 threads, 4 elements each (128-bit accesses)
//     where the innermost extent allows.
#include "op/DefaultScheduleGpu.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "op/DefaultScheduleTensorCore.h"
#include "op/GpuConvTiles.h"
#include "op/LoopNest.h"
#include "op/ReadAccess.h"
#include "tessel/Error.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/te/DAGAnalysis.h"

namespace tessel::op::internal {

namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kWarpRowMax = 2048;         // rows up to this length: a warp each
constexpr int64_t kRowsPerBlock = 8;          // a warp per row: rows (warps) per block at most
constexpr int64_t kRowSharedFloats = 8192;    // a block's staged rows: 32 KB of shared memory
constexpr int64_t kRowThreads = 512;          // a block per row: threads
constexpr int64_t kDotRowMin = 256;           // a product of few rows: a warp a dot product from
constexpr int64_t kSmallThreadsPerSm = 1024;  // a small product split: threads an SM in all
constexpr int64_t kSmallSplitMin = 512;       // reductions this long (shorter: a launch costs more)
constexpr int64_t kSmallPartMin = 64;         // into parts at least this long
// A block per row stages its row in shared memory up to this many floats (160 KB of the H100's
// 227 KB a block may have): the passes over the row then read it once from global memory.
constexpr int64_t kBlockRowSharedMax = 40960;
constexpr int64_t kThreads = 256;  // one thread per output: threads per block

std::vector<std::string> numbered(const std::string& prefix, size_t n) {
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// The constant shape of an operation's (first) output; -1 for a symbolic extent.
std::vector<int64_t> shape_of(const Operation& op) {
    std::vector<int64_t> out;
    const Tensor t = op_output(op, 0);
    for (const Expr& e : t.shape()) {
        const IntImm* i = e.as<IntImm>();
        out.push_back(i ? i->value : -1);
    }
    return out;
}

// The op's reduction extents (-1 where one is not constant).
std::vector<int64_t> reduction_extents(const Operation& op) {
    std::vector<int64_t> out;
    if (const ComputeOpNode* c = as_compute(op))
        for (const IterVar& iv : c->reduce_axis)
            out.push_back(as_const_int(iv.dom().extent).value_or(-1));
    return out;
}

bool constant(const std::vector<int64_t>& extents) {
    return std::all_of(extents.begin(), extents.end(), [](int64_t e) { return e >= 1; });
}

// Floats per access along a row of `m`: 4 (128 bits) where every row starts 16-byte aligned.
int64_t vector_width(int64_t m) {
    return m % 4 == 0 ? 4 : m % 2 == 0 ? 2 : 1;
}

// ---------------------------------------------------------------------------------------------
// Row groups

// An output computed row by row from row reductions of its inputs (softmax: max, sum; layer norm:
// sum, sum of squares).
struct RowGroup {
    int output = -1;                // y: injective, rows are its axes but the last
    std::vector<int> reductions;    // keepdims reductions over y's last axis, topological order
    std::vector<int> members;       // y, the reductions and the inlined stages between them
    std::vector<int64_t> shape;     // y's shape
    int staged = -1;                // the placeholder copied into shared memory, or -1
    std::optional<Operation> copy;  // its shared copy, once inserted
    bool warp() const { return shape.back() <= kWarpRowMax; }
};

std::optional<RowGroup> find_row_group(const DAGAnalysis& a, int y,
                                       const std::vector<bool>& inlined) {
    const Operation& yop = a.ops()[static_cast<size_t>(y)];
    RowGroup g;
    g.output = y;
    g.shape = shape_of(yop);
    if (!a.is_output(y) || a.has_reduction(y) || op_num_outputs(yop) != 1 || g.shape.size() < 2 ||
        !constant(g.shape))
        return std::nullopt;
    std::vector<int64_t> row = g.shape;
    row.back() = 1;
    std::set<int> visited = {y};
    std::vector<int> stack = {y}, row_inputs;
    g.members = {y};
    while (!stack.empty()) {
        int o = stack.back();
        stack.pop_back();
        for (int p : a.producers(o)) {
            if (!visited.insert(p).second) continue;
            const Operation& pop = a.ops()[static_cast<size_t>(p)];
            if (a.is_placeholder(p)) {
                if (shape_of(pop) == g.shape) row_inputs.push_back(p);
                continue;
            }
            if (!inlined[static_cast<size_t>(p)]) {
                if (!a.has_reduction(p) || a.is_output(p) || op_num_outputs(pop) != 1 ||
                    shape_of(pop) != row || a.reduction_extents(p) != std::vector{g.shape.back()})
                    return std::nullopt;
                g.reductions.push_back(p);
            }
            g.members.push_back(p);
            stack.push_back(p);
        }
    }
    if (g.reductions.empty()) return std::nullopt;
    for (int r : g.reductions)
        for (int c : a.consumers(r))
            if (std::find(g.members.begin(), g.members.end(), c) == g.members.end())
                return std::nullopt;
    std::sort(g.reductions.begin(), g.reductions.end());
    if ((g.warp() || g.shape.back() <= kBlockRowSharedMax) && row_inputs.size() == 1)
        g.staged = row_inputs[0];
    return g;
}

// A warp per row: rows per block, at most kRowSharedFloats staged floats and the rows there are.
int64_t rows_per_block(const RowGroup& g) {
    int64_t rows = g.shape[g.shape.size() - 2];
    return std::max<int64_t>(1, std::min({kRowsPerBlock, kRowSharedFloats / g.shape.back(), rows}));
}

// The row group's shared copy of its staged input: its readers are the members reading it.
void stage_row_input(Schedule& s, const DAGAnalysis& a, RowGroup& g) {
    if (g.staged < 0) return;
    const Operation& x = a.ops()[static_cast<size_t>(g.staged)];
    std::vector<int> readers;
    for (int m : g.members) {
        const std::vector<int>& p = a.producers(m);
        if (std::find(p.begin(), p.end(), g.staged) != p.end())
            readers.push_back(s.stage_of(a.ops()[static_cast<size_t>(m)]));
    }
    int copy = s.cache_read(s.stage_of(x), "shared", readers);
    g.copy = s.stage(copy).op;
}

// The loops along a row: `col` split into [col, lanes (threads, bound to threadIdx.x), v (a
// vector of vector_width(m))].
void split_row(LoopNest& n, const std::string& col, int64_t threads, int64_t m) {
    int64_t vec = vector_width(m);
    n.split(col, vec, col, col + ".v");
    n.split(col, threads, col + ".o", col + ".t");
    n.bind(col + ".t", IterAnnotation::ThreadX);
    if (vec > 1) n.vectorize(col + ".v");
}

void schedule_row_group(Schedule& s, const DAGAnalysis& a, const RowGroup& g) {
    const int y = s.stage_of(a.ops()[static_cast<size_t>(g.output)]);
    const size_t d = g.shape.size();
    std::vector<std::string> rows = numbered("r", d - 1);
    LoopNest q(s, y, concat(rows, {"c"}));
    const int64_t rpb = g.warp() ? rows_per_block(g) : 1;
    std::string at = "block";
    if (rpb > 1) {
        q.split(rows.back(), rpb, rows.back(), "warp");
        q.fuse(rows, "block");
        q.bind("warp", IterAnnotation::ThreadY);
        at = "warp";
    } else {
        q.fuse(rows, "block");
    }
    q.bind("block", IterAnnotation::BlockX);
    const int64_t threads = g.warp() ? kWarp : kRowThreads;
    split_row(q, "c", threads, g.shape.back());
    const int pos = q.pos(at);
    for (auto it = g.reductions.rbegin(); it != g.reductions.rend(); ++it) {
        // Consumers first: a reduction read by another (layer norm's mean) goes before it.
        int r = s.stage_of(a.ops()[static_cast<size_t>(*it)]);
        s.compute_at(r, y, pos);
        s.set_scope(r, StorageScope::Local);
        LoopNest rn(s, r, concat(numbered("s", d), {"k"}));
        rn.split("k", threads, "k.o", "k.t");
        rn.bind("k.t", IterAnnotation::ThreadX);
    }
    if (!g.copy) return;
    const int c = s.stage_of(*g.copy);
    s.compute_at(c, y, pos);
    LoopNest cn(s, c, concat(rows, {"c"}));
    if (rpb > 1) cn.bind(rows.back(), IterAnnotation::ThreadY);
    split_row(cn, "c", threads, g.shape.back());
}

// A root reduction over one axis that every read is dense along (a sum or max over rows): a warp
// per output point for up to kWarpRowMax elements (several a block), else a block, the reduction
// across the threads.
bool schedule_row_reduction(Schedule& s, int stage) {
    const Stage& st = s.stage(stage);
    const ComputeOpNode* c = as_compute(st.op);
    if (!c || op_num_outputs(st.op) != 1 || c->reduce_axis.size() != 1 ||
        !dense_along(c, c->reduce_axis[0].var()))
        return false;
    const size_t sp = c->axis.size();
    const std::vector<int64_t> shape = shape_of(st.op);
    const IntImm* ext = c->reduce_axis[0].dom().extent.as<IntImm>();
    if (sp == 0 || !constant(shape) || !ext || ext->value < kWarp) return false;
    const int64_t m = ext->value;
    int64_t points = 1;
    for (int64_t e : shape) points *= e;
    LoopNest n(s, stage, concat(numbered("s", sp), {"k"}));
    n.fuse(numbered("s", sp), "row");
    const bool warp = m <= kWarpRowMax;
    const int64_t rpb = warp ? std::min(kRowsPerBlock, points) : 1;
    if (rpb > 1) {
        n.split("row", rpb, "row", "warp");
        n.bind("warp", IterAnnotation::ThreadY);
    }
    n.bind("row", IterAnnotation::BlockX);
    n.split("k", warp ? kWarp : kRowThreads, "k.o", "k.t");
    n.bind("k.t", IterAnnotation::ThreadX);
    return true;
}

// ---------------------------------------------------------------------------------------------
// Tiles of data-reusing stages

// How one output axis of a tile is spread: `block` points a block, over `threads` threads (as
// `vthreads` strided parts), block / threads / vthreads points a thread.
struct AxisTile {
    int64_t block = 1, threads = 1, vthreads = 1;
    int64_t per_thread() const { return block / threads / vthreads; }
};

struct GpuTile {
    Operation producer, consumer;  // p computed in registers inside q's threads
    std::vector<AxisTile> axes;    // per output axis
    int split = 0;                 // p's reduction axis split into shared-memory steps
    int64_t bk = 8;                // its extent per step
    bool matmul = false;  // register caches of the shared tiles, k-major tiles, 128-bit copies
    bool double_buffer = true;
    std::vector<Operation> shared, local;  // the inserted caches, one per operand
    std::vector<int> tile_dims;            // matmul: per operand, its dim along a tiled axis
    std::vector<int> tile_axes;            // matmul: that output axis
    std::vector<int> k_dims;               // matmul: per operand, its dim along the reduction
    // threadIdx.x, .y, .z extents (innermost first), and their output axes.
    std::vector<int64_t> thread_extents;
    std::vector<int> thread_axes;
    // An implicit GEMM (a reindexed conv): the consumer's loops in the producer's axis order
    // (`consumer_order`, then runs of `consumer_groups` loops fused into one axis each), and per
    // operand the dim of its shared tile that its copy walks innermost (-1: its last).
    std::vector<int> consumer_order, consumer_groups;
    std::vector<int> copy_inner;
};

bool has_branch(const ComputeOpNode* c) {
    bool found = false;
    for (const Expr& b : c->body)
        post_order_visit(b, [&](const IRNode* n) {
            found = found || n->node_type == IRNodeType::Select ||
                    (n->node_type == IRNodeType::Call &&
                     static_cast<const Call*>(n)->op == Intrinsic::if_then_else);
        });
    return found;
}

// The dim of `read` whose index is exactly `v`, or -1.
int dim_of(const TensorRead* read, const Var& v) {
    for (size_t d = 0; d < read->indices.size(); ++d)
        if (read->indices[d].get() == v.get()) return static_cast<int>(d);
    return -1;
}

// The one dim of `read` whose index uses `v` (exactly, or as split-K's `part * length + v`), or
// -1.
int dim_using(const TensorRead* read, const Var& v) {
    int found = -1;
    for (size_t d = 0; d < read->indices.size(); ++d)
        if (uses_var(read->indices[d], v)) {
            if (found >= 0) return -1;
            found = static_cast<int>(d);
        }
    return found;
}

// The register tiles of a matmul-like stage, and the model's view of each. A tile of which
// `resident` blocks fit an SM (registers and threads) costs `cost` per output and step of k
// when its SM is full, and (j + hide) / j times that with j blocks resident: few blocks hide
// latency worse, the more so the fewer threads and independent FMAs a block has. The constants
// were fitted to 25 float32 products timed on an H200 under eleven tiles; choosing among these
// three came within 1 % of choosing among six (docs/perf/gpu-matmul-tiles.md).
struct MatmulTileModel {
    GpuMatmulTile tile;
    double cost, hide;
    int64_t resident;
};
constexpr MatmulTileModel kMatmulTiles[] = {
    {{64, 8, 2, 128, 16, 2, 16}, 4.58, 1.7, 4},  // 8 x 8 a thread, 128 threads
    {{64, 8, 2, 64, 8, 2, 16}, 5.37, 3.6, 8},    // 8 x 8 a thread, 64 threads
    {{32, 8, 1, 64, 16, 1, 16}, 6.16, 4.2, 8},   // 4 x 4 a thread, 128 threads
};

thread_local std::optional<GpuMatmulTile> forced_matmul_tile;
thread_local std::optional<GpuConvKernel> forced_conv_kernel;
thread_local std::optional<int64_t> forced_split_k_length;

// The modelled time of a batch of m x n outputs in tiles `t` over `sms` multiprocessors, per
// step of k: the blocks of the busiest SM, all at the SM's shared rate.
double matmul_tile_time(const MatmulTileModel& t, int64_t batch, int64_t m, int64_t n,
                        int64_t sms) {
    const int64_t tiles =
        batch * ((m + t.tile.rows - 1) / t.tile.rows) * ((n + t.tile.cols - 1) / t.tile.cols);
    const int64_t per_sm = (tiles + sms - 1) / sms;
    const double resident = double(std::min(per_sm, t.resident));
    return double(per_sm * t.tile.rows * t.tile.cols) * t.cost * (resident + t.hide) / resident;
}

// matmul-like (one reduction, the last two output axes tiled; per operand the dim along one of
// them and the dim along the reduction): the tile of gpu_matmul_tile.
bool plan_matmul(GpuTile& t, const Operation& op, const std::vector<int64_t>& shape,
                 const Target& target, std::optional<GpuMatmulTile> given = std::nullopt) {
    const ComputeOpNode* c = as_compute(op);
    const size_t d = shape.size();
    if (d < 2 || d > 4 || c->reduce_axis.size() != 1 ||
        tensor_reads(c).size() != op_inputs(op).size())
        return false;
    int64_t batch = 1;  // split-K's parts of a batch of products: two batch axes
    for (size_t ax = 0; ax + 2 < d; ++ax) batch *= shape[ax];
    const int64_t m = shape[d - 2], n = shape[d - 1];
    const GpuMatmulTile tile =
        forced_matmul_tile.value_or(given.value_or(gpu_matmul_tile(batch, m, n, target)));
    t.bk = tile.bk;
    t.axes.assign(d, AxisTile{});
    t.axes[d - 2] = AxisTile{tile.rows, tile.row_threads, tile.row_vthreads};
    t.axes[d - 1] = AxisTile{tile.cols, tile.col_threads, tile.col_vthreads};
    const Var k = c->reduce_axis[0].var();
    for (const TensorRead* r : tensor_reads(c)) {
        int kd = dim_using(r, k), td = -1, axis = -1;
        for (int ax : {static_cast<int>(d) - 2, static_cast<int>(d) - 1})
            if (int dd = dim_of(r, c->axis[static_cast<size_t>(ax)].var()); dd >= 0)
                td = dd, axis = ax;
        if (kd < 0 || td < 0) return false;
        t.k_dims.push_back(kd);
        t.tile_dims.push_back(td);
        t.tile_axes.push_back(axis);
    }
    t.matmul = true;
    return true;
}

// The channel axis of a conv's output (NCHW: 1, NHWC: 3): the one axis of the last three that
// some read uses alone (the weight's filter index).
int channel_axis(const ComputeOpNode* c) {
    for (const TensorRead* r : tensor_reads(c)) {
        int used = -1, count = 0;
        for (size_t ax = 1; ax < c->axis.size(); ++ax) {
            int dim = -1;
            if (axis_use(r->indices, c->axis[ax].var(), &dim) != AxisUse::Invariant)
                used = static_cast<int>(ax), ++count;
        }
        if (count == 1) return used;
    }
    return 1;
}

// The input's extent along the dim that output axis `v` indexes, or 0.
int64_t read_extent(const ComputeOpNode* c, const Var& v) {
    for (const TensorRead* r : tensor_reads(c)) {
        int dim = -1;
        const AxisUse use = axis_use(r->indices, v, &dim);
        if (use == AxisUse::Invariant) continue;
        if (use == AxisUse::UnitLast) dim = static_cast<int>(r->indices.size()) - 1;
        if (dim < 0) continue;
        const IntImm* e = r->tensor.shape()[static_cast<size_t>(dim)].as<IntImm>();
        if (e) return e->value;
    }
    return 0;
}

// conv2d (four output axes): a direct convolution in shared-memory tiles (the input's halo and
// the weight), the tile sizes from the model in op/GpuConvTiles.h.
bool plan_conv(GpuTile& t, const ComputeOpNode* c, const std::vector<int64_t>& shape,
               const std::vector<int64_t>& red, const Target& target) {
    if (shape.size() != 4 || has_branch(c)) return false;
    const int ch = channel_axis(c);
    std::vector<size_t> spatial;
    for (size_t ax = 1; ax < 4; ++ax)
        if (static_cast<int>(ax) != ch) spatial.push_back(ax);
    std::vector<int64_t> window;
    for (size_t r = 0; r < red.size(); ++r)
        if (static_cast<int>(r) != t.split) window.push_back(red[r]);
    ConvDims d;
    d.batch = shape[0];
    d.channels_last = ch == 3;
    d.channels = shape[static_cast<size_t>(ch)];
    d.height = shape[spatial[0]];
    d.width = shape[spatial[1]];
    d.in_channels = red[static_cast<size_t>(t.split)];
    d.kh = window.size() > 0 ? window[0] : 1;
    d.kw = window.size() > 1 ? window[1] : 1;
    for (size_t i = 2; i < window.size(); ++i) d.kw *= window[i];
    auto stride = [&](size_t ax, int64_t out, int64_t k) {
        const int64_t in = read_extent(c, c->axis[ax].var());
        return out > 1 && in > k ? std::max<int64_t>(1, (in - k) / (out - 1)) : 1;
    };
    d.stride_h = stride(spatial[0], d.height, d.kh);
    d.stride_w = stride(spatial[1], d.width, d.kw);
    std::optional<ConvTiles> tiles = choose_conv_tiles(d, target);
    if (!tiles) return false;
    t.axes.assign(4, AxisTile{});
    t.axes[static_cast<size_t>(ch)] = AxisTile{tiles->kb, tiles->tk, 1};
    t.axes[spatial[0]] = AxisTile{tiles->ph, tiles->th, 1};
    t.axes[spatial[1]] = AxisTile{tiles->pw, tiles->tw, 1};
    t.bk = tiles->bk;
    t.double_buffer = tiles->double_buffer;
    return true;
}

// The tile of data-reusing op `p` (its consumer `q` computes the epilogue or copies it out), or
// nothing for tiny products and thin reductions (depthwise conv), which keep one thread per
// output.
// The threads of a planned tile, innermost axis first; false for a product too small for them.
bool bind_tile_threads(GpuTile& t, const std::vector<int64_t>& shape) {
    for (size_t ax = 0; ax < shape.size(); ++ax) {
        const AxisTile& at = t.axes[ax];
        if (at.threads > 1 && shape[ax] < at.threads) return false;  // a tiny product
    }
    for (size_t ax = shape.size(); ax-- > 0;)
        if (t.axes[ax].threads > 1) {
            t.thread_extents.push_back(t.axes[ax].threads);
            t.thread_axes.push_back(static_cast<int>(ax));
        }
    return true;
}

std::optional<GpuTile> plan_tile(const DAGAnalysis& a, int p, const Target& target) {
    const Operation& op = a.ops()[static_cast<size_t>(p)];
    const ComputeOpNode* c = as_compute(op);
    const std::vector<int64_t> shape = shape_of(op), red = a.reduction_extents(p);
    if (!c || !constant(shape) || !constant(red) || red.empty()) return std::nullopt;
    GpuTile t;
    t.split = static_cast<int>(std::max_element(red.begin(), red.end()) - red.begin());
    if (red[static_cast<size_t>(t.split)] < 8) return std::nullopt;
    if (!plan_matmul(t, op, shape, target) && !plan_conv(t, c, shape, red, target))
        return std::nullopt;
    if (!bind_tile_threads(t, shape)) return std::nullopt;
    return t;
}

// ---------------------------------------------------------------------------------------------
// Split-K

// The split-K model's terms in microseconds, fitted to 12 products each timed in 5 to 9 part counts
// on an H200 (benchmarks/experiments/matmul_split_k_cuda.py; docs/perf/gpu-matmul-split-k.md).
constexpr int64_t kSplitMaxParts = 16;          // candidates: k in 2..16 parts, and parts of
constexpr int64_t kSplitShortLength = 64;       // this length, the shortest a part may be
constexpr int64_t kSplitStep = 16;              // parts are whole k steps of every tile
constexpr double kUsPerTileUnit = 0.718e-6;     // matmul_tile_time's unit, per step of k
constexpr double kUsPerBlock = 0.374;           // a block's fixed costs (first tiles, stores)
constexpr double kUsSplit = 3.91;               // the summing kernel's launch and tail
constexpr double kUsPerPartialByte = 0.605e-6;  // the partial sums' round trip

// A matmul-like output or epilogue producer (a product or a batch of them) split into parts along
// its reduction (split_k_length): the parts (rfactor, a stage of partial sums [part, (b,) i, j]
// in a global workspace; the last part's sum bounded by k) are tiled as a batch of products, the
// stage itself (found by its DAG op) then sums the parts. Returns the partial sums' tile (its
// producer and caches still to insert), or nothing when it does not pay.
struct SplitK {
    GpuTile tile;
    Operation partials;
};

std::optional<SplitK> split_reduction(Schedule& s, const Operation& op, const Target& target,
                                      std::optional<GpuMatmulTile> tile = std::nullopt) {
    const std::vector<int64_t> shape = shape_of(op), red = reduction_extents(op);
    GpuTile probe;
    if ((shape.size() != 2 && shape.size() != 3) || red.size() != 1 || !constant(shape) ||
        !constant(red) || !plan_matmul(probe, op, shape, target, tile) ||
        !bind_tile_threads(probe, shape))
        return std::nullopt;
    const size_t d = shape.size();
    const int64_t length =
        split_k_length(d == 3 ? shape[0] : 1, shape[d - 2], shape[d - 1], red[0], target);
    if (length <= 0) return std::nullopt;
    const int st = s.stage_of(op);
    const int ko = s.split(st, static_cast<int>(d), length).first;  // leaves: ..., i, j, ko, k
    const int rf = s.rfactor(st, ko, 0);
    SplitK out;
    out.partials = s.stage(rf).op;
    const std::vector<int64_t> rf_shape = shape_of(out.partials);
    TESSEL_CHECK(plan_matmul(out.tile, out.partials, rf_shape, target, tile) &&
                 bind_tile_threads(out.tile, rf_shape))
        << "split-K: the partial sums of " << op->name << " are not a batch of products";
    return out;
}

// The cache stages of a tile: its operands in shared memory (and, matmul-like, in registers).
void insert_tile_caches(Schedule& s, GpuTile& t) {
    const std::vector<Tensor> inputs = op_inputs(t.producer);
    for (const Tensor& in : inputs) {
        int shared = s.cache_read(s.stage_of(in), "shared", {s.stage_of(t.producer)});
        t.shared.push_back(s.stage(shared).op);
        if (t.matmul) {
            int local = s.cache_read(shared, "local", {s.stage_of(t.producer)});
            t.local.push_back(s.stage(local).op);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// conv2d as an implicit GEMM

// The dim of gather `g` (a copy of one tensor read, Schedule::reindex) along which its tensor
// holds consecutive points closest together: the fewest 32-byte sectors for (up to) 32
// consecutive points from the origin. A tile copy walking it innermost has a warp's loads
// coalesced: the pixels of an NCHW input, the channels of an NHWC one, the window and channels of
// an OIHW weight, the output channels of an HWIO one. -1 when `g` is not a plain read.
int coalesced_dim(const Operation& g) {
    const ComputeOpNode* c = as_compute(g);
    const TensorRead* read = c && c->body.size() == 1 ? c->body[0].as<TensorRead>() : nullptr;
    if (!read) return -1;
    const std::vector<int64_t> shape = shape_of(read->tensor.op());
    if (!constant(shape)) return -1;
    const int64_t bytes = read->tensor.dtype().bytes();
    int best = -1;
    double best_ratio = 0;
    for (size_t j = 0; j < c->axis.size(); ++j) {
        const int64_t n = std::min<int64_t>(32, as_const_int(c->axis[j].dom().extent).value_or(1));
        std::set<int64_t> sectors;
        for (int64_t x = 0; x < n; ++x) {
            VarMap at;
            for (size_t d = 0; d < c->axis.size(); ++d)
                at[c->axis[d].var().get()] = make_const(c->axis[d].var().type(), d == j ? x : 0);
            int64_t address = 0;
            for (size_t d = 0; d < read->indices.size(); ++d) {
                auto i = as_const_int(simplify(substitute(read->indices[d], at)));
                if (!i) return -1;
                address = address * shape[d] + *i;
            }
            sectors.insert(address * bytes / 32);
        }
        const double ratio = double(sectors.size()) / double(n);
        if (best < 0 || ratio < best_ratio) best = static_cast<int>(j), best_ratio = ratio;
    }
    return best;
}

constexpr GpuMatmulTile kWindowTile{64, 16, 1, 64, 16, 1, 16};

// conv2d with groups of 1 (four output axes, three reduction axes, a read of the input and one
// of the weight) as a matrix product: Schedule::reindex makes it output channels x output pixels
// (NCHW; pixels x channels for NHWC), the pixels of all images one axis, over input channels x
// window, its operands gathers (im2col, inlined into the shared tiles' copies, so never
// materialised). The product then takes the matmul tiles and split-K of any other (the model's
// choice for its shape), and the conv (or its epilogue `q`) is their consumer, its loops fused
// the same way. Adds the tile (and split-K's sum to `small`); false, the schedule unchanged, for
// other stages.
bool implicit_gemm(Schedule& s, const DAGAnalysis& a, int i, int q, const Target& target,
                   std::vector<GpuTile>& tiles,
                   std::vector<std::pair<Operation, Operation>>& small) {
    const Operation& op = a.ops()[static_cast<size_t>(i)];
    if (forced_conv_kernel == GpuConvKernel::Direct) return false;
    const std::optional<ImplicitGemmLayout> layout = implicit_gemm_layout(op);
    if (!layout) return false;
    Schedule saved = s;
    const int p = s.reindex(s.stage_of(op), layout->order, layout->groups);
    const Operation product = s.stage(p).op;
    const std::vector<Tensor> gathers = op_inputs(product);
    bool gemm = gathers.size() == 2;
    for (const TensorRead* r : tensor_reads(as_compute(product)))
        gemm = gemm && r->indices.size() == 2;  // groups of 1: pixels or channels, and the window
    GpuTile t;
    const std::vector<int64_t> shape = shape_of(product);
    // A window's im2col (3 x 3) is dearer to gather than a 1 x 1 conv's plain rows: 64 x 64
    // tiles of 256 threads, 4 x 4 a thread, spread it widest and were the fastest of eleven
    // tiles on every such ResNet-50 layer but one, within 2 % there (H200, batch 1 and 8:
    // docs/perf/gpu-conv-implicit-gemm.md); 1 x 1 convs take the matmul's model.
    std::optional<GpuMatmulTile> tile;
    if (conv_window(op) > 1) tile = kWindowTile;
    if (!gemm || !plan_matmul(t, product, shape, target, tile) || !bind_tile_threads(t, shape)) {
        s = saved;
        return false;
    }
    Operation consumer = op;
    if (q >= 0) {
        s.compute_inline(p + 1);  // the conv, now a copy out of the product
        consumer = a.ops()[static_cast<size_t>(q)];
    }
    std::optional<SplitK> sk = split_reduction(s, product, target, tile);
    if (sk) {
        t = sk->tile;
        t.producer = s.stage(s.cache_write(s.stage_of(sk->partials), "local")).op;
        t.consumer = sk->partials;
        small.emplace_back(product, consumer);  // the parts' sum, a thread an output
    } else {
        t.producer = product;
        t.consumer = consumer;
        t.consumer_order = layout->consumer_order;
        t.consumer_groups = layout->consumer_groups;
    }
    for (const Tensor& g : gathers) t.copy_inner.push_back(coalesced_dim(g.op()));
    insert_tile_caches(s, t);
    for (const Tensor& g : gathers) s.compute_inline(s.stage_of(g));
    tiles.push_back(t);
    return true;
}

const IterAnnotation kThreadAxes[] = {IterAnnotation::ThreadX, IterAnnotation::ThreadY,
                                      IterAnnotation::ThreadZ};

// The consumer q: [block (the block loops fused), vthreads, threads, per-thread points (the last
// axis' split by 4 and vectorised when matmul-like)]; returns the innermost thread loop's position.
int schedule_tile_consumer(Schedule& s, const GpuTile& t) {
    const size_t d = t.axes.size();
    LoopNest q(s, s.stage_of(t.consumer), numbered("s", d));
    std::vector<std::string> blocks, vthreads, threads, points;
    for (size_t ax = 0; ax < d; ++ax) {
        const std::string n = std::to_string(ax);
        const AxisTile& at = t.axes[ax];
        blocks.push_back("b" + n);
        if (at.block == 1) {
            q.rename("s" + n, "b" + n);
            continue;
        }
        q.split("s" + n, at.block, "b" + n, "p" + n);
        if (at.vthreads > 1) {
            q.split_nparts("p" + n, at.vthreads, "v" + n, "p" + n);
            vthreads.push_back("v" + n);
        }
        if (at.threads > 1) {
            q.split_nparts("p" + n, at.threads, "t" + n, "p" + n);
            threads.push_back("t" + n);
        }
        points.push_back("p" + n);
    }
    std::vector<std::string> order = concat(concat(concat(blocks, vthreads), threads), points);
    q.reorder(order);
    if (t.matmul && t.axes[d - 1].per_thread() % 4 == 0) {
        const std::string last = "p" + std::to_string(d - 1);
        q.split(last, 4, last, "vec");
        q.vectorize("vec");
    }
    for (const std::string& p : points) q.unroll(p);
    q.fuse(blocks, "block");
    q.bind("block", IterAnnotation::BlockX);
    for (const std::string& v : vthreads) q.bind(v, IterAnnotation::VThread);
    for (size_t i = 0; i < threads.size(); ++i)
        q.bind(threads[threads.size() - 1 - i], kThreadAxes[i]);
    return q.pos(threads.back());
}

// The producer p, computed at q's innermost thread loop: [ones, reduction.outer, the other
// reductions, reduction.inner (unrolled), the thread's points (unrolled)]. Returns p's nest.
LoopNest schedule_tile_producer(Schedule& s, const GpuTile& t, int q, int at) {
    const int p = s.stage_of(t.producer);
    if (s.stage(p).scope != StorageScope::Local) s.set_scope(p, StorageScope::Local);
    s.compute_at(p, q, at);
    const size_t d = t.axes.size();
    const size_t e = s.stage(p).leaf.size() - d;
    std::vector<std::string> red = numbered("r", e);
    LoopNest n(s, p, concat(numbered("s", d), red));
    std::vector<std::string> outer, inner;
    for (size_t ax = 0; ax < d; ++ax) {
        const std::string name = "s" + std::to_string(ax);
        if (t.axes[ax].per_thread() > 1) {
            n.split(name, t.axes[ax].per_thread(), name + ".o", name);
            outer.push_back(name + ".o");
            inner.push_back(name);
        } else {
            outer.push_back(name);
        }
    }
    const std::string k = red[static_cast<size_t>(t.split)];
    n.split(k, t.bk, "ko", "ki");
    std::vector<std::string> order = concat(outer, {"ko"});
    for (const std::string& r : red)
        if (r != k) order.push_back(r);
    order.push_back("ki");
    n.reorder(concat(order, inner));
    n.unroll("ki");
    for (const std::string& i : inner) n.unroll(i);
    return n;
}

// A shared tile's copy spread over the block's threads, `vector` consecutive elements a thread
// access, consecutive threads on consecutive elements (of dim `inner` when it is not -1). The
// innermost dim is split by the vector before the dims are fused (tutorial 05's stage_copy): a
// vector's index is then the dim's multiple of 4 plus its lane, which the CUDA code generator
// proves aligned (one 128-bit load); split after the fuse, its element's row and column are a
// division and a remainder of the fused index, and each lane is loaded on its own.
void schedule_tile_copy(Schedule& s, const GpuTile& t, int stage, int64_t vector, int inner) {
    const size_t nd = s.stage(stage).leaf.size();
    std::vector<std::string> dims = numbered("d", nd);
    LoopNest n(s, stage, dims);
    if (inner >= 0 && static_cast<size_t>(inner) + 1 < nd) {  // walk dim `inner` innermost
        std::rotate(dims.begin() + inner, dims.begin() + inner + 1, dims.end());
        n.reorder(dims);
    }
    if (vector > 1 && n.extent(dims.back()) % vector != 0) vector = 1;
    if (vector > 1) n.split(dims.back(), vector, dims.back(), "vec");
    n.fuse(dims, "f");
    int64_t all = 1;
    for (int64_t e : t.thread_extents) all *= e;
    n.split("f", all, "rest", "tt");
    std::vector<std::string> threads = {"tt"};
    for (size_t i = 0; i + 1 < t.thread_extents.size(); ++i) {
        const std::string outer = "tt" + std::to_string(i);
        n.split(threads.back(), t.thread_extents[i], outer, "th" + std::to_string(i));
        threads.back() = "th" + std::to_string(i);
        threads.push_back(outer);
    }
    for (size_t i = 0; i < threads.size(); ++i) n.bind(threads[i], kThreadAxes[i]);
    if (vector > 1) n.vectorize("vec");
}

// matmul-like: operand i's register copy at ki, the thread's points along its tiled dim as
// 128-bit loads; its shared tile stored k-major (the tiled dim innermost, its rows padded by 4
// floats when transposed).
void schedule_register_cache(Schedule& s, const GpuTile& t, size_t i, int p, int ki) {
    const int local = s.stage_of(t.local[i]);
    s.compute_at(local, p, ki);
    const size_t nd = s.stage(local).leaf.size();
    const std::string dim = "d" + std::to_string(t.tile_dims[i]);
    LoopNest n(s, local, numbered("d", nd));
    const int64_t per = t.axes[static_cast<size_t>(t.tile_axes[i])].per_thread();
    n.split(dim, per, dim + ".o", dim);
    if (per % 4 == 0) {
        n.split(dim, 4, dim, "vec");
        n.unroll(dim);
        n.vectorize("vec");
    } else {
        n.unroll(dim);
    }
}

void shared_layout(Schedule& s, const GpuTile& t, size_t i, int shared) {
    const int nd = static_cast<int>(op_output(s.stage(shared).op, 0).ndim());
    const int td = t.tile_dims[i], kd = t.k_dims[i];
    std::vector<int> order;
    for (int dd = 0; dd < nd; ++dd)
        if (dd != td && dd != kd) order.push_back(dd);
    order.push_back(kd);
    order.push_back(td);
    if (kd < td) return;  // already k-major
    s.storage_reorder(shared, order);
    s.storage_align(shared, nd - 2, t.axes[static_cast<size_t>(t.tile_axes[i])].block, 4);
}

void schedule_tile(Schedule& s, const GpuTile& t) {
    if (!t.consumer_order.empty())  // an implicit GEMM's consumer: its loops as the product's
        group_loops(s, s.stage_of(t.consumer), {{}, {}, t.consumer_order, t.consumer_groups});
    const int q = s.stage_of(t.consumer);
    const int at = schedule_tile_consumer(s, t);
    LoopNest pn = schedule_tile_producer(s, t, q, at);
    const int p = pn.stage();
    for (size_t i = 0; i < t.local.size(); ++i) schedule_register_cache(s, t, i, p, pn.pos("ki"));
    for (size_t i = 0; i < t.shared.size(); ++i) {
        const int shared = s.stage_of(t.shared[i]);
        s.compute_at(shared, p, pn.pos("ko"));
        if (t.matmul) shared_layout(s, t, i, shared);
        const int inner = i < t.copy_inner.size() ? t.copy_inner[i] : -1;
        schedule_tile_copy(s, t, shared, t.copy_inner.empty() && t.matmul ? 4 : 1, inner);
        if (t.double_buffer) s.double_buffer(shared);
    }
}

// ---------------------------------------------------------------------------------------------
// One thread per output

// The stage's spatial loops fused and bound to blocks of kThreads threads; the innermost axis
// split by 4 first and vectorised when `vector` and its extent allows. Returns the thread loop's
// position, or -1 when the stage has no spatial loop.
int bind_threads(Schedule& s, int stage, bool vector) {
    const Stage& st = s.stage(stage);
    size_t sp = 0;
    for (int id : st.leaf) sp += st.iters[id].kind == IterKind::Spatial ? 1 : 0;
    if (sp == 0) return -1;
    std::vector<std::string> names = numbered("s", sp);
    LoopNest n(s, stage, concat(names, numbered("r", st.leaf.size() - sp)));
    const int64_t last = n.extent(names.back());
    if (vector && last > 0 && last % 4 == 0) {
        n.split(names.back(), 4, names.back(), "vec");
        n.vectorize("vec");
    }
    n.fuse(names, "f");
    const int64_t total = n.extent("f");
    if (total < 1) return -1;
    n.split("f", std::min(total, kThreads), "bx", "tx");
    n.bind("bx", IterAnnotation::BlockX);
    n.bind("tx", IterAnnotation::ThreadX);
    return n.pos("tx");
}

// Whether an injective stage reads densely along its innermost axis (a vector of it is 128-bit
// accesses, not a gather).
bool dense_innermost(const Stage& st) {
    const ComputeOpNode* c = as_compute(st.op);
    return c && c->reduce_axis.empty() && !c->axis.empty() && op_num_outputs(st.op) == 1 &&
           dense_along(c, c->axis.back().var());
}

// A data-reusing stage too small to tile: one thread per point of its consumer `q`, the product
// in registers.
void schedule_small_product(Schedule& s, int p, int q) {
    int thread = bind_threads(s, q, false);
    if (thread < 0) return;
    if (s.stage(p).scope != StorageScope::Local) s.set_scope(p, StorageScope::Local);
    s.compute_at(p, q, thread);
}

// A product too small to tile whose reduction (one axis, at least kDotRowMin long) every read
// is dense along: each output is a dot product of two contiguous rows, which a warp reads
// coalesced (schedule_row_reduction) where one thread an output would read them serially.
bool dot_rows(const Operation& op) {
    const ComputeOpNode* c = as_compute(op);
    if (!c || op_num_outputs(op) != 1 || c->reduce_axis.size() != 1 ||
        !dense_along(c, c->reduce_axis[0].var()))
        return false;
    const std::optional<int64_t> k = as_const_int(c->reduce_axis[0].dom().extent);
    return k && *k >= kDotRowMin;
}

// A product too small to tile whose outputs are too few to fill the GPU one thread an output
// and whose reduction is long (kSmallSplitMin or more: a matmul of one row reading b k x n, whose
// few threads would each read a column of b in turn): its reduction split into parts (rfactor)
// so that outputs x parts threads about fill the SMs, each part at least kSmallPartMin long, the
// partial sums a thread a point (consecutive threads along the last output axis: coalesced),
// then the stage sums them. False, the schedule unchanged, for others.
bool split_small_product(Schedule& s, const Operation& op, const Target& target) {
    const ComputeOpNode* c = as_compute(op);
    const std::vector<int64_t> shape = shape_of(op), red = reduction_extents(op);
    if (!c || op_num_outputs(op) != 1 || red.size() != 1 || !constant(shape) || !constant(red) ||
        red[0] < kSmallSplitMin)
        return false;
    int64_t outputs = 1;
    for (int64_t e : shape) outputs *= e;
    const int64_t want = int64_t{std::max(1, target.sm_count())} * kSmallThreadsPerSm;
    const int64_t parts = std::min((want + outputs - 1) / outputs, red[0] / kSmallPartMin);
    if (parts < 2) return false;
    const int st = s.stage_of(op);
    const int64_t length = (red[0] + parts - 1) / parts;
    s.rfactor(st, s.split(st, static_cast<int>(shape.size()), length).first, 0);
    return true;
}

bool tiled(const DAGAnalysis& a, int i) {
    return a.has_reduction(i) && a.needs_multi_level_tiling(i) &&
           op_num_outputs(a.ops()[static_cast<size_t>(i)]) == 1 && constant(a.spatial_extents(i)) &&
           constant(a.reduction_extents(i));
}

}  // namespace

Schedule default_schedule_gpu(const std::vector<Tensor>& outputs, const Target& target) {
    Schedule s = create_schedule(outputs);
    DAGAnalysis a(outputs);
    std::vector<bool> inlined(static_cast<size_t>(a.num_ops()), false);
    for (int i = 0; i < a.num_ops(); ++i) inlined[static_cast<size_t>(i)] = a.is_inlinable(i);
    std::vector<RowGroup> groups;
    std::set<int> grouped;
    for (int i = 0; i < a.num_ops(); ++i)
        if (auto g = find_row_group(a, i, inlined)) {
            groups.push_back(*g);
            grouped.insert(g->members.begin(), g->members.end());
        }
    // Tiles: (producer, consumer), the consumer an epilogue or a local cache's copy-out.
    std::vector<GpuTile> tiles;
    std::vector<TensorCorePlan> tensor_core;
    std::vector<std::pair<Operation, Operation>> small;
    for (int i = 0; i < a.num_ops(); ++i) {
        if (!tiled(a, i) || grouped.count(i)) continue;
        const Operation& op = a.ops()[static_cast<size_t>(i)];
        Operation producer = op, consumer;
        // q: the element-wise consumer the tile's epilogue computes; -1 for an output, or for a
        // product whose consumer is not element-wise matched with it (a reduction, a broadcast
        // bias over a batch of one reading index 0): then the product is a kernel of its own,
        // stored, and its consumers read it.
        const int q = a.is_output(i) ? -1 : a.elementwise_consumer(i, inlined);
        if (std::optional<TensorCorePlan> p = plan_tensor_core(s, a, i, q, target)) {
            tensor_core.push_back(*p);
            // Split-K's sum: one thread an output, inside the epilogue's threads when there is
            // one (an output sum is a root reduction, below).
            if (p->split_sum.defined() && p->sum_consumer.defined() && !p->sum_in_kernel)
                small.emplace_back(p->split_sum, p->sum_consumer);
            continue;
        }
        if (std::optional<SplitK> sk = split_reduction(s, op, target)) {
            GpuTile t = sk->tile;
            t.producer = s.stage(s.cache_write(s.stage_of(sk->partials), "local")).op;
            t.consumer = sk->partials;
            insert_tile_caches(s, t);
            tiles.push_back(t);
            // The sum: one thread an output, inside the epilogue's threads when there is one.
            if (q >= 0) small.emplace_back(op, a.ops()[static_cast<size_t>(q)]);
            continue;
        }
        if (implicit_gemm(s, a, i, q, target, tiles, small)) continue;
        std::optional<GpuTile> t = plan_tile(a, i, target);
        // Too few rows to tile and a long reduction that every read is dense along (dense or
        // matmul(transpose_b) of a row or a few): a dot product a warp, as the row reductions
        // (below), its epilogue in a kernel of its own.
        if (!t && dot_rows(op)) continue;
        if (!t) {
            // The partial sums and (as an output) their sum are root reductions: a thread a
            // point (below); the sum of an epilogue's producer is computed in its threads.
            if (split_small_product(s, op, target)) {
                if (q >= 0) small.emplace_back(op, a.ops()[static_cast<size_t>(q)]);
                continue;
            }
        }
        if (q < 0) {
            producer = s.stage(s.cache_write(s.stage_of(op), "local")).op;
            consumer = op;
        } else {
            consumer = a.ops()[static_cast<size_t>(q)];
        }
        if (!t) {
            small.emplace_back(producer, consumer);
            continue;
        }
        t->producer = producer;
        t->consumer = consumer;
        insert_tile_caches(s, *t);
        tiles.push_back(*t);
    }
    for (RowGroup& g : groups) stage_row_input(s, a, g);
    for (int i = 0; i < a.num_ops(); ++i)
        if (inlined[static_cast<size_t>(i)])
            s.compute_inline(s.stage_of(a.ops()[static_cast<size_t>(i)]));

    std::set<const OperationNode*> done;
    for (const RowGroup& g : groups) {
        schedule_row_group(s, a, g);
        for (int m : g.members) done.insert(a.ops()[static_cast<size_t>(m)].get());
    }
    for (const GpuTile& t : tiles) {
        schedule_tile(s, t);
        done.insert(t.producer.get());
        done.insert(t.consumer.get());
    }
    for (const TensorCorePlan& p : tensor_core) {
        schedule_tensor_core(s, p);
        for (const Operation& op :
             {p.a_shared, p.a_frag, p.b_shared, p.b_frag, p.acc, p.store, p.epilogue})
            if (op.defined()) done.insert(op.get());
    }
    for (const auto& [p, q] : small) {
        schedule_small_product(s, s.stage_of(p), s.stage_of(q));
        done.insert(p.get());
        done.insert(q.get());
    }
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        if (as_placeholder(st.op) || st.attach != AttachKind::Root || done.count(st.op.get()) ||
            done.count(st.dag_op.get()))
            continue;
        const int stage = static_cast<int>(i);
        if (!as_compute(st.op)->reduce_axis.empty()) {
            if (!schedule_row_reduction(s, stage)) bind_threads(s, stage, false);
        } else {
            bind_threads(s, stage, dense_innermost(st));
        }
    }
    return s;
}

GpuMatmulTile gpu_matmul_tile(int64_t batch, int64_t m, int64_t n, const Target& target) {
    const int64_t sms = std::max(1, target.sm_count());
    const MatmulTileModel* best = &kMatmulTiles[0];
    for (const MatmulTileModel& t : kMatmulTiles)
        if (matmul_tile_time(t, batch, m, n, sms) < matmul_tile_time(*best, batch, m, n, sms))
            best = &t;
    return best->tile;
}

std::optional<GpuMatmulTile> force_gpu_matmul_tile(std::optional<GpuMatmulTile> tile) {
    std::swap(tile, forced_matmul_tile);
    return tile;
}

std::optional<ImplicitGemmLayout> implicit_gemm_layout(const Operation& op) {
    const ComputeOpNode* c = as_compute(op);
    if (!c || c->axis.size() != 4 || c->reduce_axis.size() != 3 || has_branch(c) ||
        tensor_reads(c).size() != 2 || !constant(shape_of(op)))
        return std::nullopt;
    const int ch = channel_axis(c);
    if (ch != 1 && ch != 3) return std::nullopt;
    ImplicitGemmLayout l;
    l.consumer_order = ch == 1 ? std::vector<int>{1, 0, 2, 3} : std::vector<int>{0, 1, 2, 3};
    l.consumer_groups = ch == 1 ? std::vector<int>{1, 3} : std::vector<int>{3, 1};
    l.order = l.consumer_order;
    l.order.insert(l.order.end(), {4, 5, 6});
    l.groups = l.consumer_groups;
    l.groups.push_back(3);
    return l;
}

int64_t conv_window(const Operation& op) {
    const ComputeOpNode* c = as_compute(op);
    const int ch = channel_axis(c);
    int64_t w = 1;
    for (const IterVar& rv : c->reduce_axis) {
        bool window = false;
        for (const TensorRead* r : tensor_reads(c))
            for (const Expr& e : r->indices)
                for (size_t ax = 1; ax < c->axis.size() && uses_var(e, rv.var()); ++ax)
                    window =
                        window || (static_cast<int>(ax) != ch && uses_var(e, c->axis[ax].var()));
        if (window) w *= as_const_int(rv.dom().extent).value_or(1);
    }
    return w;
}

void group_loops(Schedule& s, int stage, const ImplicitGemmLayout& l) {
    const std::vector<std::string> names = numbered("c", l.consumer_order.size());
    LoopNest n(s, stage, names);
    std::vector<std::string> order;
    for (int d : l.consumer_order) order.push_back(names[static_cast<size_t>(d)]);
    n.reorder(order);
    size_t at = 0;
    for (size_t g = 0; g < l.consumer_groups.size(); ++g) {
        const size_t size = static_cast<size_t>(l.consumer_groups[g]);
        std::vector<std::string> run(order.begin() + static_cast<std::ptrdiff_t>(at),
                                     order.begin() + static_cast<std::ptrdiff_t>(at + size));
        if (size > 1) n.fuse(run, "g" + std::to_string(g));
        at += size;
    }
}

std::optional<int64_t> force_split_k_length(std::optional<int64_t> length) {
    std::swap(length, forced_split_k_length);
    return length;
}

std::optional<GpuConvKernel> force_gpu_conv_kernel(std::optional<GpuConvKernel> kernel) {
    std::swap(kernel, forced_conv_kernel);
    return kernel;
}

namespace {

// The modelled time in microseconds of a batch of m x n products over k in parts of `length`
// (the last part bounded by k; one part: no split) on `sms` multiprocessors, under the tile the
// model gives the parts' batch.
double split_k_time(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t length, int64_t sms) {
    const int64_t parts = (k + length - 1) / length;
    const MatmulTileModel* t = &kMatmulTiles[0];
    for (const MatmulTileModel& c : kMatmulTiles)
        if (matmul_tile_time(c, batch * parts, m, n, sms) <
            matmul_tile_time(*t, batch * parts, m, n, sms))
            t = &c;
    const int64_t tiles = batch * parts * ((m + t->tile.rows - 1) / t->tile.rows) *
                          ((n + t->tile.cols - 1) / t->tile.cols);
    double us = matmul_tile_time(*t, batch * parts, m, n, sms) * double(length) * kUsPerTileUnit +
                double((tiles + sms - 1) / sms) * kUsPerBlock;
    if (parts > 1) us += kUsSplit + double((parts + 1) * batch * m * n * 4) * kUsPerPartialByte;
    return us;
}

}  // namespace

int64_t split_k_length(int64_t batch, int64_t m, int64_t n, int64_t k, const Target& target) {
    if (forced_split_k_length) return *forced_split_k_length < k ? *forced_split_k_length : 0;
    const int64_t sms = std::max(1, target.sm_count());
    if (batch * ((m + 63) / 64) * ((n + 63) / 64) >= 2 * sms) return 0;
    std::vector<int64_t> lengths = {kSplitShortLength};
    for (int64_t parts = 2; parts <= kSplitMaxParts; ++parts)
        lengths.push_back(((k + parts - 1) / parts + kSplitStep - 1) / kSplitStep * kSplitStep);
    int64_t best = k;
    for (int64_t length : lengths)
        if (length >= kSplitShortLength && length < k &&
            split_k_time(batch, m, n, k, length, sms) < split_k_time(batch, m, n, k, best, sms))
            best = length;
    return best < k ? best : 0;
}

}  // namespace tessel::op::internal
