// The CPU dot-product sketch rule, multi_level_tiling_cpu_dot: a GEMM stage whose body is a CPU
// dot intrinsic's product (uint8 x int8 on VNNI, bfloat16 on AVX512-BF16: cpu_dot_intrin_for)
// is scheduled as the operator library's default GEMM on the dot path (src/op/DefaultSchedule.cpp,
// docs/operators.md), with open tile lengths:
//   output q: [j blocks, i tiles, panels of a block, rows of a tile, vectors of a tile, lanes]
//   accumulator p at q's panel loop: [k / group, rows (unrolled), vectors (unrolled), lanes, k %
//   group], the last two tensorized
//   B packed at q's block loop: storage [j / lanes][k / group][j % lanes][k % group]
// Annotation (AnnotateCpuDot.cpp) chooses the parallel loop (the blocks or the row tiles) and
// rejects tiles whose accumulators overflow the vector registers. docs/auto_schedule.md.
#include <optional>

#include "SketchUtil.h"
#include "tessel/auto_schedule/space/Sketch.h"
#include "tessel/schedule/TensorIntrin.h"

namespace tessel::internal {

namespace {

// Vectors of columns a tile holds at most (with 12 rows: 48 accumulators would not fit 32
// registers; annotation rejects the tiles that do not fit), rows at most (the default's).
constexpr int64_t kMaxTileVectors = 4;
constexpr int64_t kMaxTileRows = 12;

// What the rule needs of a stage it applies to.
struct CpuDotGemm {
    const TensorIntrin* intrin = nullptr;
    int64_t lanes = 0, group = 0;
    int a = -1, b = -1;  // the stages of A and B
    int b_dim = 0;       // B's dimension of j (0: B is [j, k], 1: [k, j])
};

// The stage as a dot-product GEMM: C[i, j] = sum_k A[i, k] * B[k, j] (or B[j, k]) whose body
// is the intrinsic's product, on a CPU target that has the intrinsic, with K a multiple of its
// group and N of its lanes (tensor intrinsics compute whole tiles); nullopt otherwise.
std::optional<CpuDotGemm> match_gemm(const SketchContext& ctx, const Sketch& sk, int st) {
    const Schedule& s = sk.schedule;
    const Stage& stage = s.stage(st);
    if (ctx.gpu() || sk.stages[st].kind != SketchStageKind::Plain || ctx.dag_index(s, st) < 0 ||
        stage.leaf != stage.root || stage.attach != AttachKind::Root)
        return std::nullopt;
    const ComputeOpNode* c = as_compute(stage.op);
    if (!c || c->axis.size() != 2 || c->reduce_axis.size() != 1 || c->body.size() != 1)
        return std::nullopt;
    std::vector<Tensor> inputs = op_inputs(stage.op);
    if (inputs.size() != 2) return std::nullopt;
    const Type acc = c->body[0].type();
    CpuDotGemm g;
    g.intrin = cpu_dot_intrin_for(ctx.task.target(), inputs[0].dtype(), inputs[1].dtype(), acc);
    if (!g.intrin) return std::nullopt;
    std::vector<MatchedRead> reads;
    if (!match_tensor_intrin(*g.intrin, c->body[0], acc, &reads).empty() || reads.size() != 2)
        return std::nullopt;
    const Var &i = c->axis[0].var(), &j = c->axis[1].var(), &k = c->reduce_axis[0].var();
    if (!reads_at(reads[0].stage, i, k)) return std::nullopt;
    if (reads_at(reads[1].stage, k, j)) {
        g.b_dim = 1;
    } else if (reads_at(reads[1].stage, j, k)) {
        g.b_dim = 0;
    } else {
        return std::nullopt;
    }
    const std::vector<IterVar> axes = tensor_intrin_axes(*g.intrin);
    g.lanes = as_const_int(axes[0].dom().extent).value_or(0);
    g.group = as_const_int(axes[1].dom().extent).value_or(0);
    auto extent = [](const IterVar& v) { return as_const_int(v.dom().extent).value_or(0); };
    int64_t m = extent(c->axis[0]), n = extent(c->axis[1]), k_len = extent(c->reduce_axis[0]);
    if (g.lanes <= 0 || g.group <= 0 || m <= 0 || n <= 0 || k_len <= 0 || n % g.lanes != 0 ||
        k_len % g.group != 0)
        return std::nullopt;
    g.a = s.stage_of(reads[0].stage->tensor.op());
    g.b = s.stage_of(reads[1].stage->tensor.op());
    if (g.a == g.b) return std::nullopt;
    return g;
}

RuleCondition cpu_dot_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    if (!match_gemm(ctx, sk, st)) return RuleCondition::Skip;
    const bool output = sk.schedule.stage(st).is_output;
    return output || untouched_epilogue(ctx, sk, st) >= 0 ? RuleCondition::ApplyAndSkipRest
                                                          : RuleCondition::Skip;
}

// The output's loops: [j blocks, i tiles, panels, rows, vectors (unrolled), lanes (vectorised)];
// returns the tile groups of i and of j's vectors.
std::pair<TileGroup, TileGroup> tile_output(Sketch& sk, int q, const CpuDotGemm& g) {
    Schedule& s = sk.schedule;
    s.split(q, 1, g.lanes);                                     // [i, jo, jl]
    TileGroup gj = split_levels(sk, q, 1, 3, kMaxTileVectors);  // [i, jb, jp, jv, jl]
    TileGroup gi = split_levels(sk, q, 0, 2, kMaxTileRows);     // [io, ii, jb, jp, jv, jl]
    s.reorder(q, {2, 0, 3, 1, 4, 5});                           // [jb, io, jp, ii, jv, jl]
    s.unroll(q, 4);
    s.vectorize(q, 5);
    return {gi, gj};
}

// The accumulator at the output's panel loop: [k / group, rows, vectors, lanes, k % group].
void tile_accumulator(Sketch& sk, int p, int q, const CpuDotGemm& g) {
    Schedule& s = sk.schedule;
    s.compute_at(p, q, 2);
    s.split(p, 2, g.group);         // [i, j, ko, kg]
    s.split(p, 1, g.lanes);         // [i, jv, jl, ko, kg]
    s.reorder(p, {3, 0, 1, 2, 4});  // [ko, i, jv, jl, kg]
    s.unroll(p, 1);
    s.unroll(p, 2);
    s.tensorize(p, 3, g.intrin->name);
}

// B packed at the output's block loop (a constant B once, by pre_transform), storage and loops
// [j / lanes, k / group, j % lanes, k % group]: a vector's rows of B `group` elements apart, as
// the instruction reads them.
int pack_b(Sketch& sk, int b, int p, int q, const CpuDotGemm& g) {
    Schedule& s = sk.schedule;
    const int pack = s.cache_read(b, "global", {p});
    insert_sketch_stage(sk, pack);
    // B [k, j]: [k, j] -> [ko, ki, jo, ji]; B [j, k]: [j, k] -> [jo, ji, ko, ki]. Then
    // [jo, ko, ji, ki], storage and loops alike.
    const bool k_first = g.b_dim == 1;
    const int j_dim = k_first ? 1 : 0, k_dim = k_first ? 0 : 2;
    const std::vector<int> order =
        k_first ? std::vector<int>{2, 0, 3, 1} : std::vector<int>{0, 2, 1, 3};
    s.storage_split(pack, j_dim, g.lanes);
    s.storage_split(pack, k_dim, g.group);
    s.storage_reorder(pack, order);
    s.split(pack, j_dim, g.lanes);
    s.split(pack, k_dim, g.group);
    s.reorder(pack, order);
    // A constant B (a weight) is packed once, outside the kernel (layout rewrite).
    const PlaceholderOpNode* w = as_placeholder(s.stage(b).op);
    if (w && w->constant)
        s.pre_transform(pack);
    else
        s.compute_at(pack, q + 1, 0);  // q moved up by the inserted stage
    return pack;
}

std::vector<std::pair<Sketch, int>> cpu_dot_apply(const SketchContext& ctx, const Sketch& in,
                                                  int st) {
    CpuDotGemm g = *match_gemm(ctx, in, st);
    Sketch sk = in;
    int p = st, q = tile_output_stage(ctx, sk, st);
    auto [gi, gj] = tile_output(sk, q, g);
    tile_accumulator(sk, p, q, g);
    int pack = pack_b(sk, g.b, p, q, g);
    if (pack <= p) ++p, ++q;
    if (pack <= g.a) ++g.a;
    sk.tiles.push_back(gi);
    sk.tiles.push_back(gj);
    sk.stages[p].kind = SketchStageKind::CpuDot;
    sk.stages[q].kind = SketchStageKind::CpuDotOutput;
    sk.stages[pack].kind = SketchStageKind::CpuDotPack;
    // A computed A stays a tensor of its own (the instruction reads its rows): kept at the root.
    if (sk.stages[g.a].kind == SketchStageKind::Plain && !sk.schedule.stage(g.a).root.empty())
        sk.stages[g.a].kind = SketchStageKind::CpuDotOperand;
    sk.trace.push_back(sk.schedule.stage(p).name() + ": multi_level_tiling_cpu_dot");
    // The walk goes on below the GEMM; the rules leave the stages marked here alone.
    return {{std::move(sk), p - 1}};
}

}  // namespace

SketchRule cpu_dot_rule() {
    return {"multi_level_tiling_cpu_dot", cpu_dot_condition, cpu_dot_apply};
}

}  // namespace tessel::internal
