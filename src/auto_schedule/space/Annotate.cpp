// Random annotation of a sketch into a complete schedule (Ansor's initial population rules):
// the open split lengths first, then one rule a line, each a small function over the schedule,
// listed in annotate_rules() below. SearchSpace::annotate runs them.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "AnnotateUtil.h"
#include "SketchUtil.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/space/SearchSpace.h"

namespace tessel::internal {

namespace {

// The constant extent of leaf `pos` of the stage whose extents are `row` as bound inference
// sees it (compute_at stages have the region their consumer needs), or 0 when it is symbolic.
int64_t leaf_extent(const std::vector<Expr>& row, int pos) {
    auto c = as_const_int(row[pos]);
    return c ? *c : 0;
}

// Whether a stage is attached at leaf `pos` of stage `st`.
bool has_attached(const Schedule& s, int st, int pos) {
    int id = s.stage(st).leaf[pos];
    for (const Stage& o : s.stages())
        if (o.attach == AttachKind::At && o.attach_stage == st && o.attach_iter == id) return true;
    return false;
}

bool is_loop_stage(const Schedule& s, int st) {
    const Stage& stage = s.stage(st);
    return !stage.root.empty() && stage.attach != AttachKind::Inlined;
}

// Leading data-parallel leaves without annotation.
int leading_spatial(const Stage& st) {
    int n = 0;
    while (n < static_cast<int>(st.leaf.size()) && st.iters[st.leaf[n]].kind == IterKind::Spatial &&
           st.iters[st.leaf[n]].annotation == IterAnnotation::None)
        ++n;
    return n;
}

// Fuses leaves [first, first + count) when count > 1; returns the fused leaf's position.
int fuse_range(Schedule& s, int st, int first, int count) {
    if (count <= 1) return first;
    std::vector<int> leaves;
    for (int k = 0; k < count; ++k) leaves.push_back(first + k);
    return s.fuse(st, leaves);
}

// --- CPU rules ---------------------------------------------------------------------------------

// A stage no rule tiled goes to the root, inline (when it may) or inside its only reader.
void compute_location(AnnotateContext& a) {
    Schedule& s = a.schedule;
    for (int st = static_cast<int>(s.stages().size()) - 1; st >= 0; --st) {
        const Stage& stage = s.stage(st);
        if (a.sketch.stages[st].kind != SketchStageKind::Plain || stage.is_output ||
            stage.attach != AttachKind::Root || stage.root.empty())
            continue;
        std::vector<int> readers = direct_readers(s, st);
        int target = readers.size() == 1 && is_loop_stage(s, readers[0]) ? readers[0] : -1;
        int dag_op = a.space_ctx.dag_index(s, st);
        bool can_inline = dag_op >= 0 && a.space_ctx.dag.is_inlinable(dag_op);
        int n_at = target >= 0 ? static_cast<int>(s.stage(target).leaf.size()) : 0;
        int64_t choice = pick(a.rng, 1 + (can_inline ? 1 : 0) + n_at);
        if (choice == 0) continue;  // root
        a.attachments_changed();
        if (can_inline && choice == 1) {
            s.compute_inline(st);
            continue;
        }
        s.compute_at(st, target, static_cast<int>(choice - 1 - (can_inline ? 1 : 0)));
    }
}

// Root stages fuse their outer data-parallel loops until the parallelism passes cores x 16.
void parallel(AnnotateContext& a) {
    Schedule& s = a.schedule;
    int64_t want = int64_t{16} * std::max(1, a.space.task().hardware().num_cores);
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        if (!is_loop_stage(s, st) || s.stage(st).attach != AttachKind::Root) continue;
        SketchStageKind kind = a.sketch.stages[st].kind;
        // annotate_cpu_dot chose; the blocked sketch made its fused loop parallel
        if (kind == SketchStageKind::CpuDotOutput || kind == SketchStageKind::BlockedOutput)
            continue;
        int n = leading_spatial(s.stage(st)), k = 0;
        int64_t product = 1;
        // Stops after a loop another stage is computed in (fusing past it would move that
        // stage inwards and change its tile).
        while (k < n && product < want) {
            int64_t e = leaf_extent(a.extents_of(st), k);
            if (e == 0) break;
            product *= e;
            if (has_attached(s, st, k++)) break;
        }
        if (k == 0 || product == 1) continue;
        s.parallel(st, fuse_range(s, st, 0, k));
        a.loops_changed(st);
    }
}

// Tiled stages get an auto-unroll pragma: 0, 16, 64, 512 steps (and 1024 on GPUs).
void auto_unroll(AnnotateContext& a) {
    const std::vector<int64_t>& choices = auto_unroll_choices(a.space.task().target());
    for (int st = 0; st < static_cast<int>(a.schedule.stages().size()); ++st) {
        if (!a.sketch.stages[st].unroll || !is_loop_stage(a.schedule, st)) continue;
        a.schedule.pragma_auto_unroll(st, choices[pick(a.rng, choices.size())]);
    }
}

// The root axis whose index changes fastest along loop `id` of `stage`: a split part's parent,
// a fused loop's inner one, followed up to a root axis.
int fastest_root(const Stage& stage, int id) {
    for (bool moved = true; moved;) {
        moved = false;
        for (const IterRelation& r : stage.relations) {
            bool split_part =
                r.kind == IterRelation::Kind::Split && (r.outer == id || r.inner == id);
            if (split_part || (r.kind == IterRelation::Kind::Fuse && r.fused == id)) {
                id = split_part ? r.parent : r.inner;
                moved = true;
                break;
            }
        }
    }
    return id;
}

// The stage's last data-parallel root axis (its output's unit-stride dimension), or -1.
int last_spatial_root(const Stage& stage) {
    int last = -1;
    for (int id : stage.root)
        if (stage.iters[id].kind == IterKind::Spatial) last = id;
    return last;
}

// The innermost data-parallel loops (no stage attached inside) fused up to max_vector_lanes()
// elements, vectorised. The number of loops fused is drawn among those that make a unit-stride
// vector (below); when none does, nothing is vectorised (a vector along another axis is a
// gather and a scatter: a GEMM with i innermost ran 20x slower vectorised than left to LLVM's
// loop vectoriser).
void vectorize(AnnotateContext& a) {
    Schedule& s = a.schedule;
    const int64_t cap = max_vector_lanes(a.space.task().hardware());
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        if (!is_loop_stage(s, st)) continue;
        const Stage& stage = s.stage(st);
        const std::vector<Expr>& extents = a.extents_of(st);
        int n = static_cast<int>(stage.leaf.size()), m = 0;
        int64_t product = 1;
        std::vector<int64_t> products;
        for (int pos = n - 1; pos >= 0; --pos) {
            const Iterator& it = stage.iters[stage.leaf[pos]];
            // The loop's own extent (the vector width), at least the region bound inference gives.
            int64_t e = std::max(it.const_extent().value_or(0), leaf_extent(extents, pos));
            if (it.kind != IterKind::Spatial || it.annotation != IterAnnotation::None || e == 0 ||
                product * e > cap || has_attached(s, st, pos))
                break;
            product *= e;
            products.push_back(product);
            ++m;
        }
        if (m == 0) continue;
        // Fused loop counts whose vector is one unit-stride ramp: a single loop of more than one
        // iteration among them, walking the unit-stride axis (two, e.g. i3 x j3 fused, index
        // the vector by division and remainder: a gather, 20x slower in a GEMM).
        std::vector<int> dense;
        int innermost = -1, unit_axis = last_spatial_root(stage);
        for (int r = 1; r <= m; ++r) {
            const Iterator& it = stage.iters[stage.leaf[n - r]];
            int64_t e = std::max(it.const_extent().value_or(0), leaf_extent(extents, n - r));
            if (e > 1 && innermost >= 0) break;
            if (e > 1) innermost = stage.leaf[n - r];
            if (innermost >= 0 && fastest_root(stage, innermost) == unit_axis) dense.push_back(r);
        }
        if (dense.empty()) continue;  // LLVM's loop vectoriser may still find the unit stride
        int r = dense[pick(a.rng, dense.size())];
        if (products[r - 1] == 1) continue;
        s.vectorize(st, fuse_range(s, st, n - r, r));
        a.loops_changed(st);
    }
}

