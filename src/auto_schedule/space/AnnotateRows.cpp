// Annotation of a row group (SketchRowRules.cpp): a block per row, or a few rows a block (each on
// its own threadIdx.y) when the row's threads leave room; the row's loops, the output's and those
// of the reductions and shared copies computed at its row, over one thread count drawn here (a
// multiple of the warp up to the block limit), the output's and the copies' innermost loop a
// vector of 1, 2 or 4 elements (128-bit accesses for floats).
#include <algorithm>

#include "AnnotateUtil.h"
#include "SketchUtil.h"
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

// Rows a block at most when each row has its own threads (threadIdx.y).
constexpr int64_t kMaxRowsPerBlock = 8;

// The bytes of the RowFetch stages computed at stage `c`'s row (one row each).
int64_t row_fetch_bytes(AnnotateContext& a, int c) {
    const Schedule& s = a.schedule;
    int64_t bytes = 0;
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        const Stage& o = s.stage(st);
        if (o.attach != AttachKind::At || o.attach_stage != c ||
            a.sketch.stages[st].kind != SketchStageKind::RowFetch)
            continue;
        int64_t elems = 1;
        for (const Expr& e : a.extents_of(st)) elems *= as_const_int(e).value_or(1);
        bytes += elems * op_output(o.op, 0).dtype().bytes();
    }
    return bytes;
}

}  // namespace

void bind_row_block(AnnotateContext& a, int c) {
    Schedule& s = a.schedule;
    const HardwareParams& hw = a.space.task().hardware();
    const int64_t warp = std::max(1, hw.warp_size);
    const int64_t max_threads = std::max<int64_t>(warp, hw.max_threads_per_block);
    const Stage& cs = s.stage(c);
    const int col = static_cast<int>(cs.leaf.size()) - 1;  // the rows: the leaves before it
    TESSEL_CHECK(col >= 1) << "row_block: [rows..., column] leaves expected";
    const int64_t m = cs.iters[cs.leaf[col]].const_extent().value_or(0);
    const int64_t last_rows = cs.iters[cs.leaf[col - 1]].const_extent().value_or(1);
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
    // Rows a block: one, or (short rows) several, a warp or more each on threadIdx.y, as long as
    // their shared copies fit.
    const int64_t fetched = row_fetch_bytes(a, c);
    const int64_t shared_limit = hw.max_shared_memory_per_block;
    std::vector<int64_t> per_block = {1};
    for (int64_t r = 2; r <= kMaxRowsPerBlock && r <= last_rows && r * threads <= max_threads;
         r *= 2)
        if (shared_limit <= 0 || r * fetched + kRowReductionScratchBytes <= shared_limit)
            per_block.push_back(r);
    const int64_t rows_per_block = pick(a.rng, per_block);
    split_row(s, c, col, threads, vector);
    // The rows [..., last] -> fused [..., last / rows_per_block] on blockIdx.x, the last's inner
    // part on threadIdx.y (split and fuse keep the group's stages at the innermost row loop).
    if (rows_per_block > 1) {
        int inner = s.split(c, col - 1, rows_per_block).second;
        s.bind(c, inner, IterAnnotation::ThreadY);
    }
    std::vector<int> rows;
    for (int k = 0; k < col; ++k) rows.push_back(k);
    s.bind(c, rows.size() > 1 ? s.fuse(c, rows) : 0, IterAnnotation::BlockX);
    a.loops_changed(c);
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        const Stage& o = s.stage(st);
        if (o.attach != AttachKind::At || o.attach_stage != c) continue;
        int last = static_cast<int>(o.leaf.size()) - 1;
        SketchStageKind kind = a.sketch.stages[st].kind;
        if (kind == SketchStageKind::RowReduction) {
            auto [outer_k, lanes] = s.split(st, last, threads);
            (void)outer_k;
            s.bind(st, lanes, IterAnnotation::ThreadX);
        } else if (kind == SketchStageKind::RowFetch) {
            // Its row (the leaves before the last, each of extent 1) is the thread's row.
            if (rows_per_block > 1 && last > 0) s.bind(st, last - 1, IterAnnotation::ThreadY);
            split_row(s, st, last, threads, vector);
        }
        a.loops_changed(st);
    }
}

}  // namespace tessel::internal
