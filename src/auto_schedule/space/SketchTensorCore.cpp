// The GPU tensor-core sketch rule, multi_level_tiling_tensor_core (MetaSchedule's
// MultiLevelTilingTensorCore in Ansor's sketch form): a GEMM stage whose body is a declared mma
// intrinsic's pattern is scheduled as tutorials/07_tensor_core_gemm.py step 2 with open tile
// lengths. Annotation (AnnotateTensorCore.cpp) fills in the tiles, pads and copies the shared
// tiles, and chooses their pipelining (Annotate.cpp). docs/auto_schedule.md explains the choices.
//
// On sm_90a the Hopper rule, multi_level_tiling_wgmma, comes first and leaves the GEMM to this one
// too: tutorials/08_hopper_gemm.py step 4 (wgmma fed by TMA on mbarriers, a persistent kernel)
// with the block tile (64 or 128 rows: one or two consumer warp groups; 64, 128 or 256 columns)
// a sketch each, the blocks' order (block-row groups) a tile group; annotation chooses the
// pipeline's depth and the producer warp group (warp_specialize).
#include <optional>

#include "SketchUtil.h"
#include "op/DefaultScheduleTensorCore.h"
#include "tessel/auto_schedule/space/Sketch.h"
#include "tessel/schedule/TensorIntrin.h"