// --- GPU rules ---------------------------------------------------------------------------------

// Fuses the leaves of the block and thread levels (positions before any fusion) and binds them
// in turn. The vthread level's leaves are bound one vthread loop each, not fused: a statement
// that depends on one axis's virtual thread only (a GEMM's register copy of A depends on i's)
// then runs once per virtual thread of that axis, not of their product (inject_virtual_threads);
// one fused vthread loop made every copy depend on both and doubled a 2 x 2 register tile's
// shared-memory loads (docs/perf/gpu-gemm-search.md).
void bind_levels(Schedule& s, int st, const std::vector<std::vector<int>>& levels,
                 int64_t max_vthread, const std::vector<Expr>& extents) {
    static const IterAnnotation axes[] = {IterAnnotation::BlockX, IterAnnotation::VThread,
                                          IterAnnotation::ThreadX};
    int removed = 0;  // leaves fused away so far, all before the next level's
    for (size_t l = 0; l < levels.size() && l < 3; ++l) {
        int first = levels[l].front() - removed, count = static_cast<int>(levels[l].size());
        int64_t product = 1;
        for (int pos : levels[l]) product *= std::max<int64_t>(1, leaf_extent(extents, pos));
        if (axes[l] == IterAnnotation::VThread) {
            if (product > max_vthread) continue;
            // Every leaf, those of extent 1 too: a tile mutation may lengthen them.
            for (int k = 0; k < count; ++k) s.bind(st, first + k, IterAnnotation::VThread);
            continue;
        }
        int fused = fuse_range(s, st, first, count);
        removed += count - 1;
        s.bind(st, fused, axes[l]);
    }
}

