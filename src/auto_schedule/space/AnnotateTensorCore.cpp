// Annotation of a tensor-core sketch (SketchTensorCore.cpp): the warp tile's register check, and
// the shared tiles' padding and cooperative copies. The tile lengths are drawn as every sketch's
// (fill_tile_sizes, with tensor_core_tile_misses steering the draw); the pipelining of the shared
// tiles is the GPU `pipelining` rule's (Annotate.cpp).
#include <algorithm>
#include <limits>

#include "AnnotateUtil.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

// Lengths of the m and n groups: {blocks, warps, fragments per warp}.
struct WarpTile {
    std::vector<int64_t> m, n;
    int64_t n_unit;
    int64_t warps() const { return m[1] * n[1]; }
    int64_t accumulators_per_lane() const { return 16 * m[2] * n_unit * n[2] / 32; }
};

WarpTile warp_tile(const Sketch& sketch, const SketchStage& info, const std::vector<Step>& steps) {
    return {tile_lengths(steps, sketch.tiles[info.tensor_core_tiles[0]]),
            tile_lengths(steps, sketch.tiles[info.tensor_core_tiles[1]]), info.tensor_core_n};
}

// A shared tile [rows, row]: rows padded by 16 bytes or not, then copied by the block's threads,
// 16 bytes a thread and access: [outer (unrolled), warps m (threadIdx.z), warps n (threadIdx.y),
// lane (threadIdx.x), vector]. The warp counts follow the output's warp splits, so mutations keep
// them in step. The padding is a row stride of an odd number of 16-byte chunks (storage_align to
// 32 bytes, offset 16: rows are multiples of 32 bytes), so the 8 rows an ldmatrix reads fall in 8
// different bank groups whatever the tile sizes (a row of 2^k bytes puts them in the same banks).
void copy_tile(AnnotateContext& a, int st) {
    Schedule& s = a.schedule;
    const int64_t vector = 16 / op_output(s.stage(st).op, 0).dtype().bytes();
    if (pick(a.rng, 2) == 1) s.storage_align(st, 0, 2 * vector, vector);
    const std::vector<int>& warps = a.sketch.stages[st].thread_steps;
    a.loops_changed(st);
    s.split(st, 1, vector);                                            // [r, c, v]
    s.fuse(st, {0, 1});                                                // [t, v]
    s.split(st, 0, std::max(1, a.space.task().hardware().warp_size));  // [t, x, v]
    s.follow_split(st, 0, warps.at(0));                                // [t, y, x, v]
    s.follow_split(st, 0, warps.at(1));                                // [o, z, y, x, v]
    s.bind(st, 1, IterAnnotation::ThreadZ);
    s.bind(st, 2, IterAnnotation::ThreadY);
    s.bind(st, 3, IterAnnotation::ThreadX);
    s.unroll(st, 0);
    s.vectorize(st, 4);
}

}  // namespace

int tensor_core_tile_misses(const SearchSpace& space, const Sketch& sketch, const SketchStage& info,
                            const std::vector<Step>& steps) {
    const HardwareParams& hw = space.task().hardware();
    WarpTile t = warp_tile(sketch, info, steps);
    if (t.warps() * std::max(1, hw.warp_size) > hw.max_threads_per_block)
        return std::numeric_limits<int>::max();
    int misses = t.accumulators_per_lane() > kMaxAccumulatorsPerLane ? 4 : 0;
    int64_t tiles = sketch.tiles[info.tensor_core_tiles[0]].extent *
                    sketch.tiles[info.tensor_core_tiles[1]].extent;
    int64_t sms = std::max(1, hw.num_cores);
    misses += t.m[0] * t.n[0] < std::min(sms, std::max<int64_t>(1, tiles / 16)) ? 1 : 0;
    return misses;
}

void annotate_tensor_core(AnnotateContext& a) {
    Schedule& s = a.schedule;
    // A wgmma sketch's TMA fetches: issued by a producer warp group of their own (the consumers
    // only wait, multiply and release the copies: tutorial 08 step 5) or by the consumers' first
    // thread (step 4), both tiles alike (lowering requires it).
    const bool producer =
        std::any_of(a.sketch.stages.begin(), a.sketch.stages.end(),
                    [](const SketchStage& i) { return i.kind == SketchStageKind::WgmmaFetch; }) &&
        pick(a.rng, 2) == 1;
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        const SketchStage& info = a.sketch.stages[st];
        if (info.kind == SketchStageKind::WgmmaFetch && producer) s.warp_specialize(st);
        if (info.kind == SketchStageKind::TensorCoreFetch) copy_tile(a, st);
        if (info.kind != SketchStageKind::TensorCore || info.tensor_core_tiles.empty()) continue;
        WarpTile t = warp_tile(a.sketch, info, s.steps());
        if (t.accumulators_per_lane() > kMaxAccumulatorsPerLane)
            TESSEL_THROW(ScheduleError)
                << "tensor core: a " << 16 * t.m[2] << " x " << t.n_unit * t.n[2]
                << " warp tile holds " << t.accumulators_per_lane()
                << " accumulators per lane, more than " << kMaxAccumulatorsPerLane;
    }
}

}  // namespace tessel::internal
