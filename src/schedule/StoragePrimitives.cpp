// Storage-layout primitives: storage_split, storage_reorder, storage_align, storage_swizzle. They
// change how a stage's buffer is laid out (lower/ScheduleOps maps indices onto the layout,
// StorageFlatten flattens the padded strides), never the DAG or the loops.
#include <algorithm>
#include <sstream>

#include "ScheduleInternal.h"

namespace tessel {

using internal::schedule_fail;
using A = ScheduleAccess;

namespace {

// More copies than this would not fit a useful tile in shared memory, and cp.async.wait_group
// takes its count as an immediate.
constexpr int kMaxPipelineDepth = 8;

std::string dim_name(const Stage& st, const StorageDim& d) {
    const ComputeOpNode* c = as_compute(st.op);
    std::string n = c->axis[d.axis].var().name();
    if (d.part == StorageDim::Part::Outer) return n + ".outer";
    if (d.part == StorageDim::Part::Inner) return n + ".inner";
    return n;
}

std::string layout_string(const Stage& st) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < st.storage.size(); ++i)
        os << (i ? ", " : "") << i << ": " << dim_name(st, st.storage[i]);
    os << "]";
    return os.str();
}

// The stage, checked to own a buffer whose layout the schedule decides.
Stage& layout_stage(Schedule& s, const char* prim, int stage) {
    Stage& st = A::loop_stage(s, prim, stage);
    if (st.is_output)
        schedule_fail(s, prim, stage,
                      "is an output; its buffer is the caller's and keeps the compact layout "
                      "(cache_write it and lay out the cache stage)");
    if (st.attach == AttachKind::Inlined)
        schedule_fail(s, prim, stage, "is inlined; it has no storage to lay out");
    return st;
}

void check_dim(Schedule& s, const char* prim, int stage, int dim) {
    const Stage& st = s.stages()[stage];
    if (dim < 0 || dim >= static_cast<int>(st.storage.size())) {
        std::ostringstream os;
        os << "storage dimension " << dim << " does not exist; the storage dimensions are "
           << layout_string(st);
        schedule_fail(s, prim, stage, os.str());
    }
}

}  // namespace

void Schedule::storage_split(int stage, int dim, int64_t factor) {
    const char* prim = "storage_split";
    Stage& st = layout_stage(*this, prim, stage);
    check_dim(*this, prim, stage, dim);
    std::ostringstream os;
    if (st.storage[dim].part != StorageDim::Part::Whole) {
        os << "storage dimension " << dim << " (" << dim_name(st, st.storage[dim])
           << ") is already blocked; storage dimensions " << layout_string(st);
        schedule_fail(*this, prim, stage, os.str());
    }
    if (factor <= 0 || factor > (int64_t(1) << 30)) {
        os << "factor " << factor << " for storage dimension " << dim
           << " must be positive (and at most 2^30)";
        schedule_fail(*this, prim, stage, os.str());
    }
    StorageDim outer = st.storage[dim], inner = st.storage[dim];
    outer.part = StorageDim::Part::Outer;
    inner.part = StorageDim::Part::Inner;
    outer.factor = inner.factor = factor;
    inner.align_factor = inner.align_offset = 0;
    st.storage[dim] = outer;
    st.storage.insert(st.storage.begin() + dim + 1, inner);
    record(StorageSplitStep{stage, dim, factor});
}

void Schedule::storage_reorder(int stage, const std::vector<int>& order) {
    const char* prim = "storage_reorder";
    Stage& st = layout_stage(*this, prim, stage);
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    bool perm = sorted.size() == st.storage.size();
    for (size_t i = 0; perm && i < sorted.size(); ++i) perm = sorted[i] == static_cast<int>(i);
    if (!perm) {
        std::ostringstream os;
        os << "order [";
        for (size_t i = 0; i < order.size(); ++i) os << (i ? ", " : "") << order[i];
        os << "] is not a permutation of the " << st.storage.size() << " storage dimensions "
           << layout_string(st);
        schedule_fail(*this, prim, stage, os.str());
    }
    std::vector<StorageDim> dims;
    for (int o : order) dims.push_back(st.storage[o]);
    st.storage = dims;
    record(StorageReorderStep{stage, order});
}

void Schedule::storage_align(int stage, int dim, int64_t factor, int64_t offset) {
    const char* prim = "storage_align";
    Stage& st = layout_stage(*this, prim, stage);
    check_dim(*this, prim, stage, dim);
    std::ostringstream os;
    if (factor <= 0 || factor > (int64_t(1) << 20)) {
        os << "factor " << factor << " for storage dimension " << dim << " ("
           << dim_name(st, st.storage[dim]) << ") must be positive (and at most 2^20)";
        schedule_fail(*this, prim, stage, os.str());
    }
    if (offset < 0 || offset >= factor) {
        os << "offset " << offset << " for storage dimension " << dim << " must be in [0, "
           << factor << ")";
        schedule_fail(*this, prim, stage, os.str());
    }
    if (st.swizzle_bits)
        schedule_fail(*this, prim, stage,
                      "it is swizzled (storage_swizzle); a swizzled layout needs no padding, and "
                      "padded rows would break its row arithmetic: use one or the other");
    st.storage[dim].align_factor = factor;
    st.storage[dim].align_offset = offset;
    record(StorageAlignStep{stage, dim, factor, offset});
}

