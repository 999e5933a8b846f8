// GPU sketch rules for row groups: an output read row by row through row reductions (softmax's
// divide reads the row max and the row sum, layer norm's output the mean and the variance) gets a
// sketch in which the reductions are computed at the output's row loop, across the threads that
// share the row, and an input the group reads more than once is staged in shared memory there
// (tutorials/06_gpu_softmax.py, steps 1 and 2). Ansor fuses a stage only into an element-wise
// matched consumer; these rules fuse a reduction into a consumer that reads one point of it per
// row, so the row is read from global memory once instead of once per kernel.
//
//   row_block      a data-parallel stage with a row reduction among its producers (annotation
//                  fuses its rows onto blockIdx.x, maybe a few a block on threadIdx.y, and splits
//                  its last axis over threadIdx.x and a vector); a branch, its other sketches stay
//   row_reduction  a reduction read only by a row_block stage and the row reductions computed at
//                  it: computed at the row loop (the last but one), in registers, its reduction
//                  loops fused into one (annotation splits it by the row's thread count)
//   row_fetch      an input (placeholder) read by two or more stages of one row group: cache_read
//                  into shared memory at the row loop (a branch)
//
// Annotation: AnnotateRows.cpp.
#include <algorithm>
#include <set>

#include "SketchUtil.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

using Made = std::vector<std::pair<Sketch, int>>;

bool fresh(const Stage& s) {
    return s.leaf == s.root && s.attach == AttachKind::Root;
}

int64_t warp_size(const SketchContext& ctx) {
    return std::max(1, ctx.task.hardware().warp_size);
}

void trace(Sketch& sk, int st, const std::string& what) {
    sk.trace.push_back(sk.schedule.stage(st).name() + ": " + what);
}

// A RowBlock stage's row loop (its last leaf but one), where its group is computed.
int row_leaf(const Schedule& s, int c) {
    return static_cast<int>(s.stage(c).leaf.size()) - 2;
}

// The stages that read stage `st`, seen through inlined stages.
std::vector<int> effective_readers(const Sketch& sk, int st) {
    std::vector<int> out, stack = {st};
    std::set<int> seen;
    while (!stack.empty()) {
        int cur = stack.back();
        stack.pop_back();
        for (int r : direct_readers(sk.schedule, cur)) {
            if (!seen.insert(r).second) continue;
            if (sk.stages[r].kind == SketchStageKind::Inlined)
                stack.push_back(r);
            else
                out.push_back(r);
        }
    }
    return out;
}

// The RowBlock stage whose row group alone reads stage `st` (every reader is that stage or a
// RowReduction computed at it), or -1; `passes` receives how many stages of the group read it.
int row_group_reading(const Sketch& sk, int st, int* passes = nullptr) {
    std::vector<int> readers = effective_readers(sk, st);
    int block = -1;
    for (int r : readers) {
        int c = -1;
        if (sk.stages[r].kind == SketchStageKind::RowBlock)
            c = r;
        else if (sk.stages[r].kind == SketchStageKind::RowReduction)
            c = sk.schedule.stage(r).attach_stage;
        if (c < 0 || (block >= 0 && c != block)) return -1;
        block = c;
    }
    if (passes) *passes = static_cast<int>(readers.size());
    return block;
}

// Whether DAG operation `r` reduces rows of `c`: one reduction axis as long as c's last axis, its
// data-parallel axes c's others (a trailing 1 allowed: keepdims).
bool reduces_rows_of(const DAGAnalysis& dag, int r, const std::vector<int64_t>& shape) {
    if (!dag.has_reduction(r) || dag.reduction_extents(r) != std::vector<int64_t>{shape.back()})
        return false;
    std::vector<int64_t> rows(shape.begin(), shape.end() - 1), sp = dag.spatial_extents(r);
    if (sp == rows) return true;
    rows.push_back(1);
    return sp == rows;
}

// Whether a row reduction of DAG operation `c` reaches it through data-parallel operations or
// other row reductions.
bool has_row_reduction(const DAGAnalysis& dag, int c, const std::vector<int64_t>& shape) {
    std::vector<int> stack = dag.producers(c);
    std::set<int> seen(stack.begin(), stack.end());
    while (!stack.empty()) {
        int p = stack.back();
        stack.pop_back();
        if (dag.is_placeholder(p)) continue;
        if (reduces_rows_of(dag, p, shape)) return true;
        if (dag.has_reduction(p) || dag.is_output(p)) continue;
        for (int q : dag.producers(p))
            if (seen.insert(q).second) stack.push_back(q);
    }
    return false;
}

// --- row_block ----------------------------------------------------------------------------------