// Every kernel (root stage) binds its loops: tiled ones by level, cross-thread reductions their
// inner reduction loop, the others their fused data-parallel loops split by a thread count.
void thread_bind(AnnotateContext& a) {
    Schedule& s = a.schedule;
    const HardwareParams& hw = a.space.task().hardware();
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        if (!is_loop_stage(s, st) || s.stage(st).attach != AttachKind::Root) continue;
        const SketchStage& info = a.sketch.stages[st];
        if (info.kind == SketchStageKind::TensorCore) continue;  // bound by its sketch
        const std::vector<Expr> extents = a.extents_of(st);
        a.loops_changed(st);
        if ((info.kind == SketchStageKind::Tiled || info.kind == SketchStageKind::Fused) &&
            !info.levels.empty()) {
            bind_levels(s, st, info.levels, hw.max_vthread_extent, extents);
        } else if (info.kind == SketchStageKind::RowBlock) {
            bind_row_block(a, st);
        } else if (info.kind == SketchStageKind::CrossThreadReduction) {
            int n = leading_spatial(s.stage(st));
            int threads = static_cast<int>(s.stage(st).leaf.size()) - 1;
            s.bind(st, threads, IterAnnotation::ThreadX);
            if (n > 0) s.bind(st, fuse_range(s, st, 0, n), IterAnnotation::BlockX);
        } else {
            int n = leading_spatial(s.stage(st));
            if (n == 0) continue;  // verify_schedule says what is wrong
            int64_t total = 1;
            for (int pos = 0; pos < n; ++pos)
                total *= std::max<int64_t>(1, leaf_extent(extents, pos));
            int fused = fuse_range(s, st, 0, n);
            std::vector<int64_t> counts;
            int64_t warp = std::max(1, hw.warp_size);
            for (int64_t t = warp; t <= hw.max_threads_per_block; t *= 2) {
                counts.push_back(t);
                if (t >= total) break;
            }
            auto [outer, inner] = s.split(st, fused, counts[pick(a.rng, counts.size())]);
            s.bind(st, outer, IterAnnotation::BlockX);
            s.bind(st, inner, IterAnnotation::ThreadX);
        }
    }
}

// Shared-memory stages fetch cooperatively: the innermost axis split by a vector length (1, 2
// or 4 dividing it), the other loops fused, split by the consumer's thread count
// (follow_fused_split) and bound to threadIdx.x, the vector loop innermost and vectorised. The
// vector is split off before the fusion (tutorial 05's stage_copy): split after it, the vector
// lane's address went through the fused loop's division and modulo by the innermost extent, and
// the copies compiled to scalar loads of global memory (docs/perf/gpu-gemm-search.md).
void cooperative_fetch(AnnotateContext& a) {
    Schedule& s = a.schedule;
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        const SketchStage& info = a.sketch.stages[st];
        if (info.kind != SketchStageKind::SharedFetch) continue;
        int n = static_cast<int>(s.stage(st).leaf.size());
        const int64_t inner = leaf_extent(a.extents_of(st), n - 1);
        a.loops_changed(st);
        std::vector<int64_t> lanes = {1};
        for (int64_t v : {2, 4})
            if (inner > 0 && inner % v == 0) lanes.push_back(v);
        int64_t v = lanes[pick(a.rng, lanes.size())];
        if (v > 1) s.split(st, n - 1, v);  // leaves: the others, the axis's outer part, the vector
        int fused = fuse_range(s, st, 0, n);
        auto [outer, threads] = s.follow_fused_split(st, fused, info.thread_steps);
        (void)outer;
        s.bind(st, threads, IterAnnotation::ThreadX);
        if (v > 1) s.vectorize(st, threads + 1);
    }
}

