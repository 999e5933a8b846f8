// Mutation of a complete state (Ansor's evolutionary operators): each mutation edits the step
// list (a split factor, a pragma value, a compute_at loop, the loops fused into a parallel one,
// the pipelining of shared fetches, the layout of shared tiles with read caches) and replays it;
// follow splits follow the edited factors. One function a mutation, picked by weight in
// SearchSpace::mutate at the bottom.
#include <algorithm>
#include <map>

#include "AnnotateUtil.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/schedule/InferBounds.h"

namespace tessel {

namespace {

using internal::pick;
using Steps = std::vector<Step>;

// The schedule as it is before step `index`.
Schedule prefix(const SearchSpace& space, const Steps& steps, size_t index) {
    return replay(space.task().initial_schedule(), Steps(steps.begin(), steps.begin() + index));
}

bool is_vector_copy(const SketchStage& info) {
    return info.kind == SketchStageKind::SharedFetch || info.kind == SketchStageKind::ReadCache ||
           info.kind == SketchStageKind::Fused;
}

// The annotation's vector splits of a GPU state: for each vectorised copy (a shared fetch, a
// read cache or an output's store, annotated by cooperative_fetch, read_caches or
// vectorize_store), the index of the split whose factor is its lanes (the last split of its
// stage before the vectorize).
std::vector<int> vector_splits(const Sketch& sk, const SearchState& st, const Steps& steps) {
    std::vector<int> out;
    for (size_t j = st.sketch_steps; j < steps.size(); ++j) {
        const auto* a = std::get_if<AnnotateStep>(&steps[j]);
        if (!a || a->annotation != IterAnnotation::Vectorize ||
            !is_vector_copy(sk.stages[a->stage]))
            continue;
        for (size_t i = j; i-- > static_cast<size_t>(st.sketch_steps);)
            if (const auto* sp = std::get_if<SplitStep>(&steps[i]); sp && sp->stage == a->stage) {
                out.push_back(static_cast<int>(i));
                break;
            }
    }
    return out;
}

// Whether `step` leaves every loop extent as it was (a pragma, a buffer's storage).
bool storage_only(const Step& step) {
    return std::holds_alternative<PragmaStep>(step) ||
           std::holds_alternative<DoubleBufferStep>(step) ||
           std::holds_alternative<PipelineStep>(step) ||
           std::holds_alternative<StorageAlignStep>(step) ||
           std::holds_alternative<StorageSwizzleStep>(step);
}

// Whether `step` is a vectorised copy's own (vector_splits: no stage is computed inside a copy,
// and a copy's steps leave the regions of the others as they were).
bool copy_step(const Sketch& sk, const Step& step) {
    return !std::holds_alternative<CacheReadStep>(step) &&
           !std::holds_alternative<CacheWriteStep>(step) &&
           !std::holds_alternative<RfactorStep>(step) &&
           is_vector_copy(sk.stages[internal::step_stage(step)]);
}

// Each split of `splits` (step indices, ascending) takes the widest lanes that divide the loop
// it splits, whose extent is `extents`' entry: a store the widest of all, wider too (as
// annotation gives it; 1: a loop of one vector lane, the stores stay scalar), a copy its lanes
// or a half or a quarter of them. False when a copy has no lanes above 1 that divide; `changed`
// says whether a factor changed.
bool fit_lanes(const Sketch& sk, const std::vector<int>& splits,
               const std::vector<std::optional<int64_t>>& extents, Steps& steps, bool& changed) {
    changed = false;
    for (size_t k = 0; k < splits.size(); ++k) {
        auto& split = std::get<SplitStep>(steps[splits[k]]);
        std::optional<int64_t> extent = extents[k];
        if (!extent) return false;
        const int64_t before = split.factor;
        if (sk.stages[split.stage].kind == SketchStageKind::Fused) {
            split.factor = internal::store_lanes(*extent);
        } else {
            while (split.factor > 1 && *extent % split.factor != 0) split.factor /= 2;
            if (split.factor < 2) return false;
        }
        changed = changed || split.factor != before;
    }
    return true;
}

// After a tile-size change of a GPU state, each vectorised copy whose lanes no longer divide
// the loop they split (a read cache's slice, a fetch's tile) takes the widest lanes that do
// (half, a quarter); without it the guarded vector loop fails the check and the mutant is lost,
// and with it most mutants of states with 4-lane copies (the fast ones) were (tested). The
// mutant is given up (nullopt) when no lanes above 1 divide a copy.
//
// The extents come from one bound inference, read by the split loops' iterator ids: where every
// step from the first vector split to the last is a copy's or storage-only, each split loop's
// extent is the one the schedule before the split has. Where that holds to the mutant's last
// step, the inference is of the whole mutant, and when the lanes fit as they are (most
// mutants) that schedule is the answer and keeps its bounds for the check that follows
// (Schedule's memo): one inference in all. Where other steps come between the splits (a stage
// inserted, another stage's loops changed), one inference per split, of the schedule before it.
std::optional<Schedule> replay_fitting_lanes(const SearchSpace& space, const SearchState& st,
                                             Steps& steps) {
    const Sketch& sk = space.sketches()[st.sketch];
    const Schedule& initial = space.task().initial_schedule();
    std::vector<int> splits = vector_splits(sk, st, steps);
    if (!space.task().target().is_gpu() || splits.empty()) return replay(initial, steps);
    Schedule s = prefix(space, steps, splits[0]);
    auto copies_only = [&](size_t end) {  // steps [first split, end)
        for (size_t i = splits[0]; i < end; ++i)
            if (!storage_only(steps[i]) && !copy_step(sk, steps[i])) return false;
        return true;
    };
    std::vector<std::optional<int64_t>> extents;
    bool changed = false;
    if (!copies_only(splits.back() + 1)) {
        size_t at = splits[0];
        for (int i : splits) {
            while (at < static_cast<size_t>(i)) s.apply(steps[at++]);
            const auto& split = std::get<SplitStep>(steps[i]);
            extents.push_back(as_const_int(s.infer_extents()[split.stage][split.iter]));
        }
        if (!fit_lanes(sk, splits, extents, steps, changed)) return std::nullopt;
        return replay(initial, steps);
    }
    const bool whole = copies_only(steps.size());
    std::vector<std::pair<int, int>> loops;  // (stage, iterator id) of each split
    size_t next = 0;
    for (size_t i = splits[0]; i < (whole ? steps.size() : splits.back() + 1); ++i) {
        s.apply(steps[i]);
        if (next < splits.size() && static_cast<int>(i) == splits[next]) {
            int stage = std::get<SplitStep>(steps[i]).stage;  // the loop it split: its parent
            loops.emplace_back(stage, s.stage(stage).relations.back().parent);
            ++next;
        }
    }
    std::vector<StageBounds> bounds = infer_bounds(s);
    for (const auto& [stage, id] : loops)
        extents.push_back(as_const_int(bounds[stage].iter_extents[id]));
    if (!fit_lanes(sk, splits, extents, steps, changed)) return std::nullopt;
    if (whole && !changed) return s;
    return replay(initial, steps);
}

// Moves a factor of one level's length to another level of a random tile group.
bool mutate_tile_size(const SearchSpace& space, const SearchState& st, Steps& steps,
                      std::mt19937_64& rng) {
    const Sketch& sk = space.sketches()[st.sketch];
    std::vector<const TileGroup*> groups;
    for (const TileGroup& g : sk.tiles)
        if (g.extent > 1) groups.push_back(&g);
    if (groups.empty()) return false;
    const TileGroup& g = *groups[pick(rng, groups.size())];
    std::vector<int64_t> lengths = internal::tile_lengths(steps, g);
    std::vector<int> from;
    for (size_t l = 0; l < lengths.size(); ++l)
        if (lengths[l] > 1) from.push_back(static_cast<int>(l));
    if (from.empty() || lengths.size() < 2) return false;
    int src = from[pick(rng, from.size())];
    std::vector<int64_t> divisors;
    for (int64_t d = 2; d <= lengths[src]; ++d)
        if (lengths[src] % d == 0) divisors.push_back(d);
    int64_t d = divisors[pick(rng, divisors.size())];
    int dst = static_cast<int>(pick(rng, lengths.size() - 1));
    if (dst >= src) ++dst;
    lengths[src] /= d;
    lengths[dst] *= d;
    if (g.max_innermost > 0 && lengths.back() > g.max_innermost) return false;
    internal::set_tile_lengths(steps, g, lengths);
    return true;  // replay_fitting_lanes fits the copies' lanes
}

bool mutate_auto_unroll(const SearchSpace& space, const SearchState&, Steps& steps,
                        std::mt19937_64& rng) {
    std::vector<int> pragmas;
    for (size_t i = 0; i < steps.size(); ++i)
        if (std::holds_alternative<PragmaStep>(steps[i])) pragmas.push_back(static_cast<int>(i));
    if (pragmas.empty()) return false;
    auto& p = std::get<PragmaStep>(steps[pragmas[pick(rng, pragmas.size())]]);
    std::vector<int64_t> others;
    for (int64_t v : internal::auto_unroll_choices(space.task().target()))
        if (v != p.value) others.push_back(v);
    p.value = others[pick(rng, others.size())];
    return true;
}

bool mutate_compute_location(const SearchSpace& space, const SearchState& st, Steps& steps,
                             std::mt19937_64& rng) {
    std::vector<int> at;
    for (size_t i = st.sketch_steps; i < steps.size(); ++i)
        if (std::holds_alternative<ComputeAtStep>(steps[i])) at.push_back(static_cast<int>(i));
    if (at.empty()) return false;
    int index = at[pick(rng, at.size())];
    auto& c = std::get<ComputeAtStep>(steps[index]);
    int n = static_cast<int>(prefix(space, steps, index).stage(c.target).leaf.size());
    if (n < 2) return false;
    int next = static_cast<int>(pick(rng, n - 1));
    c.target_iter = next >= c.target_iter ? next + 1 : next;
    return true;
}

// Shifts the leaf positions at or after `from` of stage `stage` in every step by `delta`.
struct ShiftLeaves {
    int target, from, delta;
    void shift(int& pos, int st) const {
        if (st == target && pos >= from) pos += delta;
    }
    void stage(const char*, int&) {}
    void stages(const char*, std::vector<int>&) {}
    void leaf(const char*, int& pos, int st) { shift(pos, st); }
    void leaves(const char*, std::vector<int>& v, int st) {
        for (int& p : v) shift(p, st);
    }
    void leaf_order(const char*, std::vector<int>&, int) {}
    void dim(const char*, int&, int) {}
    void dim_order(const char*, std::vector<int>&, int) {}
    template <typename T>
    void number(const char*, T&, T = T{}) {}
    void text(const char*, std::string&) {}
    template <typename E>
    void choice(const char*, E&, E = E{}) {}
    void step_index(const char*, int&) {}
    void step_indices(const char*, std::vector<int>&) {}
    void numbers(const char*, std::vector<int>&) {}
    void split_factor(const char*, const char*, int64_t&, bool&) {}
};

// Changes how many outer loops a root stage fuses into its parallel loop.
bool mutate_parallel(const SearchSpace& space, const SearchState& st, Steps& steps,
                     std::mt19937_64& rng) {
    std::vector<int> par;
    for (size_t i = st.sketch_steps; i < steps.size(); ++i)
        if (const auto* a = std::get_if<AnnotateStep>(&steps[i]);
            a && a->annotation == IterAnnotation::Parallel && a->iter == 0)
            par.push_back(static_cast<int>(i));
    if (par.empty()) return false;
    int index = par[pick(rng, par.size())];
    int stage = std::get<AnnotateStep>(steps[index]).stage;
    const auto* fuse = index > 0 ? std::get_if<FuseStep>(&steps[index - 1]) : nullptr;
    bool fused = fuse && fuse->stage == stage && fuse->iters.front() == 0;
    int start = fused ? index - 1 : index;
    int had = fused ? static_cast<int>(fuse->iters.size()) : 1;
    Schedule pre = prefix(space, steps, start);
    const Stage& before = pre.stage(stage);
    int n = 0;
    while (n < static_cast<int>(before.leaf.size()) &&
           before.iters[before.leaf[n]].kind == IterKind::Spatial)
        ++n;
    if (n < 2) return false;
    int want = static_cast<int>(1 + pick(rng, n - 1));
    if (want >= had) ++want;
    for (size_t i = index + 1; i < steps.size(); ++i)
        std::visit(
            [&](auto& s) {
                ShiftLeaves v{stage, 1, had - want};
                std::decay_t<decltype(s)>::fields(s, v);
            },
            steps[i]);
    Steps out(steps.begin(), steps.begin() + start);
    if (want > 1) {
        FuseStep f{stage, {}};
        for (int k = 0; k < want; ++k) f.iters.push_back(k);
        out.push_back(f);
    }
    out.insert(out.end(), steps.begin() + index, steps.end());
    steps = std::move(out);
    return true;
}

// The annotation's thread splits of a row group (AnnotateRows.cpp): each split directly followed
// by the binding of its inner loop to threadIdx.x. All share one factor, the row's threads.
std::vector<int> row_thread_splits(const SearchState& st, const Steps& steps) {
    std::vector<int> out;
    for (size_t i = st.sketch_steps; i + 1 < steps.size(); ++i) {
        const auto* split = std::get_if<SplitStep>(&steps[i]);
        const auto* bind = std::get_if<AnnotateStep>(&steps[i + 1]);
        if (split && bind && bind->annotation == IterAnnotation::ThreadX &&
            bind->stage == split->stage && bind->iter == split->iter + 1)
            out.push_back(static_cast<int>(i));
    }
    return out;
}

bool has_row_block(const Sketch& sk) {
    return std::any_of(sk.stages.begin(), sk.stages.end(),
                       [](const SketchStage& s) { return s.kind == SketchStageKind::RowBlock; });
}

// Changes the thread count of a row group (every stage of it: they share threadIdx.x) to another
// warp multiple the target allows; a count that leaves the block too large fails the check.
bool mutate_row_threads(const SearchSpace& space, const SearchState& st, Steps& steps,
                        std::mt19937_64& rng) {
    std::vector<int> splits = row_thread_splits(st, steps);
    if (splits.empty()) return false;
    const int64_t now = std::get<SplitStep>(steps[splits[0]]).factor;
    const HardwareParams& hw = space.task().hardware();
    std::vector<int64_t> others;
    for (int64_t t = std::max(1, hw.warp_size); t <= hw.max_threads_per_block; t *= 2)
        if (t != now) others.push_back(t);
    if (others.empty()) return false;
    const int64_t next = others[pick(rng, others.size())];
    for (int i : splits) std::get<SplitStep>(steps[i]).factor = next;
    return true;
}

// The shared fetches of a state grouped by the loop they are computed at: they are pipelined alike.
std::vector<std::vector<int>> fetch_groups(const Sketch& sk, const Schedule& s) {
    std::map<std::pair<int, int>, std::vector<int>> groups;
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st)
        if (internal::is_shared_fetch(sk.stages[st]) && s.stage(st).attach == AttachKind::At)
            groups[{s.stage(st).attach_stage, s.stage(st).attach_iter}].push_back(st);
    std::vector<std::vector<int>> out;
    for (auto& [loop, stages] : groups) out.push_back(std::move(stages));
    return out;
}

// Changes the pipelining of one group of shared fetches (none, double_buffer, pipeline(2..4)):
// their steps are rewritten in place, removed, or appended. A choice whose copies exceed the
// shared memory fails the check.
bool mutate_pipelining(const SearchSpace& space, const SearchState& st, Steps& steps,
                       std::mt19937_64& rng) {
    std::vector<std::vector<int>> groups = fetch_groups(space.sketches()[st.sketch], st.schedule);
    if (groups.empty()) return false;
    const std::vector<int>& group = groups[pick(rng, groups.size())];
    const Stage& first = st.schedule.stage(group[0]);
    int64_t now = first.pipeline_depth  ? first.pipeline_depth
                  : first.double_buffer ? internal::kDoubleBuffer
                                        : internal::kNoPipelining;
    std::vector<int64_t> others;
    const SketchStageKind kind = space.sketches()[st.sketch].stages[group[0]].kind;
    for (int64_t c : internal::pipelining_choices(space.task().target(), kind))
        if (c != now) others.push_back(c);
    const int64_t next = others[pick(rng, others.size())];
    auto step_for = [&](int stage) -> Step {
        if (next == internal::kDoubleBuffer) return DoubleBufferStep{stage};
        return PipelineStep{stage, next};
    };
    Steps out(steps.begin(), steps.begin() + st.sketch_steps);
    std::vector<int> placed;
    for (size_t i = st.sketch_steps; i < steps.size(); ++i) {
        const auto* db = std::get_if<DoubleBufferStep>(&steps[i]);
        const auto* pl = std::get_if<PipelineStep>(&steps[i]);
        int stage = db ? db->stage : pl ? pl->stage : -1;
        if (std::find(group.begin(), group.end(), stage) == group.end()) {
            out.push_back(steps[i]);
            continue;
        }
        if (next == internal::kNoPipelining) continue;
        out.push_back(step_for(stage));
        placed.push_back(stage);
    }
    for (int stage : group)
        if (next != internal::kNoPipelining &&
            std::find(placed.begin(), placed.end(), stage) == placed.end())
            out.push_back(step_for(stage));
    steps = std::move(out);
    return true;
}

// The cooperative fetches of a state (Annotate.cpp's cooperative_fetch): for each SharedFetch
// stage, the index of its follow_fused_split (the split by the consumer's threads).
std::vector<int> cooperative_fetches(const Sketch& sk, const SearchState& st, const Steps& steps) {
    std::vector<int> out;
    for (size_t i = st.sketch_steps; i < steps.size(); ++i)
        if (const auto* f = std::get_if<FollowFusedSplitStep>(&steps[i]);
            f && sk.stages[f->stage].kind == SketchStageKind::SharedFetch)
            out.push_back(static_cast<int>(i));
    return out;
}

// Changes the vector lanes of one cooperative fetch (1, 2 or 4 dividing its innermost axis, as
// cooperative_fetch draws them): the vector split's factor edited, or the split (before the
// fusion) and the vectorize (after the thread binding) inserted or removed; the positions of the
// fusion, the thread split and the binding are the same either way.
bool mutate_fetch_lanes(const SearchSpace& space, const SearchState& st, Steps& steps,
                        std::mt19937_64& rng) {
    std::vector<int> fetches = cooperative_fetches(space.sketches()[st.sketch], st, steps);
    if (fetches.empty()) return false;
    const int ffs = fetches[pick(rng, fetches.size())];
    const int stage = std::get<FollowFusedSplitStep>(steps[ffs]).stage;
    int first = ffs, split = -1, vectorize = -1;  // first: the fetch's first annotation step
    while (first - 1 >= st.sketch_steps && internal::step_stage(steps[first - 1]) == stage &&
           (std::holds_alternative<FuseStep>(steps[first - 1]) ||
            std::holds_alternative<SplitStep>(steps[first - 1]))) {
        --first;
        if (std::holds_alternative<SplitStep>(steps[first])) split = first;
    }
    for (size_t i = ffs + 1; i < steps.size() && vectorize < 0; ++i)
        if (const auto* a = std::get_if<AnnotateStep>(&steps[i]);
            a && a->stage == stage && a->annotation == IterAnnotation::Vectorize)
            vectorize = static_cast<int>(i);
    if ((split >= 0) != (vectorize >= 0)) return false;  // not cooperative_fetch's steps
    Schedule before = prefix(space, steps, first);
    const int last = static_cast<int>(before.stage(stage).leaf.size()) - 1;
    std::optional<int64_t> inner = as_const_int(before.infer_extents()[stage][last]);
    if (!inner) return false;
    const int64_t now = split >= 0 ? std::get<SplitStep>(steps[split]).factor : 1;
    std::vector<int64_t> others;
    for (int64_t v : {1, 2, 4})
        if (v != now && *inner % v == 0) others.push_back(v);
    if (others.empty()) return false;
    const int64_t next = others[pick(rng, others.size())];
    if (now > 1 && next > 1) {
        std::get<SplitStep>(steps[split]).factor = next;
    } else if (next == 1) {
        steps.erase(steps.begin() + vectorize);
        steps.erase(steps.begin() + split);
    } else {
        const auto* bind = std::get_if<AnnotateStep>(&steps[ffs + 1]);
        if (!bind || bind->stage != stage || bind->annotation != IterAnnotation::ThreadX)
            return false;
        steps.insert(steps.begin() + ffs + 2,
                     AnnotateStep{stage, bind->iter + 1, IterAnnotation::Vectorize});
        steps.insert(steps.begin() + first,
                     SplitStep{stage, last, next, false, TailStrategy::Guard});
    }
    return true;
}

std::vector<int> read_cache_stages(const Sketch& sk) {
    std::vector<int> out;
    for (int st = 0; st < static_cast<int>(sk.stages.size()); ++st)
        if (sk.stages[st].kind == SketchStageKind::ReadCache) out.push_back(st);
    return out;
}

// The lanes of the vectorised leaf of stage `stage` (1 when none is).
int64_t vector_lanes(const Schedule& s, int stage) {
    const Stage& st = s.stage(stage);
    for (int id : st.leaf)
        if (st.iters[id].annotation == IterAnnotation::Vectorize)
            return st.iters[id].const_extent().value_or(1);
    return 1;
}

// Changes one register read cache (AnnotateReadCache.cpp) to another of its (layout, lanes)
// choices: its shared tile kept, transposed or padded, and its copy's vector lanes where that
// layout makes the slice contiguous. Its shared tile's storage steps and the copy's own steps
// are removed and the new ones appended. Drawn together, because a transposition is what lets a
// column slice (A's in a GEMM) take vector lanes at all: changing either alone would pass
// through a state that has the cost of the one without the gain of the other.
bool mutate_shared_layout(const SearchSpace& space, const SearchState& st, Steps& steps,
                          std::mt19937_64& rng) {
    std::vector<int> caches = read_cache_stages(space.sketches()[st.sketch]);
    if (caches.empty()) return false;
    const int cache = caches[pick(rng, caches.size())];
    // The tile as annotation saw it: the sketch with the state's tile sizes.
    Schedule sketch = prefix(space, steps, st.sketch_steps);
    const internal::ReadCacheTile t =
        internal::read_cache_tile(sketch, cache, sketch.infer_extents()[cache]);
    int now = 0;
    Steps out(steps.begin(), steps.begin() + st.sketch_steps);
    for (size_t i = st.sketch_steps; i < steps.size(); ++i) {
        const auto* r = std::get_if<StorageReorderStep>(&steps[i]);
        const auto* al = std::get_if<StorageAlignStep>(&steps[i]);
        if ((r && r->stage == t.shared) || (al && al->stage == t.shared)) {
            now |= r ? internal::kTransposed : internal::kPadded;
            continue;
        }
        if (internal::step_stage(steps[i]) == cache) continue;  // the copy's vector steps
        out.push_back(steps[i]);
    }
    const int64_t lanes_now = vector_lanes(st.schedule, cache);
    std::vector<std::pair<int, int64_t>> others;
    for (int layout : internal::layout_choices(t))
        for (int64_t lanes : internal::read_cache_lanes(sketch, t, layout))
            if (layout != now || lanes != lanes_now) others.push_back({layout, lanes});
    if (others.empty()) return false;
    auto [layout, lanes] = others[pick(rng, others.size())];
    for (const Step& step : internal::layout_steps(sketch, t, layout)) {
        sketch.apply(step);
        out.push_back(step);
    }
    for (const Step& step : internal::read_cache_vector_steps(sketch, t, lanes))
        out.push_back(step);
    steps = std::move(out);
    return true;
}

using Mutation = bool (*)(const SearchSpace&, const SearchState&, Steps&, std::mt19937_64&);

struct WeightedMutation {
    const char* name;
    double weight;
    Mutation apply;
    bool fit_lanes = false;  ///< replayed by replay_fitting_lanes
};

// Whether `steps` (after the sketch's) have a step of type T for which `pred` holds.
template <typename T, typename Pred>
bool has_annotation_step(const SearchState& st, const Steps& steps, Pred pred) {
    for (size_t i = st.sketch_steps; i < steps.size(); ++i)
        if (const auto* s = std::get_if<T>(&steps[i]); s && pred(*s)) return true;
    return false;
}

// The mutations that apply to `st` (its sketch known), with their weights: tile size where a
// tiled loop is longer than 1, auto-unroll where a pragma is, row threads where a row group is
// (GPU), pipelining where a shared fetch is (GPU), shared layout where a read cache is (GPU),
// compute location where an annotation compute_at
// is, parallel where a parallel loop is (CPU only for the last two).
std::vector<WeightedMutation> applicable(const SearchSpace& space, const SearchState& st) {
    const Sketch& sk = space.sketches()[st.sketch];
    const Steps& steps = st.schedule.steps();
    bool gpu = space.task().target().is_gpu();
    std::vector<WeightedMutation> out;
    if (std::any_of(sk.tiles.begin(), sk.tiles.end(),
                    [](const TileGroup& g) { return g.extent > 1; }))
        out.push_back({"mutate_tile_size", 0.90, mutate_tile_size, gpu});
    if (std::any_of(steps.begin(), steps.end(),
                    [](const Step& s) { return std::holds_alternative<PragmaStep>(s); }))
        out.push_back({"mutate_auto_unroll", gpu ? 0.10 : 0.04, mutate_auto_unroll});
    if (gpu && has_row_block(sk) && !row_thread_splits(st, steps).empty())
        out.push_back({"mutate_row_threads", 0.90, mutate_row_threads});
    if (gpu && !fetch_groups(sk, st.schedule).empty())
        out.push_back({"mutate_pipelining", 0.10, mutate_pipelining});
    if (gpu && !read_cache_stages(sk).empty())
        out.push_back({"mutate_shared_layout", 0.10, mutate_shared_layout});
    if (gpu && !cooperative_fetches(sk, st, steps).empty())
        out.push_back({"mutate_fetch_lanes", 0.10, mutate_fetch_lanes});
    if (gpu) return out;
    if (has_annotation_step<ComputeAtStep>(st, steps, [](const ComputeAtStep&) { return true; }))
        out.push_back({"mutate_compute_location", 0.05, mutate_compute_location});
    if (has_annotation_step<AnnotateStep>(st, steps, [](const AnnotateStep& a) {
            return a.annotation == IterAnnotation::Parallel && a.iter == 0;
        }))
        out.push_back({"mutate_parallel", 0.01, mutate_parallel});
    return out;
}

// The state with its sketch found (a state read back from a log may not know it), or nullopt.
std::optional<SearchState> with_sketch(const SearchSpace& space, const SearchState& state) {
    SearchState base = state;
    if (base.sketch < 0 || base.sketch >= static_cast<int>(space.sketches().size()))
        base.sketch = space.match_sketch(base.schedule);
    if (base.sketch < 0) return std::nullopt;
    base.sketch_steps = static_cast<int>(space.sketches()[base.sketch].schedule.steps().size());
    return base;
}

}  // namespace

