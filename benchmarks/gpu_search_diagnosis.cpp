// gpu_search_diagnosis: why a GPU GEMM search misses tutorial 05's step 6 (docs/perf/
// gpu-gemm-search.md). Needs no GPU. Reads a tune_gemm_cuda log, trains the cost model on its
// records as the tuner does (features of each record's schedule, one model on all of them), and
// scores (a) step 6's state of the read-cache sketch (its tile lengths given, the other choices
// drawn until they are step 6's), (b) the log's best records, (c) step 6's neighbours (its
// mutants). Then counts how often the search's operators keep read-cache states valid and how
// many of a search population carry step 6's ingredients.
//
//   build/release/benchmarks/bench_gpu_search_diagnosis benchmarks/logs/tune_gemm_cuda_4096.jsonl
//       [states.jsonl]   # step 6 and its variants, to time on a GPU (time_gemm_cuda_states.py)
//
// Prints one line per figure and last `BENCH gpu_search_diagnosis <case> ...` lines.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "tessel/Error.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/auto_schedule/tuner/EvolutionarySearch.h"
#include "tessel/runtime/ThreadPool.h"

using namespace tessel;

namespace {

// The stage named `name`, case aside (op.matmul names its inputs a and b), or -1.
int stage_named(const Schedule& s, const std::string& name) {
    auto lower = [](std::string x) {
        for (char& c : x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return x;
    };
    for (int k = 0; k < static_cast<int>(s.stages().size()); ++k)
        if (lower(s.stage(k).name()) == lower(name)) return k;
    return -1;
}

int64_t lanes(const Schedule& s, const std::string& stage) {
    int k = stage_named(s, stage);
    if (k < 0) return 0;
    const Stage& st = s.stage(k);
    for (int id : st.leaf)
        if (st.iters[id].annotation == IterAnnotation::Vectorize)
            return st.iters[id].const_extent().value_or(0);
    return 1;
}

// What step 6 has, per state: read-cache lanes, A transposed + padded, double buffers, fetch
// lanes.
struct Ingredients {
    bool read_caches = false;
    int64_t a_lanes = 0, b_lanes = 0, fetch_a = 0, fetch_b = 0;
    bool a_transposed = false, a_padded = false, double_buffer = false;
    bool step6_like() const {
        return read_caches && a_lanes == 4 && b_lanes == 4 && a_transposed && double_buffer;
    }
};

Ingredients ingredients(const Schedule& s) {
    Ingredients g;
    g.read_caches = stage_named(s, "A.shared.local") >= 0;
    g.a_lanes = lanes(s, "A.shared.local");
    g.b_lanes = lanes(s, "B.shared.local");
    g.fetch_a = lanes(s, "A.shared");
    g.fetch_b = lanes(s, "B.shared");
    int a = stage_named(s, "A.shared"), b = stage_named(s, "B.shared");
    if (a >= 0) {
        const Stage& as = s.stage(a);
        g.a_transposed = as.storage.size() == 2 && as.storage[1].axis == 0;
        g.a_padded = std::any_of(as.storage.begin(), as.storage.end(),
                                 [](const StorageDim& d) { return d.align_factor > 0; });
        g.double_buffer = as.double_buffer && b >= 0 && s.stage(b).double_buffer;
    }
    return g;
}

double tflops(double seconds) {
    return 2.0 * 4096.0 * 4096.0 * 4096.0 / seconds / 1e12;
}

// The share of `scores` above `x`.
double share_above(const std::vector<double>& scores, double x) {
    if (scores.empty()) return 0;
    return double(std::count_if(scores.begin(), scores.end(), [&](double v) { return v > x; })) /
           double(scores.size());
}

}  // namespace

int main(int argc, char** argv) {
    std::string path = argc > 1 ? argv[1] : "benchmarks/logs/tune_gemm_cuda_4096.jsonl";
    RecordLog log = read_records(path);
    if (log.records.empty()) {
        std::fprintf(stderr, "%s: no records\n", path.c_str());
        return 1;
    }
    const TuningRecord& r0 = log.records.front();
    SearchTask task(r0.workload, workload_params_from_json(r0.params_json), Target(r0.target),
                    r0.hardware);
    SearchSpaceOptions so;
    so.lower = false;
    SearchSpace space(task, so);

    // The model as the tuner trains it after the log's last round.
    std::vector<Schedule> schedules;
    std::vector<MeasuredProgram> programs(log.records.size());
    std::vector<std::optional<Schedule>> applied(log.records.size());
    for (size_t i = 0; i < log.records.size(); ++i)
        applied[i] = task.apply_record(log.records[i].schedule_json);
    ThreadPool pool(ThreadPool::default_num_threads());
    pool.parallel_for(0, static_cast<int64_t>(log.records.size()), [&](int64_t i) {
        const TuningRecord& r = log.records[i];
        MeasuredProgram& p = programs[i];
        p.task_key = task.key();
        try {
            p.features = extract_features(task, *applied[i]);
        } catch (const ScheduleError&) {  // as the tuner: no features, still a program
        } catch (const CompileError&) {
        }
        p.costs = r.ok() ? r.costs : std::vector<double>{};
        p.error = r.ok() ? 0 : std::max(1, static_cast<int>(r.error));
    });
    CostModelOptions mo;
    mo.seed = r0.seed;
    CostModel model(mo);
    model.train(programs);
    std::vector<double> log_scores = model.predict(programs);

    // (b) the log's best records and their scores.
    std::vector<size_t> order(log.records.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return log.records[a].mean_cost() < log.records[b].mean_cost();
    });
    std::vector<double> sorted_scores = log_scores;
    std::sort(sorted_scores.rbegin(), sorted_scores.rend());
    std::printf("log: %zu records; model trained on them (seed %llu)\n", log.records.size(),
                static_cast<unsigned long long>(mo.seed));
    double best_log_score = sorted_scores.front();
    for (int k = 0; k < 8; ++k) {
        size_t i = order[k];
        Ingredients g = ingredients(*applied[i]);
        std::printf(
            "  log best #%d: record %zu %.2f TFLOP/s score %.4f (score rank %ld of %zu) "
            "read_caches %d lanes A/B %lld/%lld\n",
            k + 1, i, tflops(log.records[i].mean_cost()), log_scores[i],
            static_cast<long>(std::count_if(log_scores.begin(), log_scores.end(),
                                            [&](double v) { return v > log_scores[i]; })) +
                1,
            log.records.size(), g.read_caches, static_cast<long long>(g.a_lanes),
            static_cast<long long>(g.b_lanes));
    }

