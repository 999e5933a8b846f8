// Annotation of the register read caches of the cache_read_local sketch (SketchReadCache.cpp):
// each shared tile's layout, and the vectorisation of its copy into registers. Tutorial 05 step 4
// stores A's tile transposed and padded so that a thread's column of it is contiguous and read
// with 128-bit loads; here that is one choice among keep / transpose, padded or not, drawn per
// tile and changed by the mutate_shared_layout mutation (Mutate.cpp).
#include "AnnotateUtil.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

int64_t element_bytes(const Schedule& s, int stage) {
    return op_output(s.stage(stage).op, 0).dtype().bytes();
}

}  // namespace

ReadCacheTile read_cache_tile(const Schedule& s, int cache, const std::vector<Expr>& extents) {
    const std::vector<Tensor> inputs = op_inputs(s.stage(cache).op);
    TESSEL_CHECK(inputs.size() == 1) << "read cache " << s.stage(cache).name();
    ReadCacheTile t;
    t.cache = cache;
    t.shared = s.stage_of(inputs[0]);
    t.dims = static_cast<int>(s.stage(t.shared).storage.size());
    // A fresh cache stage's leaves are its axes, their extents the slice bound inference gives.
    for (int pos = 0; pos < static_cast<int>(extents.size()); ++pos)
        if (as_const_int(extents[pos]).value_or(0) > 1) t.axis = pos;
    if (t.axis >= 0) t.slice = *as_const_int(extents[t.axis]);
    return t;
}

std::vector<int> layout_choices(const ReadCacheTile& t) {
    std::vector<int> out = {0};
    if (t.axis >= 0 && t.axis != t.dims - 1) out.push_back(kTransposed);
    if (t.dims >= 2) {
        size_t n = out.size();
        for (size_t k = 0; k < n; ++k) out.push_back(out[k] | kPadded);
    }
    return out;
}

std::vector<Step> layout_steps(const Schedule& s, const ReadCacheTile& t, int layout) {
    std::vector<Step> out;
    if (layout & kTransposed) {
        std::vector<int> order;
        for (int d = 0; d < t.dims; ++d)
            if (d != t.axis) order.push_back(d);
        order.push_back(t.axis);
        out.push_back(StorageReorderStep{t.shared, order});
    }
    if (layout & kPadded) {
        // Rows an odd number of 16-byte chunks long (16 bytes of padding on a row of a multiple
        // of 32 bytes): 128-bit reads stay aligned and a warp's transposing stores of consecutive
        // rows fall in different banks (tutorial 05 pads A's 128-float rows to 132).
        int64_t vector = std::max<int64_t>(1, 16 / element_bytes(s, t.shared));
        out.push_back(StorageAlignStep{t.shared, t.dims - 2, 2 * vector, vector});
    }
    return out;
}

std::vector<int64_t> read_cache_lanes(const Schedule& s, const ReadCacheTile& t, int layout) {
    std::vector<int64_t> out = {1};
    bool contiguous = t.axis >= 0 && (t.axis == t.dims - 1 || (layout & kTransposed));
    if (!contiguous) return out;
    for (int64_t v : {2, 4})
        if (t.slice % v == 0 && v * element_bytes(s, t.cache) <= 16) out.push_back(v);
    return out;
}

std::vector<Step> read_cache_vector_steps(const Schedule& s, const ReadCacheTile& t,
                                          int64_t lanes) {
    if (lanes <= 1) return {};
    // The steps as the primitives make them, on a copy: the axis moved innermost, split by the
    // lanes, the inner loop vectorised.
    Schedule x = s;
    const size_t before = x.steps().size();
    int n = static_cast<int>(x.stage(t.cache).leaf.size());
    if (t.axis != n - 1) {
        std::vector<int> order;
        for (int pos = 0; pos < n; ++pos)
            if (pos != t.axis) order.push_back(pos);
        order.push_back(t.axis);
        x.reorder(t.cache, order);
    }
    x.vectorize(t.cache, x.split(t.cache, n - 1, lanes).second);
    return std::vector<Step>(x.steps().begin() + static_cast<std::ptrdiff_t>(before),
                             x.steps().end());
}

// Each read cache: its shared tile's layout drawn among layout_choices, then its copy's vector
// lanes drawn among read_cache_lanes (one lane where the layout leaves the axis strided).
void read_caches(AnnotateContext& a) {
    Schedule& s = a.schedule;
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        if (a.sketch.stages[st].kind != SketchStageKind::ReadCache) continue;
        ReadCacheTile t = read_cache_tile(s, st, a.extents_of(st));
        std::vector<int> layouts = layout_choices(t);
        int layout = layouts[pick(a.rng, layouts.size())];
        for (const Step& step : layout_steps(s, t, layout)) s.apply(step);
        std::vector<int64_t> lanes = read_cache_lanes(s, t, layout);
        if (lanes.size() == 1) continue;  // strided: nothing drawn
        int64_t v = lanes[pick(a.rng, lanes.size())];
        if (v == 1) continue;
        a.loops_changed(st);
        for (const Step& step : read_cache_vector_steps(s, t, v)) s.apply(step);
    }
}

}  // namespace tessel::internal
