// Groups 2 and 3 of the features (FeaturesInternal.h): how a store touches each of its buffers
// (bytes, unique bytes, cache lines, reuse, stride), and its arithmetic-intensity curve. Ansor's
// definitions (docs/tuning.md, "Features", gives each one), computed from footprints: the
// elements of a buffer a store touches while the loops from some level inwards run.
#include <algorithm>
#include <cmath>

#include "FeaturesInternal.h"

namespace tessel::internal {

namespace {

// The span of dimension `d` of `use`'s buffer that its accesses cover under the current
// IndexRange (the bounding box of the accesses), capped by the buffer's extent.
double dim_span(const FeatureProgram& p, const FeatureStore& store,
                const FeatureStore::BufferUse& use, const IndexRange& range, size_t d) {
    double lo = 0, hi = -1;
    for (int a : use.accesses) {
        const std::vector<Expr>& idx = *store.accesses[a].indices;
        if (d >= idx.size()) continue;
        IndexSpan s = range.eval(idx[d]);
        bool first = hi < lo;
        lo = first ? s.lo : std::min(lo, s.lo);
        hi = first ? s.hi : std::max(hi, s.hi);
    }
    double span = hi < lo ? 1 : hi - lo + 1;
    int64_t extent = p.buffers[use.buffer].shape[d];
    return extent > 0 ? std::min(span, double(extent)) : span;
}

// Elements of `use`'s buffer its accesses touch under the current IndexRange.
double footprint(const FeatureProgram& p, const FeatureStore& store,
                 const FeatureStore::BufferUse& use, const IndexRange& range) {
    double elements = 1;
    for (size_t d = 0; d < p.buffers[use.buffer].shape.size(); ++d)
        elements *= dim_span(p, store, use, range, d);
    return elements;
}

// How far the flat element index of `use`'s accesses moves (max over accesses) when only the
// loop at `level` runs: 0 when the loop does not move the buffer.
double flat_movement(const FeatureProgram& p, const FeatureStore& store,
                     const FeatureStore::BufferUse& use, IndexRange* range, size_t level) {
    range->vary_only(level);
    const FeatureBuffer& b = p.buffers[use.buffer];
    double moved = 0;
    for (int a : use.accesses) {
        const std::vector<Expr>& idx = *store.accesses[a].indices;
        double m = 0;
        for (size_t d = 0; d < idx.size() && d < b.strides.size(); ++d) {
            IndexSpan s = range->eval(idx[d]);
            m += (s.hi - s.lo) * std::fabs(double(b.strides[d]));
        }
        moved = std::max(moved, m);
    }
    return moved;
}

// The 18 numbers of one buffer slot, in column order.
struct BufferColumns {
    double type[3] = {};  // read, write, read-write
    double bytes = 0, unique_bytes = 0, lines = 0, unique_lines = 0;
    double reuse[3] = {};  // loop multiple read, serial multiple read-write, no reuse
    double reuse_dis_iter = 0, reuse_dis_bytes = 0, reuse_ct = 0;
    double stride = 0;
    void write(float* out) const;
};

void BufferColumns::write(float* out) const {
    double per_reuse = std::max(reuse_ct, 1.0);
    double v[kBufferWidth] = {type[0],
                              type[1],
                              type[2],
                              bytes,
                              unique_bytes,
                              lines,
                              unique_lines,
                              reuse[0],
                              reuse[1],
                              reuse[2],
                              reuse_dis_iter,
                              reuse_dis_bytes,
                              reuse_ct,
                              bytes / per_reuse,
                              unique_bytes / per_reuse,
                              lines / per_reuse,
                              unique_lines / per_reuse,
                              stride};
    for (int i = 0; i < kBufferWidth; ++i) out[i] = float(v[i]);
}

int statements_touching(const FeatureLoop& loop, int buffer) {
    for (const auto& [b, n] : loop.statements_per_buffer)
        if (b == buffer) return n;
    return 0;
}

// Ansor's reuse: walking out from the innermost loop, the first loop (of extent > 1) that does
// not move the buffer re-reads it (loop multiple read: count = its extent); a loop that moves it
// but holds several statements touching it reuses it between them (serial multiple read-write).
void reuse(const FeatureProgram& p, const FeatureStore& store, int buffer,
           const std::vector<double>& movement, BufferColumns* c) {
    double dis_iter = 1, dis_bytes = 0;
    for (size_t k = store.loops.size(); k-- > 0;) {
        const FeatureLoop& loop = p.loops[store.loops[k]];
        if (loop.extent <= 1) continue;
        if (movement[k] == 0) {
            c->reuse[0] = 1;
            c->reuse_dis_iter = dis_iter, c->reuse_dis_bytes = dis_bytes;
            c->reuse_ct = double(loop.extent);
            return;
        }
        dis_iter *= double(loop.extent);
        dis_bytes = loop.touched_bytes;
        int statements = statements_touching(loop, buffer);
        if (statements > 1) {
            c->reuse[1] = 1;
            c->reuse_dis_iter = dis_iter / double(loop.extent);
            c->reuse_dis_bytes = dis_bytes / double(loop.extent);
            c->reuse_ct = statements - 1;
            return;
        }
    }
    c->reuse[2] = 1;
}

// Bytes of one contiguous run of the footprint at the outermost level: the last dimension's span,
// times the next one's while each inner dimension is covered whole (compact layouts only).
double contiguous_bytes(const FeatureBuffer& b, const std::vector<double>& spans) {
    if (spans.empty()) return b.elem_bytes;
    double run = spans.back();
    for (size_t d = spans.size() - 1; d > 0 && b.compact; --d) {
        if (b.shape[d] <= 0 || spans[d] < double(b.shape[d])) break;
        run *= spans[d - 1];
    }
    return run * b.elem_bytes;
}

std::vector<double> outer_spans(const FeatureProgram& p, const FeatureStore& store,
                                const FeatureStore::BufferUse& use, IndexRange* range) {
    range->vary_from(0);
    std::vector<double> spans;
    for (size_t d = 0; d < p.buffers[use.buffer].shape.size(); ++d)
        spans.push_back(dim_span(p, store, use, *range, d));
    return spans;
}

BufferColumns buffer_columns(const FeatureProgram& p, const FeatureStore& store,
                             const FeatureStore::BufferUse& use, const FeatureContext& context,
                             IndexRange* range) {
    const FeatureBuffer& b = p.buffers[use.buffer];
    BufferColumns c;
    bool reads = false, writes = false;
    for (int a : use.accesses) (store.accesses[a].write ? writes : reads) = true;
    c.type[reads && writes ? 2 : writes ? 1 : 0] = 1;
    c.bytes = double(use.accesses.size()) * store.outer_prod * b.elem_bytes;
    c.unique_bytes = use.footprint[0] * b.elem_bytes;
    size_t n = store.loops.size();
    std::vector<double> movement(n);
    for (size_t k = 0; k < n; ++k) movement[k] = flat_movement(p, store, use, range, k);
    // Cache lines: every iteration of the loops down to the innermost one that moves the buffer
    // touches a new line once its stride crosses one.
    c.lines = 1;
    for (size_t k = n; k-- > 0;) {
        const FeatureLoop& loop = p.loops[store.loops[k]];
        if (loop.extent <= 1 || movement[k] == 0) continue;
        double stride = movement[k] / double(loop.extent - 1);
        double iterations = store.outer_prod;
        for (size_t j = k + 1; j < n; ++j) iterations /= double(p.loops[store.loops[j]].extent);
        c.lines = std::max(
            1.0, iterations * std::min(1.0, stride * b.elem_bytes / context.cache_line_bytes));
        break;
    }
    double line = std::min(contiguous_bytes(b, outer_spans(p, store, use, range)),
                           double(context.cache_line_bytes));
    c.unique_lines = std::max(1.0, c.unique_bytes / std::max(line, 1.0));
    if (n > 0 && p.loops[store.loops[n - 1]].extent > 1)
        c.stride = movement[n - 1] / double(p.loops[store.loops[n - 1]].extent - 1);
    reuse(p, store, use.buffer, movement, &c);
    return c;
}

// The curve: at each loop level (innermost first), the store's float operations over the bytes
// of its footprints, against log2 of those operations; sampled at 10 evenly spaced points of the
// x axis up to the whole nest's, interpolating linearly.
void intensity_curve(const FeatureProgram& p, const FeatureStore& store, float* out) {
    double ops = float_ops_per_execution(store);
    if (ops <= 0) return;
    size_t n = store.loops.size();
    std::vector<double> x, y;  // level n (one execution) first, level 0 (the whole nest) last
    for (size_t k = n + 1; k-- > 0;) {
        double bytes = 0;
        for (const FeatureStore::BufferUse& u : store.uses)
            bytes += u.footprint[k] * p.buffers[u.buffer].elem_bytes;
        if (k < n) ops *= double(p.loops[store.loops[k]].extent);
        x.push_back(std::log2(ops));
        y.push_back(ops / std::max(bytes, 1.0));
    }
    size_t pt = 0;
    for (int i = 0; i < kIntensityCurvePoints; ++i) {
        double at = x.back() * (i + 1) / kIntensityCurvePoints;
        while (pt + 1 < x.size() && x[pt] < at - 1e-9) ++pt;
        double v = y[pt];
        if (pt > 0 && x[pt] > x[pt - 1])
            v = y[pt - 1] + (y[pt] - y[pt - 1]) * (at - x[pt - 1]) / (x[pt] - x[pt - 1]);
        out[i] = float(v);
    }
}

}  // namespace

void analyse_accesses(FeatureProgram* program) {
    for (FeatureStore& store : program->stores) {
        for (size_t a = 0; a < store.accesses.size(); ++a) {
            int b = store.accesses[a].buffer;
            auto it = std::find_if(store.uses.begin(), store.uses.end(),
                                   [&](const FeatureStore::BufferUse& u) { return u.buffer == b; });
            if (it == store.uses.end()) it = store.uses.insert(store.uses.end(), {b, {}, {}});
            it->accesses.push_back(static_cast<int>(a));
        }
        size_t n = store.loops.size();
        IndexRange range(*program, store);
        for (FeatureStore::BufferUse& u : store.uses) u.footprint.resize(n + 1);
        for (size_t k = 0; k <= n; ++k) {
            range.vary_from(k);
            for (FeatureStore::BufferUse& u : store.uses)
                u.footprint[k] = footprint(*program, store, u, range);
        }
        for (size_t k = 0; k < n; ++k) {
            FeatureLoop& loop = program->loops[store.loops[k]];
            for (const FeatureStore::BufferUse& u : store.uses) {
                loop.touched_bytes += u.footprint[k] * program->buffers[u.buffer].elem_bytes;
                auto it = std::find_if(loop.statements_per_buffer.begin(),
                                       loop.statements_per_buffer.end(),
                                       [&](const auto& e) { return e.first == u.buffer; });
                if (it == loop.statements_per_buffer.end())
                    loop.statements_per_buffer.push_back({u.buffer, 1});
                else
                    ++it->second;
            }
        }
    }
}

void access_features(const FeatureProgram& program, const FeatureStore& store,
                     const FeatureContext& context, float* row) {
    IndexRange range(program, store);
    std::vector<BufferColumns> columns;
    for (const FeatureStore::BufferUse& u : store.uses)
        columns.push_back(buffer_columns(program, store, u, context, &range));
    std::stable_sort(
        columns.begin(), columns.end(),
        [](const BufferColumns& a, const BufferColumns& b) { return a.bytes > b.bytes; });
    for (size_t i = 0; i < columns.size() && i < size_t(kFeatureBuffers); ++i)
        columns[i].write(row + kColBuffers + int(i) * kBufferWidth);
    intensity_curve(program, store, row + kColIntensity);
}

}  // namespace tessel::internal