// Bytes of one copy of a shared fetch's buffer (its leaf extents: drawn before the fetch rules
// fuse them).
int64_t fetch_bytes(AnnotateContext& a, int st) {
    const std::vector<Expr>& extents = a.extents_of(st);
    int64_t elems = 1;
    for (size_t pos = 0; pos < extents.size(); ++pos)
        elems *= std::max<int64_t>(1, leaf_extent(extents, static_cast<int>(pos)));
    return elems * op_output(a.schedule.stage(st).op, 0).dtype().bytes();
}

// The shared fetches computed at one loop are pipelined alike (inject_double_buffer needs every
// shared stage at the loop to be): none, double_buffer, or (sm_80 and newer) pipeline of depth 2
// to 4, drawn among the choices whose copies fit the block's shared memory (the padding of rows
// is not counted: verify_schedule rejects the rare state it pushes over). "none" is always among
// them: where one copy of the tiles is already too much, the shared-memory check rejects the state.
// A wgmma sketch's TMA tiles always have a pipeline, 2 to 8 deep (a ScheduleError where none fits).
void pipelining(AnnotateContext& a) {
    Schedule& s = a.schedule;
    std::map<std::pair<int, int>, std::vector<int>> groups;  // (consumer, attach iterator)
    int64_t bytes = 0;
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        if (!is_shared_fetch(a.sketch.stages[st]) || s.stage(st).attach != AttachKind::At) continue;
        groups[{s.stage(st).attach_stage, s.stage(st).attach_iter}].push_back(st);
        bytes += fetch_bytes(a, st);
    }
    // verify_schedule's limit: the runtime opts kernels in to more than the default 48 KB.
    const int64_t limit = a.space.task().target().max_shared_memory_per_block_optin();
    for (const auto& [loop, stages] : groups) {
        int64_t group = 0;
        for (int st : stages) group += fetch_bytes(a, st);
        std::vector<int64_t> fit;
        for (int64_t choice :
             pipelining_choices(a.space.task().target(), a.sketch.stages[stages[0]].kind))
            if (choice == kNoPipelining || limit <= 0 ||
                bytes + group * (pipelining_copies(choice) - 1) <= limit)
                fit.push_back(choice);
        if (fit.empty())
            TESSEL_THROW(ScheduleError)
                << "pipelining: no depth of the TMA pipeline of '" << s.stage(stages[0]).name()
                << "' fits the block's shared memory";
        int64_t choice = fit[pick(a.rng, fit.size())];
        bytes += group * (pipelining_copies(choice) - 1);
        for (int st : stages) apply_pipelining(s, st, choice);
    }
}

// The output stage of a local write cache (Fused) stores its thread's tile from registers:
// where its innermost loop walks the output's unit-stride axis, that loop is split by the widest
// lanes (4 or 2) that divide it and vectorised into 128-bit stores (tutorial 05's step 6; with
// scalar stores the space's version of step 6 ran a tenth slower, docs/perf/gpu-gemm-search.md).
// No draw: a wider aligned store is never slower; tile mutations keep the lanes fitting
// (Mutate.cpp, replay_fitting_lanes). A loop no lanes divide is split by 1 (a vector of one lane:
// scalar stores).
void vectorize_store(AnnotateContext& a) {
    Schedule& s = a.schedule;
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        if (a.sketch.stages[st].kind != SketchStageKind::Fused ||
            s.stage(st).attach != AttachKind::Root)
            continue;
        const Stage& stage = s.stage(st);
        const int last = static_cast<int>(stage.leaf.size()) - 1;
        if (last < 0) continue;
        const Iterator& it = stage.iters[stage.leaf[last]];
        if (it.kind != IterKind::Spatial || it.annotation != IterAnnotation::None ||
            fastest_root(stage, stage.leaf[last]) != last_spatial_root(stage))
            continue;
        // Split by 1 where no lanes divide: the state keeps its steps' shape, so that a tile
        // mutation can widen the store by changing the factor alone.
        const int64_t lanes = store_lanes(leaf_extent(a.extents_of(st), last));
        a.loops_changed(st);
        s.split(st, last, lanes);
        s.vectorize(st, last + 1);
    }
}

}  // namespace

