// The cost model's figures (auto_schedule/cost_model/CostModel.h): normalised throughputs, pairwise
// ranking accuracy and recall@k, all within one task at a time.
#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>

#include "tessel/auto_schedule/cost_model/CostModel.h"

namespace tessel {

double MeasuredProgram::mean_cost() const {
    if (!ok()) return std::numeric_limits<double>::infinity();
    return std::accumulate(costs.begin(), costs.end(), 0.0) / double(costs.size());
}

namespace {

// The indices of the successful programs of each task, tasks in order of first appearance.
std::vector<std::vector<size_t>> successes_by_task(const std::vector<MeasuredProgram>& programs) {
    std::map<std::string, size_t> slot;
    std::vector<std::vector<size_t>> tasks;
    for (size_t i = 0; i < programs.size(); ++i) {
        if (!programs[i].ok()) continue;
        auto [it, fresh] = slot.emplace(programs[i].task_key, tasks.size());
        if (fresh) tasks.emplace_back();
        tasks[it->second].push_back(i);
    }
    return tasks;
}

// The first `k` of `ids` by `value`, largest first (ties by position).
std::vector<size_t> top_k(std::vector<size_t> ids, const std::vector<double>& value, size_t k) {
    std::stable_sort(ids.begin(), ids.end(),
                     [&](size_t a, size_t b) { return value[a] > value[b]; });
    ids.resize(std::min(k, ids.size()));
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace

std::vector<double> normalized_throughputs(const std::vector<MeasuredProgram>& programs) {
    std::vector<double> y(programs.size(), 0.0);
    for (const std::vector<size_t>& task : successes_by_task(programs)) {
        double best = std::numeric_limits<double>::infinity();
        for (size_t i : task) best = std::min(best, programs[i].mean_cost());
        for (size_t i : task) y[i] = best > 0 ? best / programs[i].mean_cost() : 1.0;
    }
    return y;
}

RankingQuality ranking_quality(const std::vector<MeasuredProgram>& programs,
                               const std::vector<double>& scores, int k) {
    if (scores.size() != programs.size())
        TESSEL_THROW(RuntimeError) << "ranking_quality: " << scores.size() << " scores for "
                                   << programs.size() << " programs";
    if (k < 1) TESSEL_THROW(RuntimeError) << "ranking_quality: k must be at least 1, not " << k;
    std::vector<double> y = normalized_throughputs(programs);
    RankingQuality q;
    q.k = k;
    double right = 0, recall = 0;
    for (const std::vector<size_t>& task : successes_by_task(programs)) {
        for (size_t a = 0; a < task.size(); ++a)
            for (size_t b = a + 1; b < task.size(); ++b) {
                double ya = y[task[a]], yb = y[task[b]];
                if (std::abs(ya - yb) < 0.05 * std::max(ya, yb)) continue;
                double sa = scores[task[a]], sb = scores[task[b]];
                right += sa == sb ? 0.5 : ((sa > sb) == (ya > yb) ? 1.0 : 0.0);
                ++q.pairs;
            }
        if (task.size() <= size_t(k)) continue;
        std::vector<size_t> best = top_k(task, y, k), picked = top_k(task, scores, k);
        std::vector<size_t> both;
        std::set_intersection(best.begin(), best.end(), picked.begin(), picked.end(),
                              std::back_inserter(both));
        recall += double(both.size()) / k;
        ++q.tasks;
    }
    if (q.pairs) q.pairwise_accuracy = right / double(q.pairs);
    if (q.tasks) q.recall_at_k = recall / q.tasks;
    return q;
}

}  // namespace tessel