namespace tessel::internal {

namespace {

// At most this many 16-row (16-column) fragments per warp along m (n), and k fragments per shared
// tile: warp tiles up to 128 x 128 (the accumulator check in annotation rejects the large ones),
// shared tiles up to 128 deep in k for 16-bit inputs.
constexpr int64_t kMaxFragments = 8;
// The wgmma sketch's k tile: 64 16-bit elements, the 128-byte rows TMA's swizzle fills.
constexpr int64_t kWgmmaK = 64;

// The intrinsics of one input type: the mma and its k, the shared -> fragment copies, and the
// columns of n the B copy loads at once (ldmatrix .x4.trans: two B fragments).
struct TensorCoreIntrins {
    const char* mma;
    int64_t kk;
    const char* load_a;
    const char* load_b;
    int64_t n_unit;
};

// What the rule needs of a stage it applies to: the intrinsics and the stages of A and B.
struct TensorCoreGemm {
    TensorCoreIntrins in;
    int a = -1, b = -1;
};

std::optional<TensorCoreIntrins> intrins_for(const SketchContext& ctx, Type t) {
    if (t == Float(16))
        return TensorCoreIntrins{"mma_m16n8k16_f16", 16, "ldmatrix_a", "ldmatrix_b_trans_x4", 16};
    if (t == BFloat(16))
        return TensorCoreIntrins{"mma_m16n8k16_bf16", 16, "ldmatrix_a", "ldmatrix_b_trans_x4", 16};
    if (t == Float(32) && ctx.tensor_core_tf32)
        return TensorCoreIntrins{"mma_m16n8k8_tf32", 8, "load_a8", "load_b8", 8};
    return std::nullopt;
}

int stage_of(const Schedule& s, const Tensor& t) {
    for (int k = 0; k < static_cast<int>(s.stages().size()); ++k)
        if (s.stage(k).op.same_as(t.op())) return k;
    return -1;
}

// The stage as a tensor-core GEMM: C[i, j] = sum_k A[i, k] * B[k, j] (each read converted to
// float32 for 16-bit inputs) over two distinct placeholders A, B of a type with intrinsics,
// float32 output, m, n, k multiples of the intrinsics' tile (tensorize needs whole tiles), a
// cuda target of sm_80 or newer; nullopt otherwise.
std::optional<TensorCoreGemm> match_gemm(const SketchContext& ctx, const Sketch& sk, int st) {
    const Schedule& s = sk.schedule;
    const Stage& stage = s.stage(st);
    if (!ctx.gpu() || ctx.task.target().compute_capability() < 80 ||
        sk.stages[st].kind != SketchStageKind::Plain || ctx.dag_index(s, st) < 0 ||
        stage.leaf != stage.root || stage.attach != AttachKind::Root)
        return std::nullopt;
    const ComputeOpNode* c = as_compute(stage.op);
    if (!c || c->axis.size() != 2 || c->reduce_axis.size() != 1 || c->body.size() != 1 ||
        c->body[0].type() != Float(32))
        return std::nullopt;
    std::vector<Tensor> inputs = op_inputs(stage.op);
    if (inputs.size() != 2 || !as_placeholder(inputs[0].op()) || !as_placeholder(inputs[1].op()))
        return std::nullopt;
    std::optional<TensorCoreIntrins> in = intrins_for(ctx, inputs[0].dtype());
    if (!in || inputs[1].dtype() != inputs[0].dtype()) return std::nullopt;
    std::vector<MatchedRead> reads;
    if (!match_tensor_intrin(*find_tensor_intrin(in->mma), c->body[0], Float(32), &reads).empty() ||
        reads.size() != 2)
        return std::nullopt;
    const Var &i = c->axis[0].var(), &j = c->axis[1].var(), &k = c->reduce_axis[0].var();
    if (!reads_at(reads[0].stage, i, k) || !reads_at(reads[1].stage, k, j)) return std::nullopt;
    auto extent = [](const IterVar& v) { return as_const_int(v.dom().extent).value_or(0); };
    int64_t m = extent(c->axis[0]), n = extent(c->axis[1]), k_len = extent(c->reduce_axis[0]);
    if (m <= 0 || n <= 0 || k_len <= 0 || m % 16 != 0 || n % in->n_unit != 0 || k_len % in->kk != 0)
        return std::nullopt;
    return TensorCoreGemm{*in, stage_of(s, reads[0].stage->tensor),
                          stage_of(s, reads[1].stage->tensor)};
}

RuleCondition tensor_core_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    return match_gemm(ctx, sk, st) ? RuleCondition::ApplyAndSkipRest : RuleCondition::Skip;
}

// Inserts the caches: A.shared, A.shared.warp, B.shared, B.shared.warp and C.warp (without
// `fragments`, wgmma's: A.shared, B.shared and C.warp). Returns their indices {as, af, bs, bf, cf}
// ({as, bs, cf}); `c` becomes the output's new index.
std::vector<int> insert_caches(Sketch& sk, int a, int b, int& c, bool fragments = true) {
    Schedule& s = sk.schedule;
    std::vector<int*> moving = {&a, &b, &c};
    std::vector<int> made;
    auto inserted = [&](int at) {
        insert_sketch_stage(sk, at);
        for (int* p : moving)
            if (*p >= at) ++*p;
        for (int& m : made)
            if (m >= at) ++m;
        made.push_back(at);
    };
    inserted(s.cache_read(a, "shared", {c}));  // A.shared
    if (fragments) inserted(s.cache_read(made[0], "warp", {c}));
    inserted(s.cache_read(b, "shared", {c}));  // B.shared
    if (fragments) inserted(s.cache_read(made[2], "warp", {c}));
    int cf = s.cache_write(c, "warp");
    insert_sketch_stage(sk, cf);
    for (int& m : made)
        if (m >= cf) ++m;
    c = cf + 1;
    made.push_back(cf);
    return made;
}

// The output's loops: [blocks m, blocks n, warps m (threadIdx.z), warps n (threadIdx.y),
// fragments m, fragments n, 16-column halves, 16 x 8 store_c]; returns the m and n tile groups.
std::pair<TileGroup, TileGroup> tile_output(Sketch& sk, int c, const TensorCoreIntrins& in) {
    Schedule& s = sk.schedule;
    s.split(c, 1, in.n_unit);                                 // [i, jo, jn]
    s.split(c, 2, 8);                                         // [i, jo, j2, jj]
    s.split(c, 0, 16);                                        // [io, ii, jo, j2, jj]
    TileGroup gj = split_levels(sk, c, 2, 3, kMaxFragments);  // [io, ii, bj, wj, fj, j2, jj]
    TileGroup gi = split_levels(sk, c, 0, 3, kMaxFragments);  // [bi, wi, fi, ii, bj, ...]
    s.reorder(c, {0, 4, 1, 5, 2, 6, 7, 3, 8});
    s.bind(c, 0, IterAnnotation::BlockY);
    s.bind(c, 1, IterAnnotation::BlockX);
    s.bind(c, 2, IterAnnotation::ThreadZ);
    s.bind(c, 3, IterAnnotation::ThreadY);
    for (int pos : {4, 5, 6}) s.unroll(c, pos);
    s.tensorize(c, 7, "store_c");
    return {gi, gj};
}

// The accumulator at the output's warp loop: [k shared tiles, k fragments, fragments m, n, mma];
// returns the k tile group.
TileGroup tile_accumulator(Sketch& sk, int cf, int c, const TensorCoreIntrins& in) {
    Schedule& s = sk.schedule;
    s.compute_at(cf, c, 3);
    s.split(cf, 2, in.kk);                                     // [ci, cj, ko, ck]
    s.split(cf, 1, 8);                                         // [ci, fj, cj, ko, ck]
    s.split(cf, 0, 16);                                        // [fi, ci, fj, cj, ko, ck]
    TileGroup gk = split_levels(sk, cf, 4, 2, kMaxFragments);  // [fi, ci, fj, cj, ko, ki, ck]
    s.reorder(cf, {4, 5, 0, 2, 1, 3, 6});
    for (int pos : {1, 2, 3}) s.unroll(cf, pos);
    s.tensorize(cf, 4, in.mma);
    return gk;
}

// The warp fragments at the accumulator's k-fragment loop: A's 16-row fragments, B's fragments
// n_unit columns at a time (B is k-major).
void tile_fragments(Sketch& sk, int af, int bf, int cf, const TensorCoreIntrins& in) {
    Schedule& s = sk.schedule;
    s.compute_at(af, cf, 1);
    s.split(af, 0, 16);
    s.unroll(af, 0);
    s.tensorize(af, 1, in.load_a);
    s.compute_at(bf, cf, 1);
    s.split(bf, 1, in.n_unit);
    s.reorder(bf, {1, 0, 2});
    s.unroll(bf, 0);
    s.tensorize(bf, 1, in.load_b);
}

std::vector<std::pair<Sketch, int>> tensor_core_apply(const SketchContext& ctx, const Sketch& in,
                                                      int st) {
    TensorCoreGemm gemm = *match_gemm(ctx, in, st);
    Sketch sk = in;
    int c = st;
    std::vector<int> caches = insert_caches(sk, gemm.a, gemm.b, c);
    const int as = caches[0], af = caches[1], bs = caches[2], bf = caches[3], cf = caches[4];
    auto [gi, gj] = tile_output(sk, c, gemm.in);
    TileGroup gk = tile_accumulator(sk, cf, c, gemm.in);
    tile_fragments(sk, af, bf, cf, gemm.in);
    for (int fetch : {as, bs}) {
        sk.schedule.compute_at(fetch, cf, 0);
        sk.stages[fetch].kind = SketchStageKind::TensorCoreFetch;
        sk.stages[fetch].thread_steps = {gj.steps[0], gi.steps[0]};  // warps along n, m
    }
    int first = static_cast<int>(sk.tiles.size());
    sk.tiles.push_back(gi);
    sk.tiles.push_back(gj);
    sk.tiles.push_back(gk);
    for (int t : {af, bf, cf, c}) sk.stages[t].kind = SketchStageKind::TensorCore;
    sk.stages[c].tensor_core_tiles = {first, first + 1, first + 2};
    sk.stages[c].tensor_core_n = gemm.in.n_unit;
    sk.trace.push_back(sk.schedule.stage(c).name() + ": multi_level_tiling_tensor_core");
    return {{std::move(sk), cf - 1}};
}

// The GEMM as the Hopper rule takes it: an sm_90a target, 16-bit inputs (wgmma_m64n<N>k16), m, n
// and k multiples of 64 (whole tiles of 64 x 64 at least, whole k tiles of 64; the operands'
// rows a multiple of 16 bytes, as TMA fetches them: they are kernel arguments).
std::optional<TensorCoreGemm> match_wgmma(const SketchContext& ctx, const Sketch& sk, int st) {
    if (ctx.task.target().arch() != "sm_90a") return std::nullopt;
    std::optional<TensorCoreGemm> g = match_gemm(ctx, sk, st);
    if (!g || g->in.kk != 16) return std::nullopt;
    const ComputeOpNode* c = as_compute(sk.schedule.stage(st).op);
    for (const IterVar& v : {c->axis[0], c->axis[1], c->reduce_axis[0]})
        if (as_const_int(v.dom().extent).value_or(0) % kWgmmaK != 0) return std::nullopt;
    return g;
}

RuleCondition wgmma_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    return match_wgmma(ctx, sk, st) ? RuleCondition::Apply : RuleCondition::Skip;
}

