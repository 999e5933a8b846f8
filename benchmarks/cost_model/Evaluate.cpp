// The cost-model benchmark's ranking figures (Evaluate.h).
#include "Evaluate.h"

#include <chrono>
#include <cstdio>

#include "tessel/auto_schedule/features/Features.h"

namespace tessel::bench {

std::vector<MeasuredProgram> measured_programs(const Dataset& d, double* ms_per_program) {
    std::vector<MeasuredProgram> programs;
    double seconds = 0;
    for (const DatasetRecord& r : d.records) {
        const SearchTask& task = d.tasks[r.task];
        MeasuredProgram p;
        p.task_key = task.key();
        auto t0 = std::chrono::steady_clock::now();
        Schedule s = task.apply_record(r.schedule);
        p.features = extract_features(task, s);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        p.steps = s.steps();
        p.costs = r.costs;
        p.error = r.error;
        programs.push_back(std::move(p));
    }
    *ms_per_program = programs.empty() ? 0 : seconds * 1e3 / double(programs.size());
    return programs;
}

namespace {

std::string figure(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v);
    return v == v ? buf : "n/a";
}

}  // namespace

RankingQuality evaluate_split(const std::string& name, const std::vector<MeasuredProgram>& train,
                              const std::vector<MeasuredProgram>& test,
                              const CostModelOptions& options) {
    CostModel model(options);
    auto t0 = std::chrono::steady_clock::now();
    model.train(train);
    double train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RankingQuality q = ranking_quality(test, model.predict(test), 30);
    std::printf(
        "%-13s train %zu programs (%lld used, %.1f s), test %zu: pairwise accuracy %s "
        "over %lld pairs, recall@30 %s over %d tasks\n",
        name.c_str(), train.size(), (long long)model.num_trained_programs(), train_s, test.size(),
        figure(q.pairwise_accuracy).c_str(), (long long)q.pairs, figure(q.recall_at_k).c_str(),
        q.tasks);
    return q;
}

bool check_deterministic(const std::vector<MeasuredProgram>& programs,
                         const CostModelOptions& options) {
    std::vector<MeasuredProgram> some(programs.begin(),
                                      programs.begin() + std::min<size_t>(programs.size(), 400));
    CostModel a(options), b(options);
    a.train(some);
    b.train(some);
    return a.predict(some) == b.predict(some);
}

}  // namespace tessel::bench