    // The log's read-cache records by their ingredients.
    std::map<std::string, std::vector<double>> groups;
    for (size_t i = 0; i < applied.size(); ++i) {
        Ingredients g = ingredients(*applied[i]);
        if (!g.read_caches) continue;
        char key[160];
        std::snprintf(key, sizeof key, "lanes A/B %lld/%lld A %s%s, %s, fetch %lld/%lld",
                      static_cast<long long>(g.a_lanes), static_cast<long long>(g.b_lanes),
                      g.a_transposed ? "T" : "-", g.a_padded ? "P" : "-",
                      g.double_buffer ? "db" : "other", static_cast<long long>(g.fetch_a),
                      static_cast<long long>(g.fetch_b));
        groups[key].push_back(log.records[i].ok() ? tflops(log.records[i].mean_cost()) : 0);
    }
    for (auto& [key, t] : groups) {
        std::sort(t.rbegin(), t.rend());
        std::printf("  read-cache records %s: %zu, best %.2f, median %.2f TFLOP/s\n", key.c_str(),
                    t.size(), t.front(), t[t.size() / 2]);
    }

    // (a) step 6's state.
    int v = -1;
    for (size_t k = 0; k < space.sketches().size(); ++k)
        for (const std::string& t : space.sketches()[k].trace)
            if (t.find("cache_read_local") != std::string::npos) v = static_cast<int>(k);
    std::vector<std::vector<int64_t>> tiles;
    for (const TileGroup& g : space.sketches()[v].tiles)
        tiles.push_back(g.steps.size() == 2 ? std::vector<int64_t>{512, 1, 8}
                                            : std::vector<int64_t>{32, 2, 16, 1, 4});
    std::mt19937_64 rng(6);
    std::vector<SearchState> step6;  // step 6 with each fetch-lane and unroll choice drawn
    int same_tiles = 0, same_tiles_step6 = 0;
    for (int d = 0; d < 4000 && step6.size() < 12; ++d) {
        std::optional<SearchState> s = space.annotate(v, tiles, rng);
        if (!s) continue;
        ++same_tiles;
        Ingredients g = ingredients(s->schedule);
        if (!g.step6_like() || !g.a_padded) continue;
        ++same_tiles_step6;
        if (g.fetch_a == 4 && g.fetch_b == 4) step6.push_back(std::move(*s));
    }
    std::printf(
        "step 6's tiles: %d annotations, %d with step 6's read caches / layout / "
        "double buffer, %zu of those with 4-lane fetches\n",
        same_tiles, same_tiles_step6, step6.size());
    std::vector<FeatureMatrix> step6_features;
    for (const SearchState& s : step6) step6_features.push_back(extract_features(task, s.schedule));
    std::vector<double> step6_scores = model.predict(step6_features);
    for (size_t k = 0; k < step6.size(); ++k)
        std::printf(
            "  step 6 (unroll %s): score %.4f, above it: %.1f%% of the log\n",
            step6[k].schedule.to_python().find("auto_unroll_max_step\", 512") != std::string::npos
                ? "512"
                : "other",
            step6_scores[k], 100 * share_above(log_scores, step6_scores[k]));