// The output's loops (tutorial 08 step 4): [blocks (blockIdx.x), tiles of a block in turn, warp
// groups of 64 rows (threadIdx.z), warps of 16 rows (threadIdx.y), 8-column fragments, store_c].
// The tiles are numbered `group` block rows first (the tile group returned), then split among
// persistent_blocks blocks.
TileGroup wgmma_output(Sketch& sk, int c, int64_t bm, int64_t bn, int64_t tiles,
                       const Target& target) {
    Schedule& s = sk.schedule;
    s.split(c, 0, bm);                               // [bi, i, j]
    s.split(c, 1, 64);                               // [bi, g, i, j]
    s.split(c, 2, 16);                               // [bi, g, w, i16, j]
    s.split(c, 4, bn);                               // [bi, g, w, i16, bj, j]
    s.split(c, 5, 8);                                // [bi, g, w, i16, bj, fj, j8]
    TileGroup group = split_levels(sk, c, 0, 2, 0);  // [bg, bi, g, w, i16, bj, fj, j8]
    s.reorder(c, {0, 5, 1, 2, 3, 6, 4, 7});          // [bg, bj, bi, g, w, fj, i16, j8]
    s.fuse(c, {0, 1, 2});                            // [t, g, w, fj, i16, j8]
    s.split(c, 0, op::internal::persistent_blocks(tiles, target));  // [tt, b, g, ...]
    s.reorder(c, {1, 0, 2, 3, 4, 5, 6});                            // [b, tt, g, w, fj, i16, j8]
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 2, IterAnnotation::ThreadZ);
    s.bind(c, 3, IterAnnotation::ThreadY);
    s.unroll(c, 4);
    s.tensorize(c, 5, "store_c");
    return group;
}

