// The built-in sketch rules (Ansor's derivation rules), one small named object each, listed in
// the order they are tried in builtin_sketch_rules() at the bottom. docs/auto_schedule.md shows
// each with a before/after example.
#include <algorithm>

#include "SketchUtil.h"
#include "op/DefaultScheduleGpu.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/space/Sketch.h"
#include "tessel/schedule/TensorIntrin.h"

namespace tessel {

namespace internal {

int64_t root_extent_product(const Stage& st, IterKind kind) {
    int64_t p = 1;
    for (int id : st.root) {
        if (st.iters[id].kind != kind) continue;
        auto e = st.iters[id].const_extent();
        if (!e) return -1;
        p *= *e;
    }
    return p;
}

bool has_reduction_axes(const Stage& st) {
    for (int id : st.root)
        if (st.iters[id].kind == IterKind::Reduction) return true;
    return false;
}

bool reads_at(const TensorRead* r, const Var& row, const Var& col) {
    return r->indices.size() == 2 && r->indices[0].same_as(row) && r->indices[1].same_as(col);
}

int fuse_reduction_loops(Schedule& s, int st) {
    int n = static_cast<int>(s.stage(st).leaf.size()), n_sp = 0;
    for (int id : s.stage(st).leaf) n_sp += s.stage(st).iters[id].kind == IterKind::Spatial;
    if (n - n_sp > 1) {
        std::vector<int> rs;
        for (int k = n_sp; k < n; ++k) rs.push_back(k);
        s.fuse(st, rs);
    }
    return n_sp;
}

std::vector<int> direct_readers(const Schedule& s, int stage) {
    const Operation& op = s.stage(stage).op;
    std::vector<int> out;
    for (int r = 0; r < static_cast<int>(s.stages().size()); ++r) {
        if (s.stage(r).root.empty()) continue;
        for (const Tensor& t : op_inputs(s.stage(r).op))
            if (t.op().same_as(op)) {
                out.push_back(r);
                break;
            }
    }
    return out;
}

}  // namespace internal

namespace {

using internal::insert_sketch_stage;
using Made = std::vector<std::pair<Sketch, int>>;

constexpr int64_t kMaxInnermost = 64;

bool plain(const Sketch& sk, int st) {
    return sk.stages[st].kind == SketchStageKind::Plain;
}

void trace(Sketch& sk, int st, const std::string& what) {
    sk.trace.push_back(sk.schedule.stage(st).name() + ": " + what);
}

bool needs_tiling(const SketchContext& ctx, const Sketch& sk, int st) {
    if (sk.stages[st].write_cache) return true;
    int i = ctx.dag_index(sk.schedule, st);
    return i >= 0 && ctx.dag.needs_multi_level_tiling(i);
}

// The stage of the element-wise consumer `st` can be fused into (a cache stage's is the stage it
// writes), or -1; the consumer must be untouched (a root loop nest without steps).
int fusible_consumer(const SketchContext& ctx, const Sketch& sk, int st) {
    const Schedule& s = sk.schedule;
    int c = -1;
    if (sk.stages[st].write_cache) {
        c = st + 1;
    } else {
        int i = ctx.dag_index(s, st);
        if (i < 0) return -1;
        int op = ctx.dag.elementwise_consumer(i, ctx.inlined(s));
        if (op < 0) return -1;
        for (int k = 0; k < static_cast<int>(s.stages().size()); ++k)
            if (s.stage(k).dag_op.same_as(ctx.dag.ops()[op])) c = k;
    }
    if (c < 0 || !plain(sk, c)) return -1;
    const Stage& cs = s.stage(c);
    if (internal::has_reduction_axes(cs) || cs.leaf != cs.root || cs.attach != AttachKind::Root)
        return -1;
    return c;
}

int64_t cores_times_16(const SketchContext& ctx) {
    return int64_t{16} * std::max(1, ctx.task.hardware().num_cores);
}

// Fuses a fresh stage's reduction loops into one and splits it with an open length (a tile group
// of two levels, the inner at most `max_inner`); returns the number of data-parallel loops
// before it (the split's outer loop is there, its inner loop next).
int split_reduction(Sketch& sk, int st, int64_t max_inner) {
    Schedule& s = sk.schedule;
    int n_sp = internal::fuse_reduction_loops(s, st);
    int64_t extent = *s.stage(st).iters[s.stage(st).leaf[n_sp]].const_extent();
    int step = static_cast<int>(s.steps().size());
    s.split(st, n_sp, 1);
    sk.tiles.push_back(TileGroup{extent, {step}, max_inner, st});
    return n_sp;
}

// --- always_inline ---------------------------------------------------------------------------

RuleCondition inline_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    if (!plain(sk, st)) return RuleCondition::Skip;
    if (sk.stages[st].gather) return RuleCondition::ApplyAndSkipRest;  // into its shared fetch
    int i = ctx.dag_index(sk.schedule, st);
    if (i < 0) return RuleCondition::Skip;
    bool ok = ctx.gpu() ? ctx.dag.is_inlinable(i) : ctx.dag.is_strictly_inlinable(i);
    return ok ? RuleCondition::ApplyAndSkipRest : RuleCondition::Skip;
}

Made inline_apply(const SketchContext&, const Sketch& in, int st) {
    Sketch sk = in;
    sk.schedule.compute_inline(st);
    sk.stages[st].kind = SketchStageKind::Inlined;
    trace(sk, st, "always_inline");
    return {{std::move(sk), st - 1}};
}

// --- rfactor (CPU): a reduction with too little parallelism --------------------------------

RuleCondition rfactor_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    const Stage& s = sk.schedule.stage(st);
    if (!plain(sk, st) || ctx.dag_index(sk.schedule, st) < 0 || !internal::has_reduction_axes(s) ||
        needs_tiling(ctx, sk, st) || s.leaf != s.root)
        return RuleCondition::Skip;
    int64_t space = internal::root_extent_product(s, IterKind::Spatial);
    int64_t reduce = internal::root_extent_product(s, IterKind::Reduction);
    if (space < 0 || reduce < 0) return RuleCondition::Skip;
    // Too little parallelism: fewer rows than cores x 16, each reducing at least 16 x as much.
    return space < cores_times_16(ctx) && reduce >= 16 * space ? RuleCondition::Apply
                                                               : RuleCondition::Skip;
}

