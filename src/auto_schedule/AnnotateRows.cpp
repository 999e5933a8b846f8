// Annotation of a row group (SketchRowRules.cpp): a block per row; the row's loops, the output's
// and those of the reductions and shared copies computed at its row, over one thread count drawn
// here (a multiple of the warp up to the block limit), the output's and the copies' innermost
// loop a vector of 1, 2 or 4 elements (128-bit accesses for floats).
#include "AnnotateUtil.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

int64_t pick(std::mt19937_64& rng, const std::vector<int64_t>& options) {
    return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
}

// Splits leaf `pos` of stage `st` into [outer, threads (threadIdx.x), vector (vectorised)].
void split_row(Schedule& s, int st, int pos, int64_t threads, int64_t vector) {
    if (vector > 1) {
        auto [outer, inner] = s.split(st, pos, vector);
        s.vectorize(st, inner);
        pos = outer;
    }
    auto [outer, lanes] = s.split(st, pos, threads);
    (void)outer;
    s.bind(st, lanes, IterAnnotation::ThreadX);
}

}  // namespace

void bind_row_block(AnnotateContext& a, int c) {
    Schedule& s = a.schedule;
    const HardwareParams& hw = a.space.task().hardware();
    const int64_t warp = std::max(1, hw.warp_size);
    const int64_t max_threads = std::max<int64_t>(warp, hw.max_threads_per_block);
    TESSEL_CHECK(s.stage(c).leaf.size() == 2) << "row_block: [row, column] leaves expected";
    const Stage& cs = s.stage(c);
    const int64_t m = cs.iters[cs.leaf[1]].const_extent().value_or(0);
    TESSEL_CHECK(m > 0) << "row_block: a constant row length expected";
    std::vector<int64_t> vectors = {1};
    for (int64_t v : {2, 4})
        if (m % v == 0) vectors.push_back(v);
    const int64_t vector = pick(a.rng, vectors);
    std::vector<int64_t> counts;
    for (int64_t t = warp; t <= max_threads; t *= 2) {
        counts.push_back(t);
        if (t * vector >= m) break;  // more threads would only idle
    }
    const int64_t threads = pick(a.rng, counts);
    split_row(s, c, 1, threads, vector);
    s.bind(c, 0, IterAnnotation::BlockX);
    a.loops_changed(c);
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        const Stage& o = s.stage(st);
        if (o.attach != AttachKind::At || o.attach_stage != c) continue;
        int last = static_cast<int>(o.leaf.size()) - 1;
        SketchStageKind kind = a.sketch.stages[st].kind;
        if (kind == SketchStageKind::RowReduction) {
            auto [outer, lanes] = s.split(st, last, threads);
            (void)outer;
            s.bind(st, lanes, IterAnnotation::ThreadX);
        } else if (kind == SketchStageKind::RowFetch) {
            split_row(s, st, last, threads, vector);
        }
        a.loops_changed(st);
    }
}

}  // namespace tessel::internal
