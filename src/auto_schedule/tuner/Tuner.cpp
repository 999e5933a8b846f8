// The tuner's loop (auto_schedule/tuner/Tuner.h): search, measure, log, train, one round at a time,
// until the task has its trials in the log. Tuner::run_round() at the bottom reads as the list of
// those steps, and tune() runs rounds until the tuner is finished; the Tuner class
// (TunerInternal.h, where the task scheduler drives it too) holds what they share.
#include "tessel/auto_schedule/tuner/Tuner.h"
#include "support/Stopwatch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include "TunerInternal.h"
#include "support/SplitMix.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/op/DefaultSchedule.h"
#include "tessel/runtime/ThreadPool.h"
#include "tessel/runtime/TimeEvaluator.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace {

using internal::seconds_since;

using Clock = std::chrono::steady_clock;
using internal::mix;
using internal::Tuner;
using internal::TuningHistory;

void check_options(const TuningOptions& o) {
    auto fail = [](const std::string& what) { TESSEL_THROW(RuntimeError) << "tune: " << what; };
    if (o.trials < 0) fail("trials must be at least 0, got " + std::to_string(o.trials));
    if (o.measurements_per_round < 1)
        fail("measurements_per_round must be at least 1, got " +
             std::to_string(o.measurements_per_round));
    if (o.log_file.empty())
        fail("no log_file: every measurement is written to a tuning log (docs/tuning.md)");
    if (o.population < 1)
        fail("population must be at least 1, got " + std::to_string(o.population));
    if (o.generations < 0)
        fail("generations must be at least 0, got " + std::to_string(o.generations));
    if (!(o.mutation_prob >= 0 && o.mutation_prob <= 1))
        fail("mutation_prob must be in [0, 1], got " + std::to_string(o.mutation_prob));
    if (!(o.eps_greedy >= 0 && o.eps_greedy <= 1))
        fail("eps_greedy must be in [0, 1], got " + std::to_string(o.eps_greedy));
    if (o.remeasure_top < 0)
        fail("remeasure_top must be at least 0 (0: never), got " + std::to_string(o.remeasure_top));
    if (o.remeasure_limit < 1)
        fail("remeasure_limit must be at least 1 (its trial), got " +
             std::to_string(o.remeasure_limit));
    if (o.early_stopping < 0)
        fail("early_stopping must be at least 0 (0: never), got " +
             std::to_string(o.early_stopping));
    if (o.restart_after < 0)
        fail("restart_after must be at least 0 (0: never), got " + std::to_string(o.restart_after));
    if (o.num_threads < 0)
        fail("num_threads must be at least 0 (0: all cores), got " + std::to_string(o.num_threads));
    if (o.verbose < 0 || o.verbose > 2)
        fail("verbose must be 0, 1 or 2, got " + std::to_string(o.verbose));
    if (!CostModel::available())
        fail(
            "this tessel was built without XGBoost, and the tuner ranks candidates with its cost "
            "model: install libxgboost-dev and configure with -DTESSEL_USE_XGBOOST=ON");
}

CandidateOrigin origin_of(const SearchState& s) {
    if (s.origin == "crossover") return CandidateOrigin::Crossover;
    if (s.origin.rfind("mutate", 0) == 0) return CandidateOrigin::Mutation;
    return CandidateOrigin::CostModel;
}

// Whether the schedule lowers for the task (the tuner's space checks candidates without lowering
// them; the evolutionary search lowers its candidates for their features).
bool lowers(const SearchTask& task, const Schedule& s) {
    try {
        extract_features(task, s);
        return true;
    } catch (const ScheduleError&) {
    } catch (const CompileError&) {
    }
    return false;
}

SearchSpaceOptions tuner_space_options(int threads) {
    SearchSpaceOptions o;
    o.lower = false;  // candidates are lowered once, for their features (EvolutionarySearch.h)
    o.num_threads = threads;
    return o;
}