Made rfactor_apply(const SketchContext&, const Sketch& in, int st) {
    Made out;
    for (bool inner : {true, false}) {
        Sketch sk = in;
        int n_sp = split_reduction(sk, st, 0);
        sk.schedule.rfactor(st, inner ? n_sp + 1 : n_sp, 0);
        insert_sketch_stage(sk, st);
        trace(sk, st + 1, inner ? "rfactor(inner)" : "rfactor(outer)");
        out.push_back({std::move(sk), st - 1});
    }
    return out;
}

// --- cache_write: a tiled stage with no consumer to fuse into -------------------------------

RuleCondition cache_write_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    if (!plain(sk, st) || sk.stages[st].write_cache || ctx.dag_index(sk.schedule, st) < 0 ||
        !needs_tiling(ctx, sk, st) || fusible_consumer(ctx, sk, st) >= 0)
        return RuleCondition::Skip;
    return ctx.gpu() ? RuleCondition::ApplyAndSkipRest : RuleCondition::Apply;
}

Made cache_write_apply(const SketchContext&, const Sketch& in, int st) {
    Sketch sk = in;
    sk.schedule.cache_write(st, "local");
    insert_sketch_stage(sk, st);
    sk.stages[st].write_cache = true;
    trace(sk, st + 1, "cache_write");
    return {{std::move(sk), st}};
}

// --- multi-level tiling fused with an element-wise consumer ---------------------------------