int gpu_tile_misses(const SearchSpace& space, const Sketch& sketch,
                    const std::vector<Step>& steps) {
    const HardwareParams& hw = space.task().hardware();
    int64_t warp = std::max(1, hw.warp_size), sms = std::max(1, hw.num_cores);
    int misses = 0;
    for (const SketchStage& info : sketch.stages) {
        if (info.kind == SketchStageKind::TensorCore && !info.tensor_core_tiles.empty()) {
            int m = tensor_core_tile_misses(space, sketch, info, steps);
            if (m == std::numeric_limits<int>::max()) return m;
            misses += m;
        }
        if (info.kind != SketchStageKind::Tiled || info.thread_steps.empty()) continue;
        // The spatial tile groups: the ones whose level-2 split is a thread step.
        int64_t points = 1, blocks = 1, threads = 1, per_thread = 1;
        for (const TileGroup& g : sketch.tiles) {
            if (g.steps.size() < 4 || std::find(info.thread_steps.begin(), info.thread_steps.end(),
                                                g.steps[1]) == info.thread_steps.end())
                continue;
            std::vector<int64_t> l = tile_lengths(steps, g);
            points *= g.extent;
            blocks *= l[0];
            threads *= l[2];
            for (size_t k = 1; k < l.size(); ++k)
                if (k != 2) per_thread *= l[k];
        }
        if (threads > hw.max_threads_per_block) return std::numeric_limits<int>::max();
        misses += threads < std::min(warp, points) ? 1 : 0;
        misses += blocks < std::min(sms, std::max<int64_t>(1, points / warp)) ? 1 : 0;
        misses += per_thread > kMaxOutputsPerThread ? 1 : 0;
    }
    return misses;
}

bool gpu_shared_memory_fits(const SearchSpace& space, const Sketch& sketch, const Schedule& s,
                            std::vector<std::vector<Expr>>* inferred) {
    const HardwareParams& hw = space.task().hardware();
    if (std::none_of(sketch.stages.begin(), sketch.stages.end(), is_shared_fetch)) return true;
    auto extents = s.infer_extents();
    int64_t bytes = 0;
    for (int st = 0; st < static_cast<int>(sketch.stages.size()); ++st) {
        if (!is_shared_fetch(sketch.stages[st])) continue;
        int64_t elems = 1;
        for (size_t pos = 0; pos < extents[st].size(); ++pos)
            elems *= std::max<int64_t>(1, leaf_extent(extents[st], static_cast<int>(pos)));
        const Stage& stage = s.stage(st);
        int64_t copies = stage.pipeline_depth ? stage.pipeline_depth : stage.double_buffer ? 2 : 1;
        bytes += elems * op_output(stage.op, 0).dtype().bytes() * copies;
    }
    if (inferred) *inferred = std::move(extents);
    // verify_schedule's limit: the runtime opts kernels in to more than the default 48 KB.
    const int64_t limit = std::max<int64_t>(
        hw.max_shared_memory_per_block, space.task().target().max_shared_memory_per_block_optin());
    return limit <= 0 || bytes <= limit;
}

const std::vector<Expr>& AnnotateContext::extents_of(int stage) {
    if (extents_.empty() || stale_[stage]) set_extents(schedule.infer_extents());
    return extents_[stage];
}

void AnnotateContext::loops_changed(int stage) {
    if (!stale_.empty()) stale_[stage] = true;
}

void AnnotateContext::attachments_changed() {
    extents_.clear();
    stale_.clear();
}

void AnnotateContext::set_extents(std::vector<std::vector<Expr>> extents) {
    extents_ = std::move(extents);
    stale_.assign(extents_.size(), false);
}

