// Feature extraction (auto_schedule/features/Features.h): the entry points, which run the phases of
// FeaturesInternal.h, and the last two groups (the allocation of the stored buffer, the loops
// around the store).
#include "tessel/auto_schedule/features/Features.h"

#include <cmath>

#include "FeaturesInternal.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/TensorDAG.h"

namespace tessel {

using namespace internal;

namespace {

// Group 4: the Allocate of the buffer the store writes (zeros for a kernel argument).
void allocation_features(const FeatureProgram& p, const FeatureStore& store, float* out) {
    const FeatureBuffer& b = p.buffers[store.accesses[0].buffer];
    if (!b.allocated) return;
    out[0] = float(b.alloc_elements * b.elem_bytes);
    out[1] = float(b.alloc_elements * b.alloc_outer_prod);
    out[2] = float(b.alloc_outer_prod);
    out[3] = float(store.outer_prod / b.alloc_outer_prod);
}

// Group 5: the loops around the store.
void outer_features(const FeatureStore& store, float* out) {
    out[0] = float(store.outer_prod);
    out[1] = float(store.loops.size());
    out[2] = float(store.auto_unroll_max_step);
}

float log_scale(float v) {
    return std::copysign(std::log2(1.0f + std::fabs(v)), v);
}

// The product of the constant extents of the vthread loops of `stage`'s nest and of the nests
// it is computed in (up to its attach point in each).
int64_t vthread_extent(const Schedule& s, int stage) {
    int64_t product = 1;
    int attach_iter = -1;
    for (size_t hops = 0; stage >= 0 && hops <= s.stages().size(); ++hops) {
        const Stage& st = s.stages()[stage];
        for (int id : st.leaf) {
            if (st.iters[id].annotation == IterAnnotation::VThread)
                product *= st.iters[id].const_extent().value_or(1);
            if (id == attach_iter) break;
        }
        attach_iter = st.attach == AttachKind::At ? st.attach_iter : -1;
        stage = st.attach == AttachKind::At ? st.attach_stage : -1;
    }
    return product;
}

}  // namespace

FeatureContext FeatureContext::from(const Schedule& s, const Target& target) {
    FeatureContext c;
    c.is_gpu = target.is_gpu();
    c.cache_line_bytes = target.cache_line_bytes();
    for (size_t i = 0; i < s.stages().size(); ++i) {
        int64_t v = vthread_extent(s, static_cast<int>(i));
        if (v > 1) c.vthread_extents.push_back({s.stages()[i].name(), v});
    }
    return c;
}

FeatureMatrix extract_features(const LoweredFunc& f, const FeatureContext& context,
                               const FeatureOptions& options) {
    FeatureProgram program = collect_feature_program(f.body);
    analyse_accesses(&program);
    FeatureMatrix m;
    m.rows = static_cast<int>(program.stores.size());
    m.values.assign(size_t(m.rows) * kNumFeatures, 0.0f);
    for (int r = 0; r < m.rows; ++r) {
        const FeatureStore& store = program.stores[r];
        float* row = m.values.data() + size_t(r) * kNumFeatures;
        compute_features(program, store, context, row);
        access_features(program, store, context, row);
        allocation_features(program, store, row + kColAllocation);
        outer_features(store, row + kColOuter);
    }
    if (options.log_scale)
        for (float& v : m.values) v = log_scale(v);
    return m;
}

namespace {

FeatureMatrix lower_and_extract(const Schedule& s, const std::vector<Tensor>& args,
                                const Target& target, const FeatureContext& context,
                                const FeatureOptions& options) {
    LowerOptions to_features;  // no logging, no bounds checks: the tuner's setting
    to_features.stop_after = "partition_loops";
    to_features.skip_padding_taps = false;  // half the cost of partitioning a convolution
    return extract_features(lower(s, args, target, "main", to_features), context, options);
}

}  // namespace

FeatureMatrix extract_features(const SearchTask& task, const Schedule& s,
                               const FeatureOptions& options) {
    FeatureContext context = FeatureContext::from(s, task.target());
    context.cache_line_bytes = task.hardware().cache_line_bytes;
    return lower_and_extract(s, task.dag().args(), task.target(), context, options);
}

FeatureMatrix extract_features(const Schedule& s, const Target& target,
                               const FeatureOptions& options) {
    return lower_and_extract(s, make_tensor_dag(s.outputs()).args(), target,
                             FeatureContext::from(s, target), options);
}

}  // namespace tessel