// Splits the consumer `c`'s axes like producer `st`'s first `level` spatial levels (follow
// splits; the inner levels fused into one loop), reorders them level by level, and computes the
// producer at the consumer's last loop of level `level - 1`.
void fuse_into_consumer(Sketch& sk, int st, int c, int level, int tiles_begin, bool gpu) {
    Schedule& s = sk.schedule;
    int n_sp = static_cast<int>(s.stage(c).leaf.size());
    // The producer's spatial groups were pushed last axis first, after its reduction groups.
    std::vector<const TileGroup*> groups;
    for (size_t g = tiles_begin; g < sk.tiles.size(); ++g) groups.push_back(&sk.tiles[g]);
    int n_rd = static_cast<int>(groups.size()) - n_sp;
    for (int a = n_sp - 1; a >= 0; --a) {
        const TileGroup& g = *groups[n_rd + (n_sp - 1 - a)];
        int levels = static_cast<int>(g.steps.size()) + 1;
        std::vector<int> inner(g.steps.begin() + (level - 1), g.steps.end());
        if (level < levels) s.follow_fused_split(c, a, inner);
        for (int l = level - 1; l >= 1; --l) s.follow_split(c, a, g.steps[l - 1]);
    }
    int per_axis = level + (level < static_cast<int>(groups[n_rd]->steps.size()) + 1 ? 1 : 0);
    std::vector<int> order;
    std::vector<std::vector<int>> levels(level);
    for (int l = 0; l < per_axis; ++l)
        for (int a = 0; a < n_sp; ++a) {
            if (l < level) levels[l].push_back(static_cast<int>(order.size()));
            order.push_back(a * per_axis + l);
        }
    s.reorder(c, order);
    s.compute_at(st, c, levels[level - 1].back());
    if (gpu && s.stage(st).scope != StorageScope::Local) s.set_scope(st, StorageScope::Local);
    sk.stages[c].kind = SketchStageKind::Fused;
    sk.stages[c].levels = levels;
}

RuleCondition fusion_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    if (!plain(sk, st) || !needs_tiling(ctx, sk, st) || fusible_consumer(ctx, sk, st) < 0)
        return RuleCondition::Skip;
    return ctx.gpu() || sk.stages[st].write_cache ? RuleCondition::ApplyAndSkipRest
                                                  : RuleCondition::Apply;
}

void mark_gpu_tiling(Sketch& sk, int st, int tiles_begin, const std::string& structure) {
    SketchStage& info = sk.stages[st];
    int n_sp = static_cast<int>(info.levels.empty() ? 0 : info.levels[0].size());
    int n_groups = static_cast<int>(sk.tiles.size()) - tiles_begin;
    info.thread_steps.clear();
    for (int g = n_groups - n_sp; g < n_groups; ++g)
        info.thread_steps.push_back(sk.tiles[tiles_begin + g].steps.at(1));  // level 2
    // The outer reduction tile: the last loop of the first R level; the innermost reduction loop
    // (read caches): the last loop of the last R level.
    int pos = 0, first_r_end = -1, last_r_end = -1;
    int n_rd = n_groups - n_sp;
    for (char c : structure) {
        pos += c == 'S' ? n_sp : n_rd;
        if (c != 'R') continue;
        if (first_r_end < 0) first_r_end = pos - 1;
        last_r_end = pos - 1;
    }
    info.fetch_at = n_rd > 0 ? first_r_end : -1;
    info.read_cache_at = n_rd > 0 ? last_r_end : -1;
}

Made fusion_apply(const SketchContext& ctx, const Sketch& in, int st) {
    Made out;
    std::vector<int> fusion_levels = ctx.gpu() ? std::vector<int>{3} : std::vector<int>{1, 2};
    for (int level : fusion_levels) {
        Sketch sk = in;
        int c = fusible_consumer(ctx, sk, st);
        int begin = static_cast<int>(sk.tiles.size());
        const std::string& structure = ctx.gpu() ? ctx.gpu_tiling : ctx.cpu_tiling;
        tile_stage(sk, st, structure, kMaxInnermost);
        if (ctx.gpu()) mark_gpu_tiling(sk, st, begin, structure);
        fuse_into_consumer(sk, st, c, level, begin, ctx.gpu());
        trace(sk, st, "multi_level_tiling_with_fusion(" + std::to_string(level) + ")");
        out.push_back({std::move(sk), st - 1});
    }
    return out;
}

