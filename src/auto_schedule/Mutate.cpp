// Mutation of a complete state (Ansor's evolutionary operators): each mutation edits the step
// list (a split factor, a pragma value, a compute_at loop, the loops fused into a parallel one)
// and replays it; follow splits follow the edited factors. One function a mutation, picked by
// weight in SearchSpace::mutate at the bottom.
#include <algorithm>

#include "AnnotateUtil.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/SearchSpace.h"

namespace tessel {

namespace {

using Steps = std::vector<Step>;

int64_t pick(std::mt19937_64& rng, int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
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
    return true;
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

// The schedule as it is before step `index`.
Schedule prefix(const SearchSpace& space, const Steps& steps, size_t index) {
    return replay(space.task().initial_schedule(), Steps(steps.begin(), steps.begin() + index));
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
    Schedule at_start = prefix(space, steps, start);  // `before` refers into it
    const Stage& before = at_start.stage(stage);
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

using Mutation = bool (*)(const SearchSpace&, const SearchState&, Steps&, std::mt19937_64&);

struct WeightedMutation {
    const char* name;
    double weight;
    Mutation apply;
};

}  // namespace

std::optional<SearchState> SearchSpace::mutate(const SearchState& state,
                                               std::mt19937_64& rng) const {
    SearchState base = state;
    if (base.sketch < 0 || base.sketch >= static_cast<int>(sketches_.size()))
        base.sketch = match_sketch(base.schedule);
    if (base.sketch < 0) return std::nullopt;
    base.sketch_steps = static_cast<int>(sketches_[base.sketch].schedule.steps().size());
    std::vector<WeightedMutation> kinds = {{"mutate_tile_size", 0.90, mutate_tile_size},
                                           {"mutate_auto_unroll", 0.04, mutate_auto_unroll}};
    if (task_.target().is_gpu())
        kinds[1].weight = 0.10;
    else
        kinds.insert(kinds.end(), {{"mutate_compute_location", 0.05, mutate_compute_location},
                                   {"mutate_parallel", 0.01, mutate_parallel}});
    std::vector<double> weights;
    for (const auto& k : kinds) weights.push_back(k.weight);
    std::discrete_distribution<int> choose(weights.begin(), weights.end());
    for (int attempt = 0; attempt < 8; ++attempt) {
        const WeightedMutation& kind = kinds[choose(rng)];
        Steps steps = base.schedule.steps();
        try {
            if (!kind.apply(*this, base, steps, rng)) continue;
            Schedule s = replay(task_.initial_schedule(), steps);
            if (!check(s).empty()) continue;
            SearchState out{std::move(s), base.sketch, kind.name, base.sketch_steps, {}};
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