bool is_shared_fetch(const SketchStage& info) {
    return info.kind == SketchStageKind::SharedFetch ||
           info.kind == SketchStageKind::TensorCoreFetch ||
           info.kind == SketchStageKind::WgmmaFetch;
}

std::vector<int64_t> pipelining_choices(const Target& target, SketchStageKind kind) {
    if (kind == SketchStageKind::WgmmaFetch) return {2, 3, 4, 5, 6, 7, 8};
    if (target.compute_capability() >= 80) return {kNoPipelining, kDoubleBuffer, 2, 3, 4};
    return {kNoPipelining, kDoubleBuffer};
}

int64_t pipelining_copies(int64_t choice) {
    return choice == kNoPipelining ? 1 : choice == kDoubleBuffer ? 2 : choice;
}

void apply_pipelining(Schedule& s, int stage, int64_t choice) {
    if (choice == kDoubleBuffer) s.double_buffer(stage);
    if (choice >= 2) s.pipeline(stage, choice);
}

int64_t store_lanes(int64_t extent) {
    for (int64_t lanes : {4, 2})
        if (extent > 0 && extent % lanes == 0) return lanes;
    return 1;
}

const std::vector<int64_t>& auto_unroll_choices(const Target& target) {
    static const std::vector<int64_t> cpu = {0, 16, 64, 512}, gpu = {0, 16, 64, 512, 1024};
    return target.is_gpu() ? gpu : cpu;
}

std::vector<AnnotateRule> annotate_rules(const Target& target) {
    if (target.is_gpu())
        return {
            {"thread_bind", thread_bind},         {"cooperative_fetch", cooperative_fetch},
            {"read_caches", read_caches},         {"tensor_core", annotate_tensor_core},
            {"pipelining", pipelining},           {"auto_unroll", auto_unroll},
            {"vectorize_store", vectorize_store},
        };
    return {{"cpu_dot", annotate_cpu_dot},          {"blocked", annotate_blocked},
            {"compute_location", compute_location}, {"parallel", parallel},
            {"auto_unroll", auto_unroll},           {"vectorize", vectorize}};
}

int64_t max_vector_lanes(const HardwareParams& hw) {
    return std::max<int64_t>(16, hw.vector_unit_bytes);
}

void fill_tile_sizes(const SearchSpace& space, const Sketch& sketch, std::vector<Step>& steps,
                     std::mt19937_64& rng) {
    const bool innermost_first = !space.task().target().is_gpu();
    for (const TileGroup& g : sketch.tiles) {
        const auto& options = space.factorizations(g);
        if (options.empty())
            TESSEL_THROW(ScheduleError) << "tile sizes: no factorisation of " << g.extent;
        if (!innermost_first || g.steps.empty()) {
            set_tile_lengths(steps, g, options[pick(rng, options.size())]);
            continue;
        }
        // On CPUs the innermost length first, uniformly among those possible, then the rest:
        // drawn uniformly over whole factorisations, most would leave the vectorised innermost
        // tile at 1 or 2 (a power of two's exponents are spread over every level).
        std::vector<int64_t> inner;
        for (const auto& o : options) inner.push_back(o.back());
        std::sort(inner.begin(), inner.end());
        inner.erase(std::unique(inner.begin(), inner.end()), inner.end());
        int64_t last = inner[pick(rng, inner.size())];
        std::vector<size_t> with_last;
        for (size_t k = 0; k < options.size(); ++k)
            if (options[k].back() == last) with_last.push_back(k);
        set_tile_lengths(steps, g, options[with_last[pick(rng, with_last.size())]]);
    }
}

void set_tile_lengths(std::vector<Step>& steps, const TileGroup& g,
                      const std::vector<int64_t>& lengths) {
    for (size_t k = 0; k < g.steps.size(); ++k)
        std::get<SplitStep>(steps[g.steps[k]]).factor = lengths[k + 1];
}

std::vector<int64_t> tile_lengths(const std::vector<Step>& steps, const TileGroup& g) {
    std::vector<int64_t> lengths(g.steps.size() + 1);
    int64_t inner = 1;
    for (size_t k = 0; k < g.steps.size(); ++k) {
        lengths[k + 1] = std::get<SplitStep>(steps[g.steps[k]]).factor;
        inner *= lengths[k + 1];
    }
    lengths[0] = g.extent / std::max<int64_t>(1, inner);
    return lengths;
}

}  // namespace tessel::internal