void Schedule::storage_swizzle(int stage, int bits) {
    const char* prim = "storage_swizzle";
    Stage& st = layout_stage(*this, prim, stage);
    if (bits < 1 || bits > 3)
        schedule_fail(*this, prim, stage,
                      "bits " + std::to_string(bits) +
                          " must be 1, 2 or 3 (2^bits phases of 16-byte chunks; 3 spans all 32 "
                          "banks)");
    if (st.swizzle_bits)
        schedule_fail(*this, prim, stage,
                      "it is already swizzled (bits " + std::to_string(st.swizzle_bits) + ")");
    for (size_t k = 0; k < st.storage.size(); ++k)
        if (st.storage[k].align_factor)
            schedule_fail(*this, prim, stage,
                          "storage dimension " + std::to_string(k) + " (" +
                              dim_name(st, st.storage[k]) +
                              ") is padded (storage_align); a swizzled layout needs no padding: "
                              "use one or the other");
    st.swizzle_bits = bits;
    record(StorageSwizzleStep{stage, bits});
}

void Schedule::double_buffer(int stage) {
    const char* prim = "double_buffer";
    Stage& st = layout_stage(*this, prim, stage);
    if (st.double_buffer) schedule_fail(*this, prim, stage, "it is already double-buffered");
    if (st.pipeline_depth)
        schedule_fail(*this, prim, stage,
                      "it is already pipelined (pipeline(" + std::to_string(st.pipeline_depth) +
                          ")); a stage is either double-buffered or pipelined");
    st.double_buffer = true;
    record(DoubleBufferStep{stage});
}

void Schedule::pipeline(int stage, int64_t depth) {
    const char* prim = "pipeline";
    Stage& st = layout_stage(*this, prim, stage);
    if (depth < 2)
        schedule_fail(*this, prim, stage,
                      "depth " + std::to_string(depth) +
                          " is less than 2 (the copies of the buffer: one computed on, the others "
                          "being fetched)");
    if (depth > kMaxPipelineDepth)
        schedule_fail(*this, prim, stage,
                      "depth " + std::to_string(depth) + " is more than " +
                          std::to_string(kMaxPipelineDepth) + " copies of the buffer");
    if (st.double_buffer)
        schedule_fail(*this, prim, stage,
                      "it is already double-buffered; a stage is either double-buffered or "
                      "pipelined (pipeline(2) is the asynchronous form of double_buffer)");
    if (st.pipeline_depth)
        schedule_fail(*this, prim, stage,
                      "it is already pipelined (depth " + std::to_string(st.pipeline_depth) + ")");
    st.pipeline_depth = static_cast<int>(depth);
    record(PipelineStep{stage, depth});
}

void Schedule::tma(int stage) {
    const char* prim = "tma";
    Stage& st = layout_stage(*this, prim, stage);
    if (st.tma) schedule_fail(*this, prim, stage, "it is already fetched by TMA");
    if (st.double_buffer)
        schedule_fail(*this, prim, stage,
                      "it is double-buffered; TMA copies are asynchronous: pipeline(depth) the "
                      "stage instead");
    st.tma = true;
    record(TmaStep{stage});
}

void Schedule::warp_specialize(int stage) {
    const char* prim = "warp_specialize";
    Stage& st = layout_stage(*this, prim, stage);
    if (!st.tma)
        schedule_fail(*this, prim, stage,
                      "it is not fetched by tma(); a producer warp group issues TMA copies: "
                      "tma() (and pipeline(depth)) the stage first");
    if (st.warp_specialized) schedule_fail(*this, prim, stage, "it is already warp-specialized");
    st.warp_specialized = true;
    record(WarpSpecializeStep{stage});
}

void Schedule::tma_store(int stage) {
    const char* prim = "tma_store";
    Stage& st = A::loop_stage(*this, prim, stage);
    if (st.scope != StorageScope::Global)
        schedule_fail(*this, prim, stage,
                      std::string("it is in ") + scope_name(st.scope) +
                          " memory; TMA stores into global tensors (the kernel's outputs)");
    if (st.attach == AttachKind::Inlined)
        schedule_fail(*this, prim, stage, "is inlined; it stores nothing");
    if (st.attach == AttachKind::At)
        schedule_fail(*this, prim, stage,
                      "is computed at another stage's loop; a TMA store copies a shared stage "
                      "computed at one of this stage's own loops");
    if (st.tma_store) schedule_fail(*this, prim, stage, "it is already stored by TMA");
    st.tma_store = true;
    record(TmaStoreStep{stage});
}

}  // namespace tessel