// --- multi-level tiling -----------------------------------------------------------------------

RuleCondition tiling_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    return plain(sk, st) && needs_tiling(ctx, sk, st) ? RuleCondition::ApplyAndSkipRest
                                                      : RuleCondition::Skip;
}

Made tiling_apply(const SketchContext& ctx, const Sketch& in, int st) {
    Sketch sk = in;
    int begin = static_cast<int>(sk.tiles.size());
    const std::string& structure = ctx.gpu() ? ctx.gpu_tiling : ctx.cpu_tiling;
    tile_stage(sk, st, structure, kMaxInnermost);
    if (ctx.gpu()) mark_gpu_tiling(sk, st, begin, structure);
    trace(sk, st, "multi_level_tiling");
    return {{std::move(sk), st - 1}};
}

// --- GPU: cache_read into shared memory for the producers of a tiled stage ------------------

// A tiled stage that reads `st` (directly or through inlined stages) and fetches its producers
// into shared memory, with the stages that read `st` on its behalf; -1 when there is none.
int tiled_reader(const Sketch& sk, int st, std::vector<int>& readers) {
    const Schedule& s = sk.schedule;
    for (int r : internal::direct_readers(s, st)) {
        int consumer = r;
        while (sk.stages[consumer].kind == SketchStageKind::Inlined) {
            std::vector<int> next = internal::direct_readers(s, consumer);
            if (next.size() != 1) break;
            consumer = next[0];
        }
        const SketchStage& info = sk.stages[consumer];
        if (info.kind == SketchStageKind::Tiled && info.fetch_at >= 0 &&
            s.stage(consumer).attach != AttachKind::Inlined) {
            readers = {r};
            return consumer;
        }
    }
    return -1;
}

RuleCondition cache_read_condition(const SketchContext&, const Sketch& sk, int st) {
    SketchStageKind k = sk.stages[st].kind;
    if (k != SketchStageKind::Plain && k != SketchStageKind::Placeholder)
        return RuleCondition::Skip;
    std::vector<int> readers;
    return tiled_reader(sk, st, readers) >= 0 ? RuleCondition::ApplyAndSkipRest
                                              : RuleCondition::Skip;
}

Made cache_read_apply(const SketchContext&, const Sketch& in, int st) {
    Sketch sk = in;
    std::vector<int> readers;
    int consumer = tiled_reader(sk, st, readers);
    int shared = sk.schedule.cache_read(st, "shared", readers);
    insert_sketch_stage(sk, shared);
    ++consumer;
    sk.schedule.compute_at(shared, consumer, sk.stages[consumer].fetch_at);
    SketchStage& info = sk.stages[shared];
    info.kind = SketchStageKind::SharedFetch;
    info.thread_steps = sk.stages[consumer].thread_steps;
    trace(sk, shared, "cache_read_shared");
    return {{std::move(sk), st}};  // the producer itself goes on through the rules
}

// --- GPU: conv2d as an implicit GEMM ---------------------------------------------------------

// A conv2d the GPU default serves with an implicit GEMM (op::internal::implicit_gemm_layout):
// a branch beside the direct convolution's sketches.
RuleCondition implicit_gemm_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    const Stage& s = sk.schedule.stage(st);
    if (!ctx.gpu() || !plain(sk, st) || s.leaf != s.root || s.attach != AttachKind::Root ||
        ctx.dag_index(sk.schedule, st) < 0 || !needs_tiling(ctx, sk, st))
        return RuleCondition::Skip;
    return op::internal::implicit_gemm_layout(s.op) ? RuleCondition::Apply : RuleCondition::Skip;
}

