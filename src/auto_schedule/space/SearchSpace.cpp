// The search space: sketches, annotation into complete states, sampling on all cores, and the
// check every candidate passes. Mutation and crossover are in Mutate.cpp and Crossover.cpp.
#include "tessel/auto_schedule/space/SearchSpace.h"

#include <algorithm>
#include <limits>
#include <mutex>

#include "AnnotateUtil.h"
#include "support/SplitMix.h"
#include "tessel/Error.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/VerifySchedule.h"
#include "tessel/runtime/ThreadPool.h"

namespace tessel {

namespace {

using internal::mix;

// Draws of a GPU sketch's tile sizes: replayed ones until the shared memory fits, and cheap ones
// (no replay) per replay until the launch is useful (draw_tile_sizes).
constexpr int kTileDraws = 32;
constexpr int kLaunchDraws = 512;

// Every way to write `extent` as `levels` ordered factors, the last at most `max_innermost`.
void factorize(int64_t extent, int levels, int64_t max_innermost, std::vector<int64_t>& prefix,
               std::vector<std::vector<int64_t>>& out) {
    if (levels == 1) {
        if (max_innermost > 0 && extent > max_innermost) return;
        prefix.push_back(extent);
        out.push_back(prefix);
        prefix.pop_back();
        return;
    }
    for (int64_t f = 1; f <= extent; ++f) {
        if (extent % f != 0) continue;
        prefix.push_back(f);
        factorize(extent / f, levels - 1, max_innermost, prefix, out);
        prefix.pop_back();
    }
}

}  // namespace

double SampleResult::rejection_rate() const {
    int64_t r = 0;
    for (const auto& [reason, n] : rejected) r += n;
    return attempts ? static_cast<double>(r) / static_cast<double>(attempts) : 0.0;
}

std::mt19937_64 sample_rng(uint64_t seed, int64_t i, int attempt) {
    uint64_t s = mix(mix(seed) ^ mix(static_cast<uint64_t>(i) * 0x100000001b3ULL + 1));
    return std::mt19937_64(mix(s ^ static_cast<uint64_t>(attempt)));
}

SearchSpace::SearchSpace(SearchTask task, SearchSpaceOptions options)
    : task_(std::move(task)), options_(std::move(options)) {
    dag_ = std::make_shared<DAGAnalysis>(task_.dag().outputs);
    context_ = std::make_shared<SketchContext>(
        SketchContext{task_, *dag_, options_.sketch.cpu_tiling, options_.sketch.gpu_tiling,
                      options_.sketch.tensor_core_tf32});
    sketches_ = generate_sketches(task_, options_.sketch);
    if (sketches_.empty())
        TESSEL_THROW(ScheduleError)
            << "SearchSpace: the rules made no sketch for task " << task_.key();
    for (const Sketch& sk : sketches_)
        for (const TileGroup& g : sk.tiles) {
            auto key =
                std::make_tuple(g.extent, static_cast<int>(g.steps.size()) + 1, g.max_innermost);
            if (factors_.count(key)) continue;
            std::vector<int64_t> prefix;  // a loop left whole (one level) has no limit
            factorize(g.extent, std::get<1>(key), g.steps.empty() ? 0 : g.max_innermost, prefix,
                      factors_[key]);
        }
}

const std::vector<std::vector<int64_t>>& SearchSpace::factorizations(const TileGroup& g) const {
    static const std::vector<std::vector<int64_t>> none;
    auto it = factors_.find(
        std::make_tuple(g.extent, static_cast<int>(g.steps.size()) + 1, g.max_innermost));
    return it == factors_.end() ? none : it->second;
}

std::string SearchSpace::check(const Schedule& s) const {
    // lower() verifies the schedule first (its errors start "verify_schedule: "), sharing the
    // bounds it infers with the loop nests.
    auto reason = [](const std::string& what) {
        return what.rfind("verify_schedule", 0) == 0 ? what : "lower: " + what;
    };
    try {
        if (!options_.lower) {
            verify_schedule(s, task_.target());
            return "";
        }
        LowerOptions lo;
        lo.stop_after = "partition_loops";
        lo.skip_padding_taps = false;
        lower(s, task_.dag().args(), task_.target(), "main", lo);
    } catch (const ScheduleError& e) {
        return reason(e.what());
    } catch (const CompileError& e) {
        return reason(e.what());
    }
    return "";
}

// The sketch replayed with random tile sizes written into `steps`. On GPUs the sizes are drawn
// until they make a useful launch (gpu_tile_misses: up to kLaunchDraws cheap draws, the one with
// the fewest misses kept) and again (up to kTileDraws times, the last kept) until the shared
// memory fits. `extents` receives the leaf extents the shared-memory check inferred, if it did.
Schedule SearchSpace::draw_tile_sizes(const Sketch& sk, std::vector<Step>& steps,
                                      std::mt19937_64& rng,
                                      std::vector<std::vector<Expr>>& extents) const {
    if (!task_.target().is_gpu()) {
        internal::fill_tile_sizes(*this, sk, steps, rng);
        return replay(task_.initial_schedule(), steps);
    }
    for (int draw = 1;; ++draw) {
        std::vector<Step> best;
        int best_misses = std::numeric_limits<int>::max();
        for (int k = 0; k < kLaunchDraws && best_misses > 0; ++k) {
            internal::fill_tile_sizes(*this, sk, steps, rng);
            int misses = internal::gpu_tile_misses(*this, sk, steps);
            if (misses < best_misses || best.empty()) {
                best = steps;
                best_misses = misses;
            }
        }
        steps = std::move(best);
        Schedule s = replay(task_.initial_schedule(), steps);
        if (internal::gpu_shared_memory_fits(*this, sk, s, &extents) || draw == kTileDraws)
            return s;
    }
}

std::optional<SearchState> SearchSpace::annotate(int sketch, std::mt19937_64& rng,
                                                 std::string* reason) const {
    return annotate_with(sketch, nullptr, rng, reason);
}

std::optional<SearchState> SearchSpace::annotate(
    int sketch, const std::vector<std::vector<int64_t>>& tile_lengths, std::mt19937_64& rng,
    std::string* reason) const {
    const Sketch& sk = sketches_.at(sketch);
    if (tile_lengths.size() != sk.tiles.size())
        TESSEL_THROW(ScheduleError)
            << "annotate: " << tile_lengths.size() << " tile length lists for sketch " << sketch
            << "'s " << sk.tiles.size() << " tiles";
    for (size_t g = 0; g < sk.tiles.size(); ++g) {
        const auto& options = factorizations(sk.tiles[g]);
        if (std::find(options.begin(), options.end(), tile_lengths[g]) == options.end())
            TESSEL_THROW(ScheduleError)
                << "annotate: tile " << g << " (extent " << sk.tiles[g].extent << ", "
                << sk.tiles[g].steps.size() + 1
                << " levels): the lengths given are not one of its factorisations";
    }
    return annotate_with(sketch, &tile_lengths, rng, reason);
}

std::optional<SearchState> SearchSpace::annotate_with(
    int sketch, const std::vector<std::vector<int64_t>>* tile_lengths, std::mt19937_64& rng,
    std::string* reason) const {
    const Sketch& sk = sketches_.at(sketch);
    std::vector<Step> steps = sk.schedule.steps();
    const char* phase = "tile sizes";
    try {
        std::vector<std::vector<Expr>> extents;
        Schedule s = sk.schedule;
        if (tile_lengths) {
            for (size_t g = 0; g < sk.tiles.size(); ++g)
                internal::set_tile_lengths(steps, sk.tiles[g], (*tile_lengths)[g]);
            s = replay(task_.initial_schedule(), steps);
        } else {
            s = draw_tile_sizes(sk, steps, rng, extents);
        }
        internal::AnnotateContext a{*this, *context_, sk, s, rng};
        if (!extents.empty()) a.set_extents(std::move(extents));
        std::vector<int> step_rules;
        auto rules = internal::annotate_rules(task_.target());
        for (size_t r = 0; r < rules.size(); ++r) {
            phase = rules[r].name;
            rules[r].apply(a);
            step_rules.resize(s.steps().size() - steps.size(), static_cast<int>(r));
        }
        std::string why = check(s);
        if (!why.empty()) {
            if (reason) *reason = why;
            return std::nullopt;
        }
        return SearchState{std::move(s), sketch, "random", static_cast<int>(steps.size()),
                           std::move(step_rules)};
    } catch (const ScheduleError& e) {
        if (reason) *reason = std::string("annotate ") + phase + ": " + e.what();
    } catch (const CompileError& e) {
        if (reason) *reason = std::string("annotate ") + phase + ": " + e.what();
    }
    return std::nullopt;
}

namespace {

// The first line of a rejection message, without the numbers that differ between candidates,
// so that reasons count together.
std::string reason_key(const std::string& why) {
    std::string line = why.substr(0, why.find('\n'));
    std::string out;
    for (char c : line) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            if (out.empty() || out.back() != 'N') out += 'N';
        } else {
            out += c;
        }
    }
    return out.size() > 160 ? out.substr(0, 160) : out;
}

}  // namespace