// The task's rule-based default schedule (op::default_schedule_rules) replayed on the task's
// initial schedule, when the rules make one for it that is not among the `measured` states and
// lowers (TuningOptions::measure_default; the key is checked first: lowering costs more).
std::optional<Schedule> default_candidate(const SearchTask& task,
                                          const std::unordered_set<std::string>& measured,
                                          const std::unordered_set<std::string>& in_flight) {
    try {
        Schedule rules = op::default_schedule_rules(task.dag().outputs, task.target());
        Schedule s = replay(task.initial_schedule(), rules.steps());
        std::string key = state_key(s);
        if (!measured.count(key) && !in_flight.count(key) && lowers(task, s)) return s;
    } catch (const Error&) {
    }
    return std::nullopt;
}

// The keys of a logged round's trials, as TuningHistory::add keys them.
std::vector<std::string> trial_keys(const internal::LoggedRound& round) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < round.records.size(); ++i)
        if (round.records[i].is_trial())
            keys.push_back(round.schedules[i] ? state_key(*round.schedules[i])
                                              : round.records[i].schedule_json);
    return keys;
}

}  // namespace

namespace internal {

void measure_while(bool concurrently, const std::function<void()>& measure,
                   const std::function<void()>& meanwhile) {
    if (!concurrently) {
        measure();
        meanwhile();
        return;
    }
    std::exception_ptr measure_error, meanwhile_error;
    std::thread measuring([&] {
        try {
            measure();
        } catch (...) {
            measure_error = std::current_exception();
        }
    });
    try {
        meanwhile();
    } catch (...) {
        meanwhile_error = std::current_exception();
    }
    measuring.join();
    if (measure_error) std::rethrow_exception(measure_error);
    if (meanwhile_error) std::rethrow_exception(meanwhile_error);
}

Tuner::Tuner(const SearchTask& task, const TuningOptions& options, bool hold_back_last_round)
    : task_(task),
      options_(options),
      threads_(options.num_threads > 0 ? options.num_threads : ThreadPool::default_num_threads()),
      flops_(task_flops(task)),
      history_(internal::read_history(task, options.log_file, options.restart_after, threads_,
                                      hold_back_last_round ? &held_ : nullptr)),
      resumed_(history_.trials() + static_cast<int64_t>(trial_keys(held_).size())),
      log_(options.log_file),
      measurer_(options.measure_runner ? options.measure_runner
                                       : std::make_shared<LocalMeasureRunner>(options.measure)),
      space_(task, tuner_space_options(threads_)),
      model_(options.shared_cost_model
                 ? options.shared_cost_model
                 : std::make_shared<SharedCostModel>(tuning_model_options(options))),
      member_(model_->join()),
      printer_(options.verbose) {
    model_->add(member_, history_.epoch_programs());
    std::optional<PreparedRound> held;
    if (!held_.records.empty()) {  // in flight, as it was when the next round was searched
        held.emplace();
        held->round.round = held_.records.front().round;
        held->keys = trial_keys(held_);
        held->logged = std::move(held_);
        held_ = LoggedRound{};
        in_flight_keys_.insert(held->keys.begin(), held->keys.end());
        in_flight_trials_ += static_cast<int64_t>(held->keys.size());
        in_flight_rounds_ += 1;
    }
    if (options_.measure_default)
        default_ = default_candidate(task_, history_.keys, in_flight_keys_);
    if (held) {
        int64_t left = options_.trials - history_.trials() - in_flight_trials_;
        if (left > 0) ahead_ = prepare(left);
        complete(*held);
    }
    // A run stopped (killed) after a round's trials were logged but before its re-measurements
    // were: they are measured now, as that round's, so that the resumed run goes on from the
    // history the uninterrupted one had (its re-measured costs rank the states that seed the
    // search, and decide which are timed again later).
    if (!held && options_.remeasure_top > 0 && history_.trials() > 0) {
        const int64_t last = history_.next_round - 1;
        bool remeasured = false;
        for (auto it = history_.records.rbegin(); it != history_.records.rend(); ++it) {
            if (it->round != last) break;
            remeasured = remeasured || !it->is_trial();
        }
        if (!remeasured) {
            round_.round = last;
            remeasure();
            round_ = TuningRound{};
        }
    }
    printer_.start(progress(), options_.log_file);
    if (options_.on_progress) options_.on_progress(progress());
}

bool Tuner::finished() {
    if (!stop_reason_.empty()) return true;
    if (history_.trials() >= options_.trials) {
        stop("trials");
    } else if (options_.early_stopping > 0 &&
               history_.trials() - history_.last_improvement >= options_.early_stopping) {
        stop("early_stopping");
    } else {
        stop_requested();
    }
    return !stop_reason_.empty();
}

// Asks should_stop (Python: were there signals, Ctrl-C?); stops when it says so.
bool Tuner::stop_requested() {
    if (options_.should_stop && options_.should_stop()) stop("stopped");
    return stop_reason_ == "stopped";
}

// `n` random states, none measured or chosen already, each lowering; fewer when the samples run
// out of new ones.
std::vector<SearchState> Tuner::random_states(int n, uint64_t seed,
                                              std::unordered_set<std::string>& chosen) const {
    std::vector<SearchState> out;
    constexpr int kBatches = 4;
    for (int b = 0; b < kBatches && static_cast<int>(out.size()) < n; ++b) {
        SampleResult r = space_.sample(2 * n + 8, mix(seed + static_cast<uint64_t>(b)));
        for (SearchState& s : r.states) {
            if (static_cast<int>(out.size()) >= n) break;
            std::string key = state_key(s.schedule);
            if (taken(key) || chosen.count(key) || !lowers(task_, s.schedule)) continue;
            chosen.insert(std::move(key));
            out.push_back(std::move(s));
        }
    }
    return out;
}

// A round measures at most as many candidates as the model has successful programs to learn
// from (at least min_programs): the first rounds grow 16, 16, 32, 64 under the defaults, so the
// model starts choosing after 16 random trials instead of after a whole random round. A model
// shared with other tasks (a job's) counts theirs too: a task's first round is a whole one once
// the model has learned from the tasks before it, and each round's search serves 64 trials
// instead of 16 (on a GPU convolution the search is most of a round's time).
int Tuner::round_size() const {
    int64_t known = std::max<int64_t>(
        options_.cost_model.min_programs,
        std::max(static_cast<int64_t>(history_.epoch_successes()), model_->num_successes()));
    return static_cast<int>(std::min<int64_t>(options_.measurements_per_round, known));
}

// The round's candidates: the evolutionary search's best and an epsilon-greedy share of random
// samples once the model has trained; random samples before; the default schedule first, until
// it is measured. None of them is measured or in flight: a round prepared while others are is
// numbered after them, and searched from the history and the model without them.
PreparedRound Tuner::prepare(int64_t max_trials) {
    auto t0 = Clock::now();
    PreparedRound p;
    TuningRound& round = p.round;
    round.round = history_.next_round + in_flight_rounds_;
    round.epoch = history_.epoch.number;
    int n = static_cast<int>(std::min<int64_t>(round_size(), max_trials));
    uint64_t seed = mix(options_.seed ^ mix(static_cast<uint64_t>(round.round)));
    std::vector<MeasureInput>& batch = p.batch;
    std::unordered_set<std::string> chosen;
    if (default_ && n > 0) {  // the first round's first candidate (measure_default)
        chosen.insert(state_key(*default_));
        batch.push_back({std::move(*default_), CandidateOrigin::Default});
        default_.reset();
        round.measured_default = true;
    }
    auto t_train = Clock::now();
    const CostModel& model = model_->model();  // retrains on the programs added since
    round.train_seconds = seconds_since(t_train);
    if (model.trained() && n > 0) {
        int n_random = static_cast<int>(options_.eps_greedy * n);
        int n_model = n - n_random - static_cast<int>(batch.size());
        EvolutionOptions evo{.population = options_.population,
                             .generations = options_.generations,
                             .mutation_prob = options_.mutation_prob,
                             .num_threads = threads_};
        size_t n_seeds = static_cast<size_t>(evo.measured_share * evo.population);
        std::unordered_set<std::string> excluded;  // measured or in flight
        if (!in_flight_keys_.empty()) {
            excluded = history_.keys;
            excluded.insert(in_flight_keys_.begin(), in_flight_keys_.end());
        }
        for (ScoredState& s :
             evolutionary_search(space_, model, history_.epoch_states(n_seeds),
                                 in_flight_keys_.empty() ? history_.keys : excluded, n_model, seed,
                                 evo, &round.search)) {
            if (!chosen.insert(state_key(s.state.schedule)).second) continue;
            batch.push_back({std::move(s.state.schedule), origin_of(s.state)});
            ++round.chosen_by_model;
        }
    }
    int want = n - static_cast<int>(batch.size());
    for (SearchState& s : random_states(want, seed + 1, chosen)) {
        batch.push_back({std::move(s.schedule), CandidateOrigin::Random});
        ++round.random;
    }
    for (const MeasureInput& in : batch) p.keys.push_back(state_key(in.schedule));
    p.request = make_measure_request(task_, batch, options_.measure);
    in_flight_keys_.insert(p.keys.begin(), p.keys.end());
    in_flight_trials_ += static_cast<int64_t>(batch.size());
    in_flight_rounds_ += 1;
    round.search_seconds = seconds_since(t0) - round.train_seconds;
    return p;
}

void Tuner::measure(PreparedRound& p) const {
    MeasureStats before = measurer_->stats();
    p.results = measurer_->run(p.request);
    MeasureStats after = measurer_->stats();
    double build = after.build - before.build;
    p.round.build_seconds += build;
    p.round.run_seconds += (after.total - before.total) - build;
}

void Tuner::discard(const PreparedRound& p) {
    for (const std::string& key : p.keys) in_flight_keys_.erase(key);
    in_flight_trials_ -= static_cast<int64_t>(p.keys.size());
    in_flight_rounds_ -= 1;
}

// A measured round's records join the log and the history (a resumed round's are the log's
// already), the fastest states are timed again, the model learns the round's programs.
void Tuner::complete(PreparedRound& p) {
    discard(p);  // no longer in flight: in the history from here on
    round_ = std::move(p.round);
    round_.epoch = history_.epoch.number;
    if (p.logged) {
        replay(p);
        return;
    }
    record(p.batch, p.results);
    remeasure();
    train();
    report_round();
}

// A resumed round (the log's last, held back while the next round was searched) completed as
// the uninterrupted run completed it: its records join the history, the re-measurements the
// killed run did not log are measured now, the model learns its programs.
void Tuner::replay(PreparedRound& p) {
    LoggedRound& logged = *p.logged;
    bool remeasured = std::any_of(logged.records.begin(), logged.records.end(),
                                  [](const TuningRecord& r) { return !r.is_trial(); });
    size_t first = history_.programs.size();
    history_.add(task_, std::move(logged.records), logged.schedules, threads_);
    batch_programs_.assign(history_.programs.begin() + static_cast<std::ptrdiff_t>(first),
                           history_.programs.end());
    if (!remeasured && options_.remeasure_top > 0) remeasure();
    train();
    round_ = TuningRound{};
}

std::vector<MeasureResult> Tuner::measure(const std::vector<MeasureInput>& batch) {
    MeasureStats before = measurer_->stats();
    std::vector<MeasureResult> results =
        measurer_->run(make_measure_request(task_, batch, options_.measure));
    MeasureStats after = measurer_->stats();
    double build = after.build - before.build;
    round_.build_seconds += build;
    round_.run_seconds += (after.total - before.total) - build;
    return results;
}

// Appends the round's measurements to the log (synced), then to the history.
void Tuner::record(const std::vector<MeasureInput>& batch,
                   const std::vector<MeasureResult>& results) {
    std::vector<TuningRecord> records;
    std::vector<std::optional<Schedule>> schedules;
    for (size_t i = 0; i < batch.size(); ++i) {
        records.push_back(make_record(task_, batch[i], results[i], options_.seed, round_.round));
        schedules.push_back(batch[i].schedule);
        round_.measured += 1;
        round_.errors += results[i].ok() ? 0 : 1;
    }
    log_.append(records);
    size_t first = history_.programs.size();
    history_.add(task_, std::move(records), schedules, threads_);
    batch_programs_.assign(history_.programs.begin() + static_cast<std::ptrdiff_t>(first),
                           history_.programs.end());
    round_.best_seconds = history_.best_seconds;
}

// Times the fastest states again (TuningOptions::remeasure_top), each until it has
// remeasure_limit measurements: a state whose one timing fell in a quiet moment of the machine
// costs the median of several once it is among the best. The default schedule is timed again
// too, once a round after the round of its trial, wherever its timing put it: one slow timing
// of it (a busy moment) would otherwise stand for ever, and the log's best could stay slower
// than not tuning.
void Tuner::remeasure() {
    std::vector<MeasureInput> batch;
    std::vector<size_t> trials;  // the trial record of each
    const auto& successes = history_.successes;
    const size_t top = static_cast<size_t>(options_.remeasure_top);
    for (size_t i = 0; i < successes.size(); ++i) {
        const TuningHistory::Success& s = successes[i];
        if (s.measurements >= options_.remeasure_limit) continue;
        const TuningRecord& trial = history_.records[s.record];
        bool late_default = options_.remeasure_top > 0 &&
                            trial.origin == CandidateOrigin::Default && trial.round < round_.round;
        if (i >= top && !late_default) continue;
        batch.push_back({s.state.schedule, CandidateOrigin::Remeasure});
        trials.push_back(s.record);
    }
    if (batch.empty()) return;
    std::vector<MeasureResult> results = measure(batch);
    std::vector<TuningRecord> records;
    std::vector<std::optional<Schedule>> schedules;
    for (size_t i = 0; i < batch.size(); ++i) {
        records.push_back(make_record(task_, batch[i], results[i], options_.seed, round_.round));
        // The trial's own text, so that readers of the log match the two without replaying.
        records.back().schedule_json = history_.records[trials[i]].schedule_json;
        schedules.push_back(batch[i].schedule);
    }
    log_.append(records);
    history_.add(task_, std::move(records), schedules, threads_);
    round_.remeasured = static_cast<int>(batch.size());
    round_.best_seconds = history_.best_seconds;
}

// The round's programs join the model's training set (it retrains before the next search).
// When the epoch's best has stalled (restart_after), a new epoch begins: the model forgets the
// task's programs.
void Tuner::train() {
    round_.quality = model_->update(member_, batch_programs_);
    round_.restarted = history_.end_round(options_.restart_after);
    if (round_.restarted) model_->clear(member_);
}

TuningProgress Tuner::progress() const {
    TuningProgress p;
    p.task = task_.workload_name().empty() ? "dag:" + task_.dag_hash_hex() : task_.workload_name();
    p.trials = history_.trials();
    p.trials_total = options_.trials;
    p.resumed_trials = resumed_;
    p.best_seconds = history_.best_seconds;
    p.best_gflops = std::isfinite(p.best_seconds) && flops_ > 0 ? flops_ / p.best_seconds / 1e9 : 0;
    p.elapsed_seconds = seconds_since(start_);
    int64_t done = p.trials - resumed_;
    if (done > 0)
        p.eta_seconds = p.elapsed_seconds / static_cast<double>(done) *
                        static_cast<double>(std::max<int64_t>(0, p.trials_total - p.trials));
    if (!rounds_.empty()) p.last_round = rounds_.back();
    return p;
}

void Tuner::report_round() {
    round_.total_seconds =
        round_.search_seconds + round_.build_seconds + round_.run_seconds + round_.train_seconds;
    rounds_.push_back(round_);
    TuningProgress p = progress();
    printer_.round(p);
    if (options_.on_progress) options_.on_progress(p);
}

// The tuning's final check (TuningOptions::final_measurements): the fastest few states
// (remeasure_top, at least the best) and the default schedule (when the log has it), timed in
// turns, final_measurements times each, and logged as one check (origin "check", the last
// round's number). The search's costs are medians of timings taken minutes or hours apart, and
// its best is the state whose timings fell lowest among hundreds: the check's are side by side,
// and they decide (ScheduleCosts, Record.h). A task checked since its last trial is not checked
// again.
void Tuner::check_best() {
    ScheduleCosts search;  // the search's own figures: its records without the checks'
    for (const TuningRecord& r : history_.records)
        if (r.origin != CandidateOrigin::Check) search.add(r);
    if (std::optional<ScheduleCosts::Best> b = search.best()) search_best_seconds_ = b->seconds;
    if (options_.final_measurements < 1 || history_.successes.empty() || stop_reason_ == "stopped")
        return;
    if (history_.records.back().origin == CandidateOrigin::Check) {  // nothing new since
        note_check();
        return;
    }
    auto is_default = [&](const TuningHistory::Success& s) {
        return history_.records[s.record].origin == CandidateOrigin::Default;
    };
    const auto& successes = history_.successes;
    std::vector<const TuningHistory::Success*> states;
    const size_t top = static_cast<size_t>(std::max(1, options_.remeasure_top));
    for (size_t i = 0; i < successes.size(); ++i)
        if (i < top || is_default(successes[i])) states.push_back(&successes[i]);
    std::vector<MeasureInput> batch;
    for (int r = 0; r < options_.final_measurements; ++r)
        for (const TuningHistory::Success* s : states)
            batch.push_back({s->state.schedule, CandidateOrigin::Check});
    std::vector<MeasureResult> results;
    try {
        results = measurer_->run(make_measure_request(task_, batch, options_.measure));
    } catch (const Error&) {
        return;  // the tuning is in the log; its result says the best was not checked
    }
    std::vector<TuningRecord> records;
    std::vector<std::optional<Schedule>> schedules;
    const int64_t round = history_.next_round - 1;
    for (size_t i = 0; i < batch.size(); ++i) {
        const TuningRecord& trial = history_.records[states[i % states.size()]->record];
        records.push_back(make_record(task_, batch[i], results[i], options_.seed, round));
        records.back().schedule_json = trial.schedule_json;  // as remeasure() keeps it
        schedules.push_back(batch[i].schedule);
    }
    log_.append(records);
    history_.add(task_, std::move(records), schedules, threads_);
    note_check();
}

// The check's figures for result(): the best's and the default's medians in it.
void Tuner::note_check() {
    for (const TuningHistory::Success& s : history_.successes) {
        if (s.behind) break;
        const TuningRecord& trial = history_.records[s.record];
        if (&s == &history_.successes.front()) {
            final_seconds_ = s.seconds;
            best_is_default_ = trial.origin == CandidateOrigin::Default;
        }
        if (trial.origin == CandidateOrigin::Default) default_seconds_ = s.seconds;
    }
}

TuningResult Tuner::result() {
    TuningResult r;
    r.best_schedule = history_.best_schedule;
    r.best_seconds = history_.best_seconds;
    r.flops = flops_;
    auto gflops = [&](double seconds) {
        return std::isfinite(seconds) && flops_ > 0 ? flops_ / seconds / 1e9 : 0;
    };
    r.best_gflops = gflops(r.best_seconds);
    r.final_seconds = final_seconds_;
    r.final_gflops = gflops(final_seconds_);
    r.default_seconds = default_seconds_;
    r.best_is_default = best_is_default_;
    r.search_best_seconds =
        std::isfinite(search_best_seconds_) ? search_best_seconds_ : history_.best_seconds;
    r.trials = history_.trials();
    r.resumed_trials = resumed_;
    for (const TuningRecord& rec : history_.records) r.errors += rec.is_trial() && !rec.ok();
    r.curve = tuning_curve(history_.records, flops_);
    r.rounds = rounds_;
    r.stop_reason = stop_reason_;
    r.seconds = seconds_since(start_);
    printer_.finish(r, progress().task);
    return r;
}

bool Tuner::run_round() {
    PreparedRound round = prepare(options_.trials - history_.trials());
    if (round.batch.empty()) {
        discard(round);
        stop("exhausted");
        return false;
    }
    if (stop_requested()) {
        discard(round);
        return false;
    }
    measure(round);
    complete(round);
    return true;
}

// Round N measures (beside the search where the runner times elsewhere) while round N+1 is
// searched, from the history without round N; then round N is completed.
void Tuner::run_rounds_ahead() {
    std::optional<PreparedRound> next = std::move(ahead_);  // a resume searched it already
    ahead_.reset();
    if (!next && !finished()) next = prepare(options_.trials - history_.trials());
    while (next) {
        PreparedRound now = std::move(*next);
        next.reset();
        if (now.batch.empty()) {
            discard(now);
            stop("exhausted");
            break;
        }
        if (stop_requested()) {
            discard(now);
            break;
        }
        measure_while(
            measures_elsewhere(), [&] { measure(now); },
            [&] {
                int64_t left = options_.trials - history_.trials() - in_flight_trials_;
                if (left > 0) next = prepare(left);
            });
        complete(now);
        if (finished() && next) {
            discard(*next);
            next.reset();
        }
    }
    finished();  // the stop reason, when the trials ran out with none in flight
}

}  // namespace internal