// The conv reindexed into a matrix product (the default's implicit GEMM, with open tiles): the
// gathers (marked, inlined into their shared fetches by always_inline once cache_read_shared
// made them), the product multi-level tiled and fused into the conv's copy, or into its
// element-wise consumer with the copy inlined, whose loops are first grouped as the product's
// axes. No sketch for a grouped conv (a gather of three dims).
Made implicit_gemm_apply(const SketchContext& ctx, const Sketch& in, int st) {
    Sketch sk = in;
    Schedule& s = sk.schedule;
    const int i = ctx.dag_index(s, st);
    const op::internal::ImplicitGemmLayout l = *op::internal::implicit_gemm_layout(s.stage(st).op);
    const int product = s.reindex(st, l.order, l.groups);
    for (int k = st; k <= product; ++k) insert_sketch_stage(sk, k);
    for (int k = st; k < product; ++k) {
        if (op_output(s.stage(k).op, 0).ndim() != 2) return {};
        sk.stages[k].gather = true;
    }
    int c = product + 1;  // the conv, now a copy out of the product
    if (int q = ctx.dag.elementwise_consumer(i, ctx.inlined(s)); q >= 0) {
        int e = -1;
        for (int k = 0; k < static_cast<int>(s.stages().size()); ++k)
            if (s.stage(k).dag_op.same_as(ctx.dag.ops()[static_cast<size_t>(q)])) e = k;
        if (e < 0 || !plain(sk, e) || s.stage(e).leaf != s.stage(e).root ||
            s.stage(e).attach != AttachKind::Root)
            return {};
        s.compute_inline(c);
        sk.stages[c].kind = SketchStageKind::Inlined;
        c = e;
    }
    op::internal::group_loops(s, c, l);
    const int begin = static_cast<int>(sk.tiles.size());
    tile_stage(sk, product, ctx.gpu_tiling, kMaxInnermost);
    mark_gpu_tiling(sk, product, begin, ctx.gpu_tiling);
    fuse_into_consumer(sk, product, c, 3, begin, true);
    trace(sk, product, "implicit_gemm");
    return {{std::move(sk), product - 1}};
}

// --- GPU: split-K ------------------------------------------------------------------------------

// The length of the parts the GPU default splits a matrix product's (or a batch's) reduction
// into (op::internal::split_k_length: where its tiles leave SMs idle), or 0.
int64_t split_k_length(const SketchContext& ctx, const Sketch& sk, int st) {
    const Stage& s = sk.schedule.stage(st);
    if (!ctx.gpu() || !plain(sk, st) || s.leaf != s.root || s.attach != AttachKind::Root ||
        ctx.dag_index(sk.schedule, st) < 0 || !needs_tiling(ctx, sk, st))
        return 0;
    const ComputeOpNode* c = as_compute(s.op);
    if (!c || op_num_outputs(s.op) != 1 || c->reduce_axis.size() != 1 ||
        (c->axis.size() != 2 && c->axis.size() != 3))
        return 0;
    std::vector<int64_t> e;
    for (const IterVar& iv : c->axis) e.push_back(as_const_int(iv.dom().extent).value_or(0));
    const int64_t k = as_const_int(c->reduce_axis[0].dom().extent).value_or(0);
    const size_t d = e.size();
    if (k <= 0 || std::find(e.begin(), e.end(), 0) != e.end()) return 0;
    return op::internal::split_k_length(d == 3 ? e[0] : 1, e[d - 2], e[d - 1], k,
                                        ctx.task.target());
}

RuleCondition split_k_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    return split_k_length(ctx, sk, st) > 0 ? RuleCondition::Apply : RuleCondition::Skip;
}

// The default's split-K with open tiles: the reduction split into the default's parts (rfactor:
// a stage of partial sums [part, (b,) i, j]), the partial sums computed in registers, multi-level
// tiled and fused into their copy-out as a batch of products; the stage itself then sums the
// parts (bound to threads by the annotation, its element-wise consumer apart).
Made split_k_apply(const SketchContext& ctx, const Sketch& in, int st) {
    Sketch sk = in;
    Schedule& s = sk.schedule;
    const int64_t length = split_k_length(ctx, sk, st);
    const int d = static_cast<int>(s.stage(st).root.size()) - 1;
    const int rf = s.rfactor(st, s.split(st, d, length).first, 0);
    insert_sketch_stage(sk, rf);
    s.cache_write(rf, "local");  // the partial sums' registers at rf, their copy-out at rf + 1
    insert_sketch_stage(sk, rf);
    sk.stages[rf].write_cache = true;
    const int begin = static_cast<int>(sk.tiles.size());
    tile_stage(sk, rf, ctx.gpu_tiling, kMaxInnermost);
    mark_gpu_tiling(sk, rf, begin, ctx.gpu_tiling);
    fuse_into_consumer(sk, rf, rf + 1, 3, begin, true);
    trace(sk, rf, "split_k");
    return {{std::move(sk), rf - 1}};
}