// The accumulator at the output's warp loop: [k tiles of 64, 16-deep steps (unrolled), the
// warp's 16 x bn wgmma]; A's and B's shared tiles at its k-tile loop, swizzled (B's [k][n] tile in
// column panels of 64: [bn / 64][64][64]), fetched by TMA.
void wgmma_accumulator(Sketch& sk, int cf, int c, int as, int bs, const std::string& intrin) {
    Schedule& s = sk.schedule;
    s.compute_at(cf, c, 3);
    s.split(cf, 2, kWgmmaK);         // [ci, cj, ko, ck]
    s.split(cf, 3, 16);              // [ci, cj, ko, ki, kk]
    s.reorder(cf, {2, 3, 0, 1, 4});  // [ko, ki, ci, cj, kk]
    s.unroll(cf, 1);
    s.tensorize(cf, 2, intrin);
    for (int tile : {as, bs}) s.compute_at(tile, cf, 0);
    s.storage_split(bs, 1, 64);
    s.storage_reorder(bs, {1, 0, 2});
    for (int tile : {as, bs}) {
        s.storage_swizzle(tile);
        s.tma(tile);
    }
}

std::vector<std::pair<Sketch, int>> wgmma_apply(const SketchContext& ctx, const Sketch& in,
                                                int st) {
    TensorCoreGemm gemm = *match_wgmma(ctx, in, st);
    const ComputeOpNode* op = as_compute(in.schedule.stage(st).op);
    const int64_t m = *as_const_int(op->axis[0].dom().extent);
    const int64_t n = *as_const_int(op->axis[1].dom().extent);
    const Type type = op_inputs(in.schedule.stage(st).op).at(0).dtype();
    std::vector<std::pair<Sketch, int>> out;
    for (int64_t bm : {128, 64}) {
        for (int64_t bn : {256, 128, 64}) {
            if (m % bm != 0 || n % bn != 0) continue;
            Sketch sk = in;
            int c = st;
            std::vector<int> caches = insert_caches(sk, gemm.a, gemm.b, c, false);
            const int as = caches[0], bs = caches[1], cf = caches[2];
            TileGroup group = wgmma_output(sk, c, bm, bn, (m / bm) * (n / bn), ctx.task.target());
            wgmma_accumulator(sk, cf, c, as, bs, wgmma_intrin_name(bn, type, false));
            sk.tiles.push_back(group);
            for (int t : {cf, c}) sk.stages[t].kind = SketchStageKind::TensorCore;
            for (int t : {as, bs}) sk.stages[t].kind = SketchStageKind::WgmmaFetch;
            sk.trace.push_back(sk.schedule.stage(c).name() + ": multi_level_tiling_wgmma " +
                               std::to_string(bm) + "x" + std::to_string(bn));
            out.emplace_back(std::move(sk), cf - 1);
        }
    }
    return out;
}

}  // namespace

SketchRule tensor_core_rule() {
    return {"multi_level_tiling_tensor_core", tensor_core_condition, tensor_core_apply};
}

SketchRule wgmma_rule() {
    return {"multi_level_tiling_wgmma", wgmma_condition, wgmma_apply};
}

}  // namespace tessel::internal