SampleResult SearchSpace::sample(int n, uint64_t seed) const {
    if (n < 0) TESSEL_THROW(ScheduleError) << "sample: n must be non-negative, got " << n;
    std::vector<std::optional<SearchState>> got(n);
    std::vector<std::vector<std::string>> reasons(n);
    int threads =
        options_.num_threads > 0 ? options_.num_threads : ThreadPool::default_num_threads();
    ThreadPool pool(std::max(1, std::min(threads, std::max(1, n))));
    pool.parallel_for(0, n, [&](int64_t i) {
        for (int attempt = 0; attempt < std::max(1, options_.attempts) && !got[i]; ++attempt) {
            std::mt19937_64 rng = sample_rng(seed, i, attempt);
            int sketch = static_cast<int>(
                std::uniform_int_distribution<int64_t>(0, sketches_.size() - 1)(rng));
            std::string why;
            got[i] = annotate(sketch, rng, &why);
            if (!got[i]) reasons[i].push_back(reason_key(why));
        }
    });
    SampleResult r;
    for (int i = 0; i < n; ++i) {
        r.attempts += static_cast<int64_t>(reasons[i].size()) + (got[i] ? 1 : 0);
        for (const std::string& why : reasons[i]) ++r.rejected[why];
        if (got[i]) r.states.push_back(std::move(*got[i]));
    }
    return r;
}

int SearchSpace::match_sketch(const Schedule& s) const {
    for (size_t k = 0; k < sketches_.size(); ++k) {
        const std::vector<Step>& mine = sketches_[k].schedule.steps();
        if (s.steps().size() < mine.size()) continue;
        bool same = true;
        for (size_t i = 0; i < mine.size() && same; ++i) {
            const auto* a = std::get_if<SplitStep>(&mine[i]);
            const auto* b = std::get_if<SplitStep>(&s.steps()[i]);
            if (a && b)
                same = a->stage == b->stage && a->iter == b->iter && a->tail == b->tail &&
                       a->by_nparts == b->by_nparts;
            else
                same = mine[i] == s.steps()[i];
        }
        if (same) return static_cast<int>(k);
    }
    return -1;
}

SampleResult sample(const SearchTask& task, int n, uint64_t seed) {
    return SearchSpace(task).sample(n, seed);
}

}  // namespace tessel