// --- GPU: cross-thread reduction ----------------------------------------------------------------

RuleCondition cross_thread_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    const Stage& s = sk.schedule.stage(st);
    if (!plain(sk, st) || !internal::has_reduction_axes(s) || s.leaf != s.root)
        return RuleCondition::Skip;
    int64_t space = internal::root_extent_product(s, IterKind::Spatial);
    int64_t reduce = internal::root_extent_product(s, IterKind::Reduction);
    int64_t warp = std::max(1, ctx.task.hardware().warp_size);
    if (space < 0 || reduce < warp) return RuleCondition::Skip;
    // A stage without data reuse (a row reduction) may also read its rows with a block each,
    // coalesced, however many rows there are: a branch, the one-thread-per-row sketch stays.
    bool small_space = space <= warp * 4 || !needs_tiling(ctx, sk, st);
    return small_space ? RuleCondition::Apply : RuleCondition::Skip;
}

Made cross_thread_apply(const SketchContext& ctx, const Sketch& in, int st) {
    Sketch sk = in;
    split_reduction(sk, st, ctx.task.hardware().max_threads_per_block);
    sk.stages[st].kind = SketchStageKind::CrossThreadReduction;
    sk.stages[st].reduction_tile = static_cast<int>(sk.tiles.size()) - 1;
    trace(sk, st, "cross_thread_reduction");
    return {{std::move(sk), st - 1}};
}

// --- skip ---------------------------------------------------------------------------------------

RuleCondition skip_condition(const SketchContext&, const Sketch&, int) {
    return RuleCondition::ApplyAndSkipRest;
}

Made skip_apply(const SketchContext&, const Sketch& sk, int st) {
    return {{sk, st - 1}};
}

}  // namespace

std::vector<SketchRule> builtin_sketch_rules(const Target& target) {
    SketchRule always_inline{"always_inline", inline_condition, inline_apply};
    SketchRule cache_write{"cache_write", cache_write_condition, cache_write_apply};
    SketchRule fusion{"multi_level_tiling_with_fusion", fusion_condition, fusion_apply};
    SketchRule tiling{"multi_level_tiling", tiling_condition, tiling_apply};
    SketchRule skip{"skip", skip_condition, skip_apply};
    if (target.is_gpu())
        return {internal::wgmma_rule(),
                internal::tensor_core_rule(),
                {"implicit_gemm", implicit_gemm_condition, implicit_gemm_apply},
                {"split_k", split_k_condition, split_k_apply},
                {"cache_read_shared", cache_read_condition, cache_read_apply},
                internal::read_cache_rule(),
                internal::row_fetch_rule(),
                always_inline,
                internal::row_block_rule(),
                internal::row_reduction_rule(),
                {"cross_thread_reduction", cross_thread_condition, cross_thread_apply},
                cache_write,
                fusion,
                tiling,
                skip};
    std::vector<SketchRule> cpu = {always_inline};
    // A CPU with a dot-product unit (VNNI, AVX512-BF16) has the rule that tiles on it.
    if (cpu_dot_intrin_for(target, UInt(8), Int(8), Int(32)) ||
        cpu_dot_intrin_for(target, BFloat(16), BFloat(16), Float(32)))
        cpu.push_back(internal::cpu_dot_rule());
    cpu.push_back(internal::blocked_rule());
    for (SketchRule r : {SketchRule{"rfactor", rfactor_condition, rfactor_apply}, cache_write,
                         fusion, tiling, skip})
        cpu.push_back(std::move(r));
    return cpu;
}

}  // namespace tessel
