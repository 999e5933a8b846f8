// Apply-best (auto_schedule/records/ApplyHistoryBest.h): the records by DAG hash, fastest first;
// the matching of a record's target with the build's; the thread's stack of contexts.
#include "tessel/auto_schedule/records/ApplyHistoryBest.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "target/CpuFeatures.h"
#include "target/GpuArchTable.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/records/ShippedLogs.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/op/DefaultSchedule.h"

namespace tessel {

namespace {

thread_local std::vector<ApplyHistoryBest*> context_stack;

// May a schedule tuned for `recorded` serve `target` (rule 2 of the header)?
bool compatible(const std::string& recorded, const Target& target) {
    std::optional<Target> r;
    try {
        r.emplace(recorded);
    } catch (const Error&) {
        return false;  // a CPU or architecture this tessel does not know
    }
    if (r->kind() != target.kind() || r->float_mode() != target.float_mode()) return false;
    if (target.is_gpu()) {
        int have = target.compute_capability(), had = r->compute_capability();
        // An architecture-specific record (sm_90a: wgmma) serves that architecture only.
        if (r->arch() != internal::gpu_base_arch(r->arch())) return r->arch() == target.arch();
        return had > 0 && have > 0 && had <= have;
    }
    std::set<std::string> have = internal::enabled_cpu_features(target.cpu(), target.features());
    for (const std::string& f : internal::enabled_cpu_features(r->cpu(), r->features()))
        if (!have.count(f)) return false;
    return true;
}

std::string describe(const std::vector<Tensor>& outputs, const std::string& hash,
                     const std::vector<TuningRecord>& records,
                     const std::map<std::string, std::vector<size_t>>& by_hash) {
    auto it = by_hash.find(hash);
    if (it != by_hash.end() && !records[it->second[0]].workload.empty())
        return records[it->second[0]].task_key().substr(
            0, records[it->second[0]].task_key().find(' '));
    std::string names;
    for (const Tensor& t : outputs) names += (names.empty() ? "" : ", ") + t->name;
    return "the computation of " + names + " (DAG " + hash + ")";
}

}  // namespace

ApplyHistoryBest::ApplyHistoryBest(const std::string& log_path, WarningSink warn)
    : ApplyHistoryBest(read_records(log_path), std::move(warn), true) {}

ApplyHistoryBest::ApplyHistoryBest(std::vector<TuningRecord> records, WarningSink warn)
    : ApplyHistoryBest(RecordLog{std::move(records), 0, {}, 0}, std::move(warn), true) {}

ApplyHistoryBest::ApplyHistoryBest(Detached, std::vector<TuningRecord> records, WarningSink warn)
    : ApplyHistoryBest(RecordLog{std::move(records), 0, {}, 0}, std::move(warn), false) {}

ApplyHistoryBest::ApplyHistoryBest(RecordLog log, WarningSink warn, bool context)
    : records_(std::move(log.records)),
      skipped_(log.skipped),
      sink_(std::move(warn)),
      detached_(!context) {
    if (!sink_) sink_ = [](const std::string& m) { std::cerr << "tessel: warning: " << m << "\n"; };
    // One entry per schedule, fastest first by the median of its measurements (ScheduleCosts).
    ScheduleCosts costs;
    for (const TuningRecord& r : records_) costs.add(r);
    for (const ScheduleCosts::Best& b : costs.ranking())
        by_hash_[records_[b.record].dag_hash].push_back(b.record);
    if (context) context_stack.push_back(this);
}

ApplyHistoryBest::~ApplyHistoryBest() {
    // A detached one was never on a stack, and it may be destroyed at exit, after this thread's
    // thread_local stack.
    if (detached_) return;
    auto it = std::find(context_stack.begin(), context_stack.end(), this);
    if (it != context_stack.end()) context_stack.erase(it);
}

std::vector<ApplyHistoryBest::Match> ApplyHistoryBest::candidates(const std::string& hash,
                                                                  const Target& target) const {
    std::vector<Match> exact, other;
    auto it = by_hash_.find(hash);
    if (it == by_hash_.end()) return {};
    std::map<std::string, bool> verdicts;  // target string -> compatible
    // The target without an architecture suffix ("cuda -arch=sm_90" for sm_90a, which plain
    // "cuda" resolves to on a Hopper GPU): its records were tuned for this very device.
    std::string base_target = target.str();
    if (target.is_gpu() && internal::gpu_base_arch(target.arch()) != target.arch()) {
        const std::string from = "-arch=" + target.arch();
        if (size_t at = base_target.find(from); at != std::string::npos)
            base_target.replace(at, from.size(), "-arch=" + internal::gpu_base_arch(target.arch()));
    }
    for (size_t i : it->second) {
        const TuningRecord& r = records_[i];
        if (r.target == target.str() || r.target == base_target) {
            exact.push_back({&r, true});
            continue;
        }
        auto v = verdicts.find(r.target);
        if (v == verdicts.end()) v = verdicts.emplace(r.target, compatible(r.target, target)).first;
        if (v->second) other.push_back({&r, false});
    }
    exact.insert(exact.end(), other.begin(), other.end());
    return exact;
}

void ApplyHistoryBest::warn_once(const std::string& key, const std::string& message) {
    {
        std::lock_guard<std::mutex> lock(warnings_mutex_);
        if (!warned_.insert(key).second) return;
        warnings_.push_back(message);
    }
    sink_(message);  // outside the lock: Python's sink takes the GIL
}

std::vector<std::string> ApplyHistoryBest::warnings() const {
    std::lock_guard<std::mutex> lock(warnings_mutex_);
    return warnings_;
}

Schedule ApplyHistoryBest::choose(const SearchTask& task) {
    const std::vector<Tensor>& outputs = task.dag().outputs;
    std::string label = task.key().substr(0, task.key().find(' '));
    return choose(
        outputs, task.target(), [&] { return op::default_schedule_rules(outputs, task.target()); },
        label);
}

Schedule ApplyHistoryBest::choose(const std::vector<Tensor>& outputs, const Target& target,
                                  const std::function<Schedule()>& fallback,
                                  const std::string& label) {
    // The target's limits, as the tuner replayed the records with (a GPU record's auto-unroll
    // of 1024 is refused under the CPU's 512).
    Schedule base = create_schedule(outputs, schedule_limits_for(target));
    std::ostringstream hex;  // as SearchTask::dag_hash_hex and Schedule::to_json write it
    hex << std::hex << base.workload_key();
    std::string hash = hex.str(), task = hash + " " + target.str();
    std::string name = label.empty() ? describe(outputs, hash, records_, by_hash_) : label;
    for (const Match& m : candidates(hash, target)) {
        try {
            Schedule s = schedule_from_json(base, m.record->schedule_json);
            if (!m.exact)
                warn_once(task, "no tuning record for target '" + target.str() + "' of " + name +
                                    "; using the best record measured on '" + m.record->target +
                                    "', whose features this target has");
            return s;
        } catch (const ScheduleError& e) {
            // A record that no longer replays: said once, then the next one is tried.
            std::string why = e.what();
            warn_once(task + " replay", "the fastest tuning record of " + name + " on target '" +
                                            target.str() + "' does not replay (" +
                                            why.substr(0, why.find('\n')) +
                                            "); using the next fastest that does");
            continue;
        }
    }
    // The shipped logs hold records for a few workloads only: silent about all the others.
    if (!(detached_ && by_hash_.count(hash) == 0))
        warn_once(task, "no usable tuning record for " + name + " on target '" + target.str() +
                            "'; using the default schedule");
    return fallback();
}

ApplyHistoryBest* current_apply_history_best() {
    return context_stack.empty() ? nullptr : context_stack.back();
}

}  // namespace tessel