CostModelOptions tuning_model_options(const TuningOptions& options) {
    CostModelOptions m = options.cost_model;
    m.seed = options.seed;
    return m;
}

double task_flops(const SearchTask& task) {
    try {
        return flop_count(task.dag().outputs);
    } catch (const DSLError&) {
        return 0;  // a symbolic extent: no throughput
    }
}

std::vector<TuningCurvePoint> tuning_curve(const std::vector<TuningRecord>& records, double flops) {
    std::vector<TuningCurvePoint> curve;
    ScheduleCosts costs;
    auto point = [&] {
        TuningCurvePoint p;
        p.trial = static_cast<int64_t>(curve.size()) + 1;
        if (auto best = costs.best()) p.best_seconds = best->seconds;
        p.best_gflops = std::isfinite(p.best_seconds) && p.best_seconds > 0 && flops > 0
                            ? flops / p.best_seconds / 1e9
                            : 0;
        return p;
    };
    bool open = false;  // a trial's point waits for the re-measurements after it
    for (const TuningRecord& r : records) {
        if (r.is_trial() && open) curve.push_back(point());
        costs.add(r);
        open = open || r.is_trial();
    }
    if (open) curve.push_back(point());
    return curve;
}

TuningResult tune(const SearchTask& task, const TuningOptions& options) {
    check_options(options);
    // Reads the log: trials done, the model, the seeds (searching ahead, the next round first).
    internal::Tuner tuner(task, options, options.search_ahead);
    if (options.search_ahead) {
        tuner.run_rounds_ahead();
    } else {
        while (!tuner.finished())
            if (!tuner.run_round()) break;
    }
    tuner.check_best();
    return tuner.result();
}

}  // namespace tessel