    // Which features see a layout or pipelining change: step 6 against one mutant of each.
    std::set<std::string> diffed;
    for (int k = 0; k < 200 && !step6.empty() && diffed.size() < 3; ++k) {
        std::optional<SearchState> m = space.mutate(step6[0], rng);
        if (!m || m->origin == "mutate_tile_size" || !diffed.insert(m->origin).second) continue;
        FeatureMatrix x = step6_features[0], y = extract_features(task, m->schedule);
        std::printf("  features of step 6 vs its %s mutant: rows %d / %d;", m->origin.c_str(),
                    x.rows, y.rows);
        int shown = 0;
        for (int r = 0; r < std::min(x.rows, y.rows); ++r)
            for (int c = 0; c < kNumFeatures; ++c)
                if (x.at(r, c) != y.at(r, c) && shown++ < 12)
                    std::printf(" r%d.%s %.2f/%.2f", r, feature_names()[c].c_str(), x.at(r, c),
                                y.at(r, c));
        std::printf(" (%d cells differ)\n", shown);
    }

    // The states to time on a GPU (benchmarks/time_gemm_cuda_states.py): step 6 with each
    // auto-unroll value, with pipeline(4) instead of double buffers, and the log's best records.
    if (argc > 2 && !step6.empty()) {
        std::ofstream out(argv[2]);
        auto write = [&](const std::string& label, const Schedule& x) {
            out << "{\"label\":\"" << label << "\",\"schedule\":" << x.to_json() << "}\n";
        };
        for (int64_t unroll : {0, 16, 64, 512, 1024}) {
            std::vector<Step> steps = step6[0].schedule.steps();
            for (Step& st : steps)
                if (auto* p = std::get_if<PragmaStep>(&st)) p->value = unroll;
            write("step6 unroll " + std::to_string(unroll), replay(task.initial_schedule(), steps));
        }
        std::vector<Step> steps = step6[0].schedule.steps();
        for (Step& st : steps)
            if (auto* d = std::get_if<DoubleBufferStep>(&st)) st = PipelineStep{d->stage, 4};
        write("step6 pipeline(4)", replay(task.initial_schedule(), steps));
        for (int k = 0; k < 2; ++k) write("log best " + std::to_string(k + 1), *applied[order[k]]);
        for (size_t k = 0; k < order.size(); ++k)
            if (ingredients(*applied[order[k]]).read_caches) {
                write("log best read-cache", *applied[order[k]]);
                break;
            }
        std::printf("states to time written to %s\n", argv[2]);
    }

    // (c) step 6's neighbours: its mutants, by mutation.
    std::map<std::string, std::pair<int, double>> by_origin;
    std::vector<double> neighbour_scores;
    int tries = 0, made = 0;
    for (const SearchState& s : step6) {
        for (int k = 0; k < 40; ++k, ++tries) {
            std::optional<SearchState> m = space.mutate(s, rng);
            if (!m) continue;
            ++made;
            double sc = model.predict({extract_features(task, m->schedule)})[0];
            neighbour_scores.push_back(sc);
            auto& e = by_origin[m->origin];
            e.first += 1;
            e.second += sc;
        }
    }
    std::printf("step 6's mutants: %d of %d tries made\n", made, tries);
    for (auto& [o, e] : by_origin)
        std::printf("  %s: %d, mean score %.4f\n", o.c_str(), e.first, e.second / e.first);

