// The GPU schedule fuzzer's completion (see GpuCompletion.h).
#include "gpu/GpuCompletion.h"

#include <optional>
#include <string>
#include <vector>

#include "tessel/te/Operation.h"

namespace tessel::testing {

namespace {

bool is_loop_stage(const Stage& st) {
    return as_compute(st.op) != nullptr && st.attach != AttachKind::Inlined;
}

// The leaf positions annotated `a`, if any.
std::optional<int> leaf_bound_to(const Stage& st, IterAnnotation a) {
    for (size_t p = 0; p < st.leaf.size(); ++p)
        if (st.iters[st.leaf[p]].annotation == a) return static_cast<int>(p);
    return std::nullopt;
}

bool binds_a_block_axis(const Stage& st) {
    for (IterAnnotation a :
         {IterAnnotation::BlockX, IterAnnotation::BlockY, IterAnnotation::BlockZ})
        if (leaf_bound_to(st, a)) return true;
    return false;
}

// How many leading leaves are serial data-parallel loops.
int serial_spatial_prefix(const Stage& st) {
    int n = 0;
    for (int id : st.leaf) {
        const Iterator& it = st.iters[id];
        if (it.kind != IterKind::Spatial || it.annotation != IterAnnotation::None) break;
        ++n;
    }
    return n;
}

// Fuses the first `n` leaves (n >= 1) into leaf 0.
void fuse_prefix(Schedule& s, int stage, int n) {
    if (n < 2) return;
    std::vector<int> leaves;
    for (int p = 0; p < n; ++p) leaves.push_back(p);
    s.fuse(stage, leaves);
}

void bind_kernel_root(Schedule& s, int stage, int64_t threads) {
    const Stage& st = s.stage(stage);
    if (binds_a_block_axis(st)) return;
    int n = serial_spatial_prefix(st);
    if (n == 0) {
        if (!st.leaf.empty() && st.iters[st.leaf[0]].annotation >= IterAnnotation::ThreadX)
            return;  // a one-block kernel: its outermost loop is already thread-bound
        throw CompletionRefused("stage " + std::to_string(stage) + " (" + st.name() +
                                "): no serial data-parallel outer loop to bind");
    }
    bool has_tx = leaf_bound_to(st, IterAnnotation::ThreadX).has_value();
    fuse_prefix(s, stage, n);
    if (has_tx) {
        s.bind(stage, 0, IterAnnotation::BlockX);
        return;
    }
    s.split(stage, 0, threads);
    s.bind(stage, 0, IterAnnotation::BlockX);
    s.bind(stage, 1, IterAnnotation::ThreadX);
}

// The root stage of the kernel `stage` is computed in.
int kernel_root(const Schedule& s, int stage) {
    int k = stage;
    for (int guard = 0; s.stage(k).attach == AttachKind::At && guard < 1000; ++guard)
        k = s.stage(k).attach_stage;
    return k;
}

void fetch_cooperatively(Schedule& s, int stage) {
    const Stage& st = s.stage(stage);
    if (leaf_bound_to(st, IterAnnotation::ThreadX)) return;
    const Stage& root = s.stage(kernel_root(s, stage));
    std::optional<int> tx = leaf_bound_to(root, IterAnnotation::ThreadX);
    if (!tx) return;
    std::optional<int64_t> extent = root.iters[root.leaf[*tx]].const_extent();
    int n = serial_spatial_prefix(st);
    if (!extent || n == 0) return;  // left for lower() to judge
    fuse_prefix(s, stage, n);
    s.split(stage, 0, *extent);
    s.bind(stage, 1, IterAnnotation::ThreadX);
}

}  // namespace

void complete_gpu_schedule(Schedule& s, int64_t threads) {
    int n = static_cast<int>(s.stages().size());
    for (int i = 0; i < n; ++i)
        if (is_loop_stage(s.stage(i)) && s.stage(i).attach == AttachKind::Root)
            bind_kernel_root(s, i, threads);
    for (int i = 0; i < n; ++i) {
        const Stage& st = s.stage(i);
        if (is_loop_stage(st) && st.attach == AttachKind::At && st.scope == StorageScope::Shared)
            fetch_cooperatively(s, i);
    }
}

}  // namespace tessel::testing
