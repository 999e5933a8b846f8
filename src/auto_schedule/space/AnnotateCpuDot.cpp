// Annotation of a CPU dot-product sketch (SketchCpuDot.cpp): the register check of the tile the
// lengths drew, and the parallel loop. The lengths themselves are drawn as every sketch's
// (fill_tile_sizes); mutation changes them as every tile group's.
#include "AnnotateUtil.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

// The output's leaves: [j blocks, i tiles, panels, rows, vectors, lanes].
constexpr int kBlocks = 0, kRowTiles = 1, kRows = 3, kVectors = 4, kLanes = 5;

int64_t const_leaf(const std::vector<Expr>& row, int pos) {
    auto c = as_const_int(row[static_cast<size_t>(pos)]);
    return c ? *c : 0;
}

}  // namespace

void annotate_cpu_dot(AnnotateContext& a) {
    Schedule& s = a.schedule;
    for (int q = 0; q < static_cast<int>(s.stages().size()); ++q) {
        if (a.sketch.stages[q].kind != SketchStageKind::CpuDotOutput) continue;
        const std::vector<Expr> row = a.extents_of(q);
        if (row.size() != 6) continue;  // not the sketch's loops: leave them as they are
        const int64_t lanes = const_leaf(row, kLanes);
        check_register_tile(s, q, "cpu dot", const_leaf(row, kRows), const_leaf(row, kVectors),
                            lanes);
        // The blocks in parallel (each packs its own B), or the row tiles of each block (the
        // pack in parallel too), among those with more than one iteration.
        std::vector<int> choices;
        for (int pos : {kBlocks, kRowTiles})
            if (const_leaf(row, pos) > 1) choices.push_back(pos);
        if (choices.empty()) continue;
        const int pos = choices[static_cast<size_t>(pick(a.rng, choices.size()))];
        s.parallel(q, pos);
        a.loops_changed(q);
        if (pos != kRowTiles) continue;
        for (int st = 0; st < static_cast<int>(s.stages().size()); ++st)
            if (a.sketch.stages[st].kind == SketchStageKind::CpuDotPack &&
                s.stage(st).attach_stage == q) {
                s.parallel(st, 0);
                a.loops_changed(st);
            }
    }
}

// A tile of `rows` x `vectors` accumulators, a vector of B for each of its vectors and A's
// broadcast must fit the vector registers (32 with 512-bit vectors, 16 with 256-bit ones), as
// the default's tile does (src/op/DefaultSchedule.cpp, gemm_tile).
void check_register_tile(const Schedule& s, int q, const char* sketch, int64_t rows,
                         int64_t vectors, int64_t lanes) {
    const int64_t bits = op_output(s.stage(q).op, 0).dtype().bits * lanes;
    const int64_t registers = bits >= 512 ? 32 : 16;
    if (rows * vectors + vectors + 1 > registers)
        TESSEL_THROW(ScheduleError)
            << sketch << ": a tile of " << rows << " rows by " << vectors << " vectors of " << lanes
            << " accumulators needs " << rows * vectors + vectors + 1
            << " vector registers, more than the " << registers << " there are";
}

}  // namespace tessel::internal