    // Mutation validity of the log's read-cache states.
    int rc_states = 0, rc_tries = 0, rc_made = 0, rc_tile = 0, rc_tile_tries = 0;
    for (size_t i = 0; i < applied.size(); ++i) {
        if (!ingredients(*applied[i]).read_caches || !log.records[i].ok()) continue;
        if (++rc_states > 40) break;
        SearchState st{*applied[i], -1, "measured", 0, {}};
        for (int k = 0; k < 10; ++k, ++rc_tries) {
            std::optional<SearchState> m = space.mutate(st, rng);
            if (!m) continue;
            ++rc_made;
            if (m->origin == "mutate_tile_size") ++rc_tile;
        }
        (void)rc_tile_tries;
    }
    std::printf("mutate() on read-cache states of the log: %d of %d made, %d of them tile sizes\n",
                rc_made, rc_tries, rc_tile);

    // The best read-cache records' layout / lanes mutants: their scores against their parent's.
    int shown_parents = 0;
    for (size_t k = 0; k < order.size() && shown_parents < 3; ++k) {
        size_t i = order[k];
        if (!ingredients(*applied[i]).read_caches) continue;
        ++shown_parents;
        SearchState parent{*applied[i], -1, "measured", 0, {}};
        std::printf("  read-cache record %zu (%.2f TFLOP/s, score %.4f): its layout/lanes mutants",
                    i, tflops(log.records[i].mean_cost()), log_scores[i]);
        std::map<std::string, std::pair<int, double>> seen;
        for (int t = 0; t < 120; ++t) {
            std::optional<SearchState> m = space.mutate(parent, rng);
            if (!m || m->origin != "mutate_shared_layout") continue;
            Ingredients g = ingredients(m->schedule);
            char key[64];
            std::snprintf(key, sizeof key, "A%lld%s%s/B%lld", static_cast<long long>(g.a_lanes),
                          g.a_transposed ? "T" : "", g.a_padded ? "P" : "",
                          static_cast<long long>(g.b_lanes));
            auto& e = seen[key];
            e.first += 1;
            e.second = model.predict({extract_features(task, m->schedule)})[0];
        }
        for (auto& [key, e] : seen) std::printf(" %s:%.4f", key.c_str(), e.second);
        std::printf("\n");
    }

    // A search population: how many states carry step 6's ingredients, and their scores.
    std::vector<SearchState> seeds;
    for (size_t k = 0; k < order.size() && seeds.size() < 409; ++k)
        if (log.records[order[k]].ok())
            seeds.push_back(SearchState{*applied[order[k]], -1, "measured", 0, {}});
    std::unordered_set<std::string> skip;
    for (const auto& s : applied) skip.insert(state_key(*s));
    EvolutionOptions eo;
    EvolutionStats stats;
    std::vector<ScoredState> picked =
        evolutionary_search(space, model, seeds, skip, 64, 12345, eo, &stats);
    int picked_rc = 0, picked_step6 = 0, picked_a4 = 0;
    for (const ScoredState& s : picked) {
        Ingredients g = ingredients(s.state.schedule);
        picked_rc += g.read_caches;
        picked_step6 += g.step6_like();
        picked_a4 += g.read_caches && g.a_lanes == 4 && g.b_lanes == 4;
    }
    std::printf(
        "one search round (population %d, seeds %zu): %zu picked, %d read-cache, %d with 4-lane "
        "read caches, %d step-6-like; best pick score %.4f; children %lld, failed %lld, "
        "rejected %lld\n",
        eo.population, seeds.size(), picked.size(), picked_rc, picked_a4, picked_step6,
        picked.empty() ? 0.0 : picked.front().score, static_cast<long long>(stats.children),
        static_cast<long long>(stats.failed_children), static_cast<long long>(stats.rejected));

    double best6 =
        step6_scores.empty() ? 0 : *std::max_element(step6_scores.begin(), step6_scores.end());
    std::printf(
        "BENCH gpu_search_diagnosis step6_score score=%.4f log_best_score=%.4f "
        "log_share_above=%.3f\n",
        best6, best_log_score, share_above(log_scores, best6));
    return 0;
}