RuleCondition row_block_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    const Stage& s = sk.schedule.stage(st);
    if (!ctx.gpu() || sk.stages[st].kind != SketchStageKind::Plain || !fresh(s) ||
        has_reduction_axes(s))
        return RuleCondition::Skip;
    int c = ctx.dag_index(sk.schedule, st);
    if (c < 0) return RuleCondition::Skip;
    std::vector<int64_t> shape = ctx.dag.spatial_extents(c);
    if (shape.size() < 2 || *std::min_element(shape.begin(), shape.end()) < 1 ||
        shape.back() < warp_size(ctx))
        return RuleCondition::Skip;
    return has_row_reduction(ctx.dag, c, shape) ? RuleCondition::Apply : RuleCondition::Skip;
}

Made row_block_apply(const SketchContext&, const Sketch& in, int st) {
    Sketch sk = in;
    sk.stages[st].kind = SketchStageKind::RowBlock;
    sk.stages[st].unroll = true;
    trace(sk, st, "row_block");
    return {{std::move(sk), st - 1}};
}

// --- row_reduction ------------------------------------------------------------------------------

RuleCondition row_reduction_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    const Stage& s = sk.schedule.stage(st);
    if (!ctx.gpu() || sk.stages[st].kind != SketchStageKind::Plain || !fresh(s) ||
        !has_reduction_axes(s) || s.is_output)
        return RuleCondition::Skip;
    return row_group_reading(sk, st) >= 0 ? RuleCondition::ApplyAndSkipRest : RuleCondition::Skip;
}

Made row_reduction_apply(const SketchContext&, const Sketch& in, int st) {
    Sketch sk = in;
    Schedule& s = sk.schedule;
    int c = row_group_reading(sk, st);
    s.compute_at(st, c, row_leaf(s, c));
    s.set_scope(st, StorageScope::Local);
    int n_sp = fuse_reduction_loops(s, st);
    // One point a row: the reader reads the reduction per row, not across rows.
    std::vector<Expr> extents = s.infer_extents()[st];
    for (int pos = 0; pos < n_sp; ++pos) {
        std::optional<int64_t> e = as_const_int(extents[pos]);
        if (!e || *e != 1)
            TESSEL_THROW(ScheduleError)
                << "row_reduction: stage '" << s.stage(st).name() << "' is needed at more "
                << "than one point per row of '" << s.stage(c).name() << "'";
    }
    sk.stages[st].kind = SketchStageKind::RowReduction;
    trace(sk, st, "row_reduction");
    return {{std::move(sk), st - 1}};
}

// --- row_fetch ----------------------------------------------------------------------------------

RuleCondition row_fetch_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    // Inputs only: a computed stage the group reads is inlined (its row recomputed per pass).
    if (!ctx.gpu() || sk.stages[st].kind != SketchStageKind::Placeholder)
        return RuleCondition::Skip;
    int passes = 0;
    return row_group_reading(sk, st, &passes) >= 0 && passes >= 2 ? RuleCondition::Apply
                                                                  : RuleCondition::Skip;
}

Made row_fetch_apply(const SketchContext& ctx, const Sketch& in, int st) {
    Sketch sk = in;
    Schedule& s = sk.schedule;
    int c = row_group_reading(sk, st);
    int shared = s.cache_read(st, "shared", direct_readers(s, st));
    insert_sketch_stage(sk, shared);
    if (c >= shared) ++c;
    s.compute_at(shared, c, row_leaf(s, c));
    // The copy must fit a block's shared memory (a row, or what the group reads of it per row).
    int64_t elems = 1;
    std::vector<Expr> extents = s.infer_extents()[shared];
    for (const Expr& e : extents) {
        std::optional<int64_t> n = as_const_int(e);
        if (!n)
            TESSEL_THROW(ScheduleError)
                << "row_fetch: the copy of '" << s.stage(st).name() << "' has a symbolic extent";
        elems *= *n;
    }
    int64_t bytes = elems * op_output(s.stage(shared).op, 0).dtype().bytes();
    int64_t limit = ctx.task.hardware().max_shared_memory_per_block;
    if (limit > 0 && bytes + kRowReductionScratchBytes > limit)
        TESSEL_THROW(ScheduleError) << "row_fetch: a row of '" << s.stage(st).name() << "' ("
                                    << bytes << " bytes) exceeds the shared memory of a block";
    sk.stages[shared].kind = SketchStageKind::RowFetch;
    trace(sk, shared, "row_fetch");
    return {{std::move(sk), st}};  // the input itself goes on through the rules
}

}  // namespace

SketchRule row_block_rule() {
    return {"row_block", row_block_condition, row_block_apply};
}

SketchRule row_reduction_rule() {
    return {"row_reduction", row_reduction_condition, row_reduction_apply};
}

SketchRule row_fetch_rule() {
    return {"row_fetch", row_fetch_condition, row_fetch_apply};
}

}  // namespace tessel::internal