std::vector<std::string> SearchSpace::mutations(const SearchState& state) const {
    std::vector<std::string> names;
    if (auto base = with_sketch(*this, state))
        for (const WeightedMutation& m : applicable(*this, *base)) names.emplace_back(m.name);
    return names;
}

std::optional<SearchState> SearchSpace::mutate(const SearchState& state,
                                               std::mt19937_64& rng) const {
    std::optional<SearchState> base = with_sketch(*this, state);
    if (!base) return std::nullopt;
    std::vector<WeightedMutation> kinds = applicable(*this, *base);
    if (kinds.empty()) return std::nullopt;
    std::vector<double> weights;
    for (const auto& k : kinds) weights.push_back(k.weight);
    std::discrete_distribution<int> choose(weights.begin(), weights.end());
    for (int attempt = 0; attempt < 8; ++attempt) {
        const WeightedMutation& kind = kinds[choose(rng)];
        Steps steps = base->schedule.steps();
        try {
            if (!kind.apply(*this, *base, steps, rng)) continue;
            std::optional<Schedule> s =
                kind.fit_lanes ? replay_fitting_lanes(*this, *base, steps)
                               : std::optional(replay(task_.initial_schedule(), steps));
            if (!s || !check(*s).empty()) continue;
            SearchState out{std::move(*s), base->sketch, kind.name, base->sketch_steps, {}};
            if (out.schedule.steps().size() == state.schedule.steps().size())
                out.step_rules = state.step_rules;
            return out;
        } catch (const ScheduleError&) {
            continue;  // the edited steps do not replay: try another mutation
        }
    }
    return std::nullopt;
}

}  // namespace tessel
