// Crossover (Ansor's paper, section 5.1; TVM never shipped it): a child of two states of one
// sketch takes each stage's choices from one parent, its tile sizes and its annotation steps,
// merged rule by rule; a compute_at whose loop no longer exists in the other parent's consumer
// is repaired to the consumer's innermost loop; the child counts only if it checks as a sample.
#include <algorithm>

#include "AnnotateUtil.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/space/SearchSpace.h"

namespace tessel {

namespace {

// Replays `steps` onto `s`, moving a compute_at that names a loop its target lacks to the
// target's innermost loop.
void replay_repairing(Schedule& s, const std::vector<Step>& steps) {
    for (Step step : steps) {
        if (auto* c = std::get_if<ComputeAtStep>(&step)) {
            int n = static_cast<int>(s.stage(c->target).leaf.size());
            if (c->target_iter >= n) c->target_iter = n - 1;
        }
        s.apply(step);
    }
}

}  // namespace

std::optional<SearchState> SearchSpace::crossover(const SearchState& a, const SearchState& b,
                                                  std::mt19937_64& rng) const {
    if (a.sketch < 0 || a.sketch != b.sketch || a.sketch >= static_cast<int>(sketches_.size()) ||
        a.sketch_steps != b.sketch_steps ||
        a.step_rules.size() + a.sketch_steps != a.schedule.steps().size() ||
        b.step_rules.size() + b.sketch_steps != b.schedule.steps().size())
        return std::nullopt;
    const Sketch& sk = sketches_[a.sketch];
    int n_stages = static_cast<int>(sk.stages.size());
    std::vector<bool> from_b(n_stages);
    for (int st = 0; st < n_stages; ++st) from_b[st] = std::bernoulli_distribution(0.5)(rng);

    std::vector<Step> steps(a.schedule.steps().begin(),
                            a.schedule.steps().begin() + a.sketch_steps);
    for (const TileGroup& g : sk.tiles)
        if (from_b[g.stage])
            internal::set_tile_lengths(steps, g, internal::tile_lengths(b.schedule.steps(), g));
    int n_rules = static_cast<int>(internal::annotate_rules(task_.target()).size());
    std::vector<int> rules;
    for (int rule = 0; rule < n_rules; ++rule)
        for (const SearchState* parent : {&a, &b})
            for (size_t i = 0; i < parent->step_rules.size(); ++i) {
                const Step& step = parent->schedule.steps()[parent->sketch_steps + i];
                if (parent->step_rules[i] != rule) continue;
                if (from_b[internal::step_stage(step)] != (parent == &b)) continue;
                steps.push_back(step);
                rules.push_back(rule);
            }
    try {
        Schedule s = task_.initial_schedule();
        replay_repairing(s, steps);
        if (!check(s).empty()) return std::nullopt;
        return SearchState{std::move(s), a.sketch, "crossover", a.sketch_steps, std::move(rules)};
    } catch (const ScheduleError&) {
        return std::nullopt;
    }
}

}  // namespace tessel
