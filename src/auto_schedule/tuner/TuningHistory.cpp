// What the tuner knows of its task, derived from the log (docs/design.md, decision 6): the
// records, the keys of the measured states, the programs the model trains on, the fastest states
// that seed the search, the next round's number.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "TunerInternal.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/auto_schedule/tuner/EvolutionarySearch.h"
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
    std::vector<std::optional<Schedule>> trial_schedules(schedules.size());
    for (size_t i = 0; i < batch.size(); ++i)
        if (batch[i].is_trial()) trial_schedules[i] = schedules[i];
    std::vector<FeatureMatrix> features = features_of(task, trial_schedules, threads);
    bool checked = false;
    for (size_t i = 0; i < batch.size(); ++i) {
        TuningRecord& r = batch[i];
        next_round = std::max(next_round, r.round + 1);
        double seconds = costs.add(r);
        records.push_back(std::move(r));
        const TuningRecord& rec = records.back();
        if (!rec.is_trial()) {
            checked = checked || rec.origin == CandidateOrigin::Check;
            remeasured(rec);
            continue;
        }
        ++trials_;
        keys.insert(schedules[i] ? state_key(*schedules[i]) : rec.schedule_json);
        MeasuredProgram p;
        p.task_key = task.key();
        p.features = std::move(features[i]);
        p.costs = rec.ok() ? rec.costs : std::vector<double>{};
        p.error = rec.ok() ? 0 : std::max(1, static_cast<int>(rec.error));
        programs.push_back(std::move(p));
        if (rec.ok() && seconds < epoch.gain_base * (1 - kEpochGain)) {
            epoch.gain_base = seconds;
            epoch.last_gain = trials_;
        }
        if (rec.ok() && schedules[i]) add_success(seconds, *schedules[i]);
    }
    if (checked) rerank();  // a check moves the states it did not time behind
}

namespace {

bool faster(const TuningHistory::Success& a, const TuningHistory::Success& b) {
    return std::tie(a.behind, a.seconds, a.record) < std::tie(b.behind, b.seconds, b.record);
}

}  // namespace

void TuningHistory::add_success(double seconds, const Schedule& schedule) {
    Success s{seconds, false, records.size() - 1, 1, SearchState{schedule, -1, "measured", 0, {}}};
    successes.insert(std::upper_bound(successes.begin(), successes.end(), s, faster), std::move(s));
    if (seconds < best_seconds) last_improvement = trials();
    best_seconds = successes.front().seconds;
    best_schedule = successes.front().state.schedule;
}

void TuningHistory::remeasured(const TuningRecord& r) {
    auto it = std::find_if(successes.begin(), successes.end(), [&](const Success& s) {
        return records[s.record].schedule_json == r.schedule_json;
    });
    if (it == successes.end()) return;
    Success s = std::move(*it);
    successes.erase(it);
    s.seconds = costs.cost(r);
    s.behind = costs.behind_check(r);
    s.measurements += 1;
    successes.insert(std::upper_bound(successes.begin(), successes.end(), s, faster), std::move(s));
    // Neither a slower re-measurement of the best (another state may become the best) nor a
    // faster one is a trial that improved the best: early stopping counts trials.
    best_seconds = successes.front().seconds;
    best_schedule = successes.front().state.schedule;
}

// Every state's cost and rank again, after a check (ScheduleCosts): the check timed some states
// anew and put the others behind them. A state whose check timings all failed has no cost
// left and is no longer a success.
void TuningHistory::rerank() {
    std::vector<Success> all = std::move(successes);
    successes.clear();
    for (Success& s : all) {
        const TuningRecord& r = records[s.record];
        s.seconds = costs.cost(r);
        s.behind = costs.behind_check(r);
        if (std::isfinite(s.seconds)) successes.push_back(std::move(s));
    }
    std::sort(successes.begin(), successes.end(), faster);
    best_seconds =
        successes.empty() ? std::numeric_limits<double>::infinity() : successes.front().seconds;
    if (successes.empty())
        best_schedule.reset();
    else
        best_schedule = successes.front().state.schedule;
}

std::vector<SearchState> TuningHistory::epoch_states(size_t n) const {
    std::vector<SearchState> out;
    for (size_t i = 0; i < successes.size() && out.size() < n; ++i)
        if (successes[i].record >= epoch.first_record) out.push_back(successes[i].state);
    return out;
}

size_t TuningHistory::epoch_successes() const {
    return static_cast<size_t>(
        std::count_if(successes.begin(), successes.end(),
                      [&](const Success& s) { return s.record >= epoch.first_record; }));
}

std::vector<MeasuredProgram> TuningHistory::epoch_programs() const {
    return {programs.begin() + static_cast<std::ptrdiff_t>(epoch.first_program), programs.end()};
}

bool TuningHistory::end_round(int64_t restart_after) {
    if (restart_after <= 0 || trials_ - epoch.last_gain < restart_after) return false;
    epoch = Epoch{epoch.number + 1, records.size(), programs.size(),
                  std::numeric_limits<double>::infinity(), trials_};
    return true;
}

TuningHistory read_history(const SearchTask& task, const std::string& path, int64_t restart_after,
                           int threads, LoggedRound* held) {
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
    // Round by round (a round's trials, then its re-measurements), each round ended as the
    // tuner ended it.
    TuningHistory h;
    for (size_t first = 0; first < mine.size();) {
        size_t last = first + 1;
        while (last < mine.size() && mine[last].round == mine[first].round) ++last;
        auto b = std::make_move_iterator(mine.begin() + static_cast<std::ptrdiff_t>(first));
        auto e = std::make_move_iterator(mine.begin() + static_cast<std::ptrdiff_t>(last));
        std::vector<TuningRecord> round(b, e);
        std::vector<std::optional<Schedule>> round_schedules(
            schedules.begin() + static_cast<std::ptrdiff_t>(first),
            schedules.begin() + static_cast<std::ptrdiff_t>(last));
        if (held && last == mine.size()) {
            *held = LoggedRound{std::move(round), std::move(round_schedules)};
            break;
        }
        h.add(task, std::move(round), round_schedules, threads);
        h.end_round(restart_after);
        first = last;
    }
    h.skipped_lines = log.skipped;
    return h;
}

}  // namespace tessel::internal
