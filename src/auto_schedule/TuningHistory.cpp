// What the tuner knows of its task, derived from the log (docs/design.md, decision 6): the
// records, the keys of the measured states, the programs the model trains on, the fastest states
// that seed the search, the next round's number.
#include <algorithm>

#include "TunerInternal.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/EvolutionarySearch.h"
#include "tessel/auto_schedule/Features.h"
#include "tessel/runtime/ThreadPool.h"

namespace tessel::internal {

namespace {

// The features of each schedule (an empty matrix for none, or for one that does not lower).
std::vector<FeatureMatrix> features_of(const SearchTask& task,
                                       const std::vector<std::optional<Schedule>>& schedules,
                                       int threads) {
    std::vector<FeatureMatrix> out(schedules.size());
    ThreadPool pool(std::max(1, threads));
    pool.parallel_for(0, static_cast<int64_t>(schedules.size()), [&](int64_t i) {
        if (!schedules[i]) return;
        try {
            out[i] = extract_features(task, *schedules[i]);
        } catch (const ScheduleError&) {
        } catch (const CompileError&) {
        }
    });
    return out;
}

}  // namespace

void TuningHistory::add(const SearchTask& task, std::vector<TuningRecord> batch,
                        const std::vector<std::optional<Schedule>>& schedules, int threads) {
    TESSEL_CHECK(batch.size() == schedules.size());
    std::vector<FeatureMatrix> features = features_of(task, schedules, threads);
    for (size_t i = 0; i < batch.size(); ++i) {
        TuningRecord& r = batch[i];
        keys.insert(schedules[i] ? state_key(*schedules[i]) : r.schedule_json);
        MeasuredProgram p;
        p.task_key = task.key();
        p.features = std::move(features[i]);
        p.costs = r.ok() ? r.costs : std::vector<double>{};
        p.error = r.ok() ? 0 : std::max(1, static_cast<int>(r.error));
        programs.push_back(std::move(p));
        next_round = std::max(next_round, r.round + 1);
        records.push_back(std::move(r));
        if (!records.back().ok() || !schedules[i]) continue;
        double cost = records.back().mean_cost();
        SearchState state{*schedules[i], -1, "measured", 0, {}};
        auto at = std::upper_bound(
            successes.begin(), successes.end(), cost,
            [](double c, const std::pair<double, SearchState>& s) { return c < s.first; });
        successes.insert(at, {cost, std::move(state)});
        if (cost < best_seconds) {
            best_seconds = cost;
            best_schedule = schedules[i];
            last_improvement = trials();
        }
    }
}

std::vector<SearchState> TuningHistory::best_states(size_t n) const {
    std::vector<SearchState> out;
    for (size_t i = 0; i < successes.size() && i < n; ++i) out.push_back(successes[i].second);
    return out;
}

TuningHistory read_history(const SearchTask& task, const std::string& path, int threads) {
    RecordLog log = read_records(path);
    std::vector<TuningRecord> mine;
    std::vector<std::optional<Schedule>> schedules;
    for (TuningRecord& r : log.records) {
        if (r.task_key() != task.key())
            TESSEL_THROW(RuntimeError)
                << "tune: the log '" << path << "' holds records of another task:\n  "
                << r.task_key() << "\nwhile this task is\n  " << task.key()
                << "\n(give each task its own log_file)";
        try {
            schedules.push_back(task.apply_record(r.schedule_json));
        } catch (const ScheduleError&) {
            schedules.push_back(std::nullopt);  // it counts as a trial, and is never re-measured
        }
        mine.push_back(std::move(r));
    }
    TuningHistory h;
    h.add(task, std::move(mine), schedules, threads);
    h.skipped_lines = log.skipped;
    return h;
}

}  // namespace tessel::internal
