// Ansor's evolutionary search: score a population with the cost model, keep the best unmeasured
// states, breed the next population from the scored one by mutation and crossover, four times.
// The search reads as its steps in evolutionary_search() at the bottom; the helpers above it are
// the steps.
#include "tessel/auto_schedule/tuner/EvolutionarySearch.h"
#include "support/Stopwatch.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <unordered_map>

#include "tessel/Error.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/runtime/ThreadPool.h"

namespace tessel {

namespace {

using internal::seconds_since;

using Clock = std::chrono::steady_clock;

// The calling thread's CPU time: what a candidate cost, whatever else runs on the machine.
double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// A population whose members all lowered, one entry per member in every vector.
struct Population {
    std::vector<SearchState> states;
    std::vector<std::string> keys;
    std::vector<FeatureMatrix> features;
    std::vector<double> scores;
    size_t size() const { return states.size(); }
};

// A candidate on its way into a population: made (or not), keyed, its features extracted.
struct Candidate {
    std::optional<SearchState> state;
    std::string key;
    FeatureMatrix features;
    bool lowered = false;
    double make_seconds = 0;
    double feature_seconds = 0;
};

void check_options(const EvolutionOptions& o, int n) {
    auto fail = [](const char* what, double v) {
        TESSEL_THROW(RuntimeError)
            << "evolutionary_search: " << what << " out of range (" << v << ")";
    };
    if (o.population < 1) fail("population (at least 1)", o.population);
    if (o.generations < 0) fail("generations (at least 0)", o.generations);
    if (!(o.mutation_prob >= 0 && o.mutation_prob <= 1)) fail("mutation_prob", o.mutation_prob);
    if (!(o.measured_share >= 0 && o.measured_share <= 1)) fail("measured_share", o.measured_share);
    if (o.num_threads < 0) fail("num_threads (0: all cores)", o.num_threads);
    if (n < 0) fail("the number of states asked for", n);
}

// Runs fn(i) for i in [0, n) on the pool, handing out indices one at a time (candidates differ a
// lot in cost; a static split would leave a thread idle). Each index draws its own random numbers,
// so the order does not matter.
void for_each_index(ThreadPool& pool, int64_t n, const std::function<void(int64_t)>& fn) {
    std::atomic<int64_t> next{0};
    pool.parallel_for(0, pool.num_threads(), [&](int64_t) {
        for (int64_t i = next++; i < n; i = next++) fn(i);
    });
}

// Keys the candidate and extracts its features (lowering it); a state that does not lower stays
// unlowered and is dropped.
void score_features(const SearchSpace& space, Candidate& c) {
    if (!c.state) return;
    double t0 = thread_cpu_seconds();
    c.key = state_key(c.state->schedule);
    try {
        c.features = extract_features(space.task(), c.state->schedule);
        c.lowered = true;
    } catch (const ScheduleError&) {
    } catch (const CompileError&) {
    }
    c.feature_seconds = thread_cpu_seconds() - t0;
}

// The candidates that lowered, without duplicates (the first of each key stays), scored.
Population admit(std::vector<Candidate>& candidates, const CostModel& model,
                 EvolutionStats& stats) {
    Population p;
    std::unordered_set<std::string> seen;
    for (Candidate& c : candidates) {
        stats.mutate_cpu_seconds += c.make_seconds;
        stats.features_cpu_seconds += c.feature_seconds;
        if (!c.state) continue;
        if (!c.lowered) {
            ++stats.rejected;
            continue;
        }
        if (!seen.insert(c.key).second) {
            ++stats.duplicates;
            continue;
        }
        p.states.push_back(std::move(*c.state));
        p.keys.push_back(std::move(c.key));
        p.features.push_back(std::move(c.features));
    }
    stats.scored += static_cast<int64_t>(p.size());
    auto t0 = Clock::now();
    p.scores = model.predict(p.features);
    stats.predict_seconds += seconds_since(t0);
    return p;
}

// The initial population: the best measured states first, random samples for the rest.
std::vector<Candidate> initial_candidates(const SearchSpace& space,
                                          const std::vector<SearchState>& seeds, uint64_t seed,
                                          const EvolutionOptions& o, EvolutionStats& stats) {
    std::vector<Candidate> out;
    size_t most = static_cast<size_t>(o.measured_share * o.population);
    for (const SearchState& s : seeds) {
        if (out.size() >= most) break;
        Candidate c;
        c.state = s;
        if (c.state->sketch < 0) c.state->sketch = space.match_sketch(s.schedule);
        if (c.state->sketch < 0) continue;  // not of this space's sketches: it cannot breed
        c.state->sketch_steps =
            static_cast<int>(space.sketches()[c.state->sketch].schedule.steps().size());
        out.push_back(std::move(c));
    }
    int missing = o.population - static_cast<int>(out.size());
    if (missing == 0) return out;
    auto t0 = Clock::now();
    SampleResult r = space.sample(missing, seed);
    stats.sample_seconds += seconds_since(t0);
    for (SearchState& s : r.states) {
        out.emplace_back();
        out.back().state = std::move(s);
    }
    return out;
}

// Draws members with probability proportional to their score (negative scores count as zero;
// uniformly when every score is zero).
class Roulette {
public:
    explicit Roulette(const std::vector<double>& scores) {
        double total = 0;
        for (double s : scores) prefix_.push_back(total += std::max(s, 0.0));
        uniform_ = !(total > 0);
    }
    size_t draw(std::mt19937_64& rng) const {
        if (uniform_) return std::uniform_int_distribution<size_t>(0, prefix_.size() - 1)(rng);
        double u = std::uniform_real_distribution<double>(0, prefix_.back())(rng);
        auto it = std::upper_bound(prefix_.begin(), prefix_.end(), u);
        return std::min<size_t>(it - prefix_.begin(), prefix_.size() - 1);
    }

private:
    std::vector<double> prefix_;
    bool uniform_ = false;
};

// Child `i` of a generation: a mutation of a parent, or a crossover of two parents of one sketch
// (a mutation of the first when no partner crosses with it). A few tries before giving up.
std::optional<SearchState> breed(const SearchSpace& space, const Population& p,
                                 const Roulette& roulette, double mutation_prob,
                                 std::mt19937_64& rng) {
    constexpr int kTries = 3, kPartnerDraws = 4;
    for (int t = 0; t < kTries; ++t) {
        const SearchState& a = p.states[roulette.draw(rng)];
        if (std::bernoulli_distribution(1 - mutation_prob)(rng)) {
            for (int d = 0; d < kPartnerDraws; ++d) {
                const SearchState& b = p.states[roulette.draw(rng)];
                if (&b == &a || b.sketch != a.sketch) continue;
                if (auto child = space.crossover(a, b, rng)) return child;
                break;
            }
        }
        if (auto child = space.mutate(a, rng)) return child;
    }
    return std::nullopt;
}

// A generation's seed: every child draws from sample_rng(generation seed, its index).
uint64_t generation_seed(uint64_t seed, int generation) {
    return seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(generation) + 1;
}

std::vector<Candidate> breed_generation(const SearchSpace& space, ThreadPool& pool,
                                        const Population& p, uint64_t seed, int generation,
                                        const EvolutionOptions& o, EvolutionStats& stats) {
    std::vector<Candidate> children(o.population);
    Roulette roulette(p.scores);
    for_each_index(pool, o.population, [&](int64_t i) {
        double t0 = thread_cpu_seconds();
        std::mt19937_64 rng = sample_rng(generation_seed(seed, generation), i);
        children[i].state = breed(space, p, roulette, o.mutation_prob, rng);
        children[i].make_seconds = thread_cpu_seconds() - t0;
        score_features(space, children[i]);
    });
    for (const Candidate& c : children) c.state ? ++stats.children : ++stats.failed_children;
    return children;
}

// Keeps the `n` best-scored states seen so far whose keys are not in `skip`.
class BestStates {
public:
    BestStates(const std::unordered_set<std::string>& skip, int n) : skip_(skip), n_(n) {}
    void offer(const Population& p) {
        std::vector<size_t> fresh;
        for (size_t i = 0; i < p.size(); ++i)
            if (!skip_.count(p.keys[i]) && !kept_.count(p.keys[i])) fresh.push_back(i);
        size_t take = std::min(fresh.size(), static_cast<size_t>(n_));
        std::partial_sort(fresh.begin(), fresh.begin() + take, fresh.end(),
                          [&](size_t x, size_t y) {
                              return p.scores[x] != p.scores[y] ? p.scores[x] > p.scores[y]
                                                                : p.keys[x] < p.keys[y];
                          });
        for (size_t k = 0; k < take; ++k) {
            size_t i = fresh[k];
            kept_.insert(p.keys[i]);
            best_.push_back({ScoredState{p.states[i], p.scores[i]}, p.keys[i]});
        }
        std::sort(best_.begin(), best_.end(), ranks_before);
        while (static_cast<int>(best_.size()) > n_) {
            kept_.erase(best_.back().key);
            best_.pop_back();
        }
    }
    std::vector<ScoredState> take() {
        std::vector<ScoredState> out;
        for (Entry& e : best_) out.push_back(std::move(e.s));
        return out;
    }

private:
    struct Entry {
        ScoredState s;
        std::string key;
    };
    // Higher scores first; ties broken by key, so the order does not depend on the input's.
    static bool ranks_before(const Entry& x, const Entry& y) {
        return x.s.score != y.s.score ? x.s.score > y.s.score : x.key < y.key;
    }
    const std::unordered_set<std::string>& skip_;
    int n_;
    std::vector<Entry> best_;
    std::unordered_set<std::string> kept_;
};

}  // namespace

std::string state_key(const Schedule& schedule) {
    return schedule.to_json();
}

std::vector<ScoredState> evolutionary_search(const SearchSpace& space, const CostModel& model,
                                             const std::vector<SearchState>& seeds,
                                             const std::unordered_set<std::string>& skip, int n,
                                             uint64_t seed, const EvolutionOptions& options,
                                             EvolutionStats* stats_out) {
    check_options(options, n);
    auto t0 = Clock::now();
    EvolutionStats stats;
    int threads = options.num_threads > 0 ? options.num_threads : ThreadPool::default_num_threads();
    ThreadPool pool(std::max(1, threads));
    BestStates best(skip, n);

    std::vector<Candidate> candidates = initial_candidates(space, seeds, seed, options, stats);
    auto t_breed = Clock::now();
    for_each_index(pool, static_cast<int64_t>(candidates.size()),
                   [&](int64_t i) { score_features(space, candidates[i]); });
    stats.breed_seconds += seconds_since(t_breed);
    Population population = admit(candidates, model, stats);
    for (int g = 0; g < options.generations && population.size() > 0; ++g) {
        best.offer(population);
        t_breed = Clock::now();
        candidates = breed_generation(space, pool, population, seed, g, options, stats);
        stats.breed_seconds += seconds_since(t_breed);
        population = admit(candidates, model, stats);
    }
    best.offer(population);

    stats.total_seconds = seconds_since(t0);
    if (stats_out) *stats_out = stats;
    return best.take();
}

}  // namespace tessel
