// What each schedule of a log costs: the median of its successful measurements (Record.h,
// ScheduleCosts). The tuner re-measures its fastest candidates (Tuner.h), and the log's readers
// (builds, the task scheduler, tessel-tune best / distill, tuning curves) judge by this cost.
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
    auto [it, inserted] = entries_.try_emplace(key(record));
    Entry& e = it->second;
    if (inserted) e.first = index;
    if (!record.ok()) return e.cost;
    if (!e.samples.empty()) order_.erase({e.cost, e.first});
    e.samples.push_back(record.mean_cost());
    e.cost = median(e.samples);
    order_.insert({e.cost, e.first});
    return e.cost;
}

double ScheduleCosts::cost(const TuningRecord& record) const {
    auto it = entries_.find(key(record));
    return it == entries_.end() ? std::numeric_limits<double>::infinity() : it->second.cost;
}

int ScheduleCosts::measurements(const TuningRecord& record) const {
    auto it = entries_.find(key(record));
    return it == entries_.end() ? 0 : static_cast<int>(it->second.samples.size());
}

std::optional<ScheduleCosts::Best> ScheduleCosts::best() const {
    if (order_.empty()) return std::nullopt;
    return Best{order_.begin()->first, order_.begin()->second};
}

std::vector<ScheduleCosts::Best> ScheduleCosts::ranking() const {
    std::vector<Best> out;
    out.reserve(order_.size());
    for (const auto& [seconds, first] : order_) out.push_back({seconds, first});
    return out;
}

}  // namespace tessel
