// What each schedule of a log costs: the median of its successful measurements, a final check's
// alone once one timed it (Record.h, ScheduleCosts). The tuner re-measures its fastest candidates
// and checks them against the default at the end (Tuner.h), and the log's readers (builds, the
// task scheduler, tessel-tune best / distill, tuning curves) judge by this cost.
#include <algorithm>

#include "tessel/auto_schedule/records/Record.h"

namespace tessel {

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<TuningRecord> trial_records(const std::vector<TuningRecord>& records) {
    std::vector<TuningRecord> out;
    for (const TuningRecord& r : records)
        if (r.is_trial()) out.push_back(r);
    return out;
}

std::string ScheduleCosts::key(const TuningRecord& record) {
    return record.task_key() + "\n" + record.schedule_json;
}

double ScheduleCosts::add(const TuningRecord& record) {
    size_t index = added_++;
    const bool check = record.origin == CandidateOrigin::Check;
    if (check) begin_check(record.task_key(), record.round);
    auto [it, inserted] = entries_.try_emplace(key(record));
    Entry& e = it->second;
    if (inserted) e.first = index;
    if (!e.samples.empty()) order_.erase(rank(e));
    if (check && e.check != record.round) {  // its first timing in this check: only they count
        e.check = record.round;
        e.behind = false;
        e.samples.clear();
        e.cost = std::numeric_limits<double>::infinity();
    }
    if (record.ok()) {
        e.samples.push_back(record.mean_cost());
        e.cost = median(e.samples);
    }
    if (!e.samples.empty()) order_.insert(rank(e));
    return e.cost;
}

// A new check of `task_key`: every schedule of the task ranks behind until the check times it.
void ScheduleCosts::begin_check(const std::string& task_key, int64_t round) {
    auto [c, fresh] = checks_.try_emplace(task_key, round);
    if (!fresh && c->second == round) return;
    c->second = round;
    const std::string prefix = task_key + "\n";
    for (auto it = entries_.lower_bound(prefix);
         it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        Entry& e = it->second;
        if (e.behind) continue;
        if (!e.samples.empty()) order_.erase(rank(e));
        e.behind = true;
        if (!e.samples.empty()) order_.insert(rank(e));
    }
}

double ScheduleCosts::cost(const TuningRecord& record) const {
    auto it = entries_.find(key(record));
    return it == entries_.end() ? std::numeric_limits<double>::infinity() : it->second.cost;
}

int ScheduleCosts::measurements(const TuningRecord& record) const {
    auto it = entries_.find(key(record));
    return it == entries_.end() ? 0 : static_cast<int>(it->second.samples.size());
}

bool ScheduleCosts::behind_check(const TuningRecord& record) const {
    auto it = entries_.find(key(record));
    return it != entries_.end() && it->second.behind;
}

std::optional<ScheduleCosts::Best> ScheduleCosts::best() const {
    if (order_.empty()) return std::nullopt;
    return Best{std::get<1>(*order_.begin()), std::get<2>(*order_.begin())};
}

std::vector<ScheduleCosts::Best> ScheduleCosts::ranking() const {
    std::vector<Best> out;
    out.reserve(order_.size());
    for (const auto& [behind, seconds, first] : order_) out.push_back({seconds, first});
    return out;
}

}  // namespace tessel
