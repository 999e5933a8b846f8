// The cost-model benchmark's data set (Dataset.h).
#include "Dataset.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "RandomSchedules.h"
#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/driver/Build.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/TimeEvaluator.h"
#include "tessel/te/ReferenceInterpreter.h"

namespace tessel::bench {

namespace {

using json = nlohmann::json;

// Bump when the tasks, the schedule generator or the measurement change.
const char* const kDatasetName = "random-gemm-conv2d-v2";

// One task's arguments: random inputs (never zeros), the output, and the reference output.
struct TaskData {
    std::vector<NDArray> args;
    HostArray expected;
    Tolerance tolerance;
};

NDArray to_ndarray(const HostArray& h) {
    NDArray a = NDArray::empty(h.shape(), float32());
    std::memcpy(a.data(), h.data(), h.nbytes());
    return a;
}

TaskData task_data(const SearchTask& task, uint64_t seed) {
    TaskData d;
    std::vector<std::pair<Tensor, HostArray>> inputs;
    for (const Tensor& t : task.dag().inputs) {
        std::vector<int64_t> shape;
        for (const Expr& e : t.shape()) shape.push_back(*as_const_int(e));
        HostArray h = HostArray::random(Float(32), shape, seed++);
        d.args.push_back(to_ndarray(h));
        inputs.push_back({t, h});
    }
    d.expected = evaluate_reference(task.dag().outputs, inputs)[0];
    d.args.push_back(NDArray::empty(d.expected.shape(), float32()));
    d.tolerance = tolerance_for(Float(32), 4096);
    return d;
}

// Builds, checks and times one schedule.
DatasetRecord measure(const SearchTask& task, const Schedule& s, TaskData* data) {
    DatasetRecord r;
    r.schedule = s.to_json();
    Module m;
    try {
        m = build(s, task.dag().args(), task.target());
    } catch (const Error&) {
        r.error = 1;
        return r;
    }
    Kernel kernel = m.get("main");
    kernel(data->args);
    HostArray out(Float(32), data->expected.shape());
    std::memcpy(out.data(), data->args.back().data(), out.nbytes());
    if (!compare_to_reference(out, data->expected, data->tolerance)) {
        r.error = 2;
        return r;
    }
    // At least 5 runs and 20 ms (fast kernels run many times), at most 200 runs; the cost is the
    // median (a preempted run does not move it).
    TimeEvaluatorOptions o;
    o.warmup = 2;
    o.min_repeats = 5;
    o.max_repeats = 200;
    o.min_total_seconds = 0.02;
    r.costs = {time_evaluate([&](int) { kernel(data->args); }, 1, o).median};
    return r;
}

json header(const std::vector<SearchTask>& tasks, int size, uint64_t seed) {
    json h = {{"dataset", kDatasetName}, {"size", size}, {"seed", seed}};
    for (const SearchTask& t : tasks) h["tasks"].push_back(t.key());
    return h;
}

Dataset generate(const std::vector<SearchTask>& tasks, int size, uint64_t seed) {
    Dataset d{kDatasetName, tasks, {}, 0};
    auto t0 = std::chrono::steady_clock::now();
    std::mt19937_64 rng(seed);
    std::vector<TaskData> data;
    for (size_t t = 0; t < tasks.size(); ++t) data.push_back(task_data(tasks[t], 1000 * (t + 1)));
    for (int i = 0; i < size; ++i) {
        int t = i % int(tasks.size());
        for (;;) {
            try {
                Schedule s = random_schedule(tasks[t], rng);
                d.records.push_back(measure(tasks[t], s, &data[t]));
                break;
            } catch (const ScheduleError&) {
                // a random choice a primitive refused: draw again
            }
        }
        d.records.back().task = t;
        if ((i + 1) % 250 == 0)
            std::printf(
                "  generated %d / %d programs (%.0f s)\n", i + 1, size,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        std::fflush(stdout);
    }
    d.generation_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return d;
}

void save(const std::string& path, const Dataset& d, const json& head) {
    std::ofstream out(path + ".tmp");
    out << head.dump() << "\n";
    for (const DatasetRecord& r : d.records)
        out << json{{"task", r.task},
                    {"schedule", r.schedule},
                    {"costs", r.costs},
                    {"error", r.error}}
                   .dump()
            << "\n";
    out.close();
    std::rename((path + ".tmp").c_str(), path.c_str());
}

// The cached data set, or an empty one when the cache is missing or made for other settings.
Dataset load(const std::string& path, const std::vector<SearchTask>& tasks, const json& head) {
    Dataset d{kDatasetName, tasks, {}, 0};
    std::ifstream in(path);
    std::string line;
    if (!std::getline(in, line) || json::parse(line, nullptr, false) != head) return d;
    while (std::getline(in, line)) {
        json j = json::parse(line);
        d.records.push_back({j["task"].get<int>(), j["schedule"].get<std::string>(),
                             j["costs"].get<std::vector<double>>(), j["error"].get<int>()});
    }
    if (d.records.size() != head["size"].get<size_t>()) d.records.clear();
    return d;
}

}  // namespace

std::vector<SearchTask> dataset_tasks(const Target& target) {
    std::vector<SearchTask> tasks;
    const int64_t gemms[][3] = {{128, 128, 128}, {64, 256, 128}, {256, 128, 64}, {96, 96, 192}};
    for (const auto& g : gemms)
        tasks.emplace_back("matmul", WorkloadParams{g[0], g[1], g[2], Float(32)}, target);
    // N, C, H, W, K, kernel, stride, pad
    const int64_t convs[][8] = {{1, 32, 14, 14, 32, 3, 1, 1},
                                {1, 16, 28, 28, 32, 3, 1, 1},
                                {1, 64, 7, 7, 64, 3, 1, 1},
                                {1, 32, 28, 28, 16, 1, 1, 0}};
    for (const auto& c : convs) {
        WorkloadParams p(c, c + 8);
        p.push_back(Float(32));
        tasks.emplace_back("conv2d", p, target);
    }
    return tasks;
}

double remeasured_pair_agreement(const Dataset& d, int per_task, uint64_t seed) {
    std::mt19937_64 rng(seed);
    double agree = 0, pairs = 0;
    for (size_t t = 0; t < d.tasks.size(); ++t) {
        std::vector<const DatasetRecord*> ok;
        for (const DatasetRecord& r : d.records)
            if (r.task == int(t) && r.error == 0) ok.push_back(&r);
        std::shuffle(ok.begin(), ok.end(), rng);
        ok.resize(std::min<size_t>(ok.size(), size_t(per_task)));
        TaskData data = task_data(d.tasks[t], 1000 * (t + 1));
        std::vector<double> first, second;
        for (const DatasetRecord* r : ok) {
            DatasetRecord again = measure(d.tasks[t], d.tasks[t].apply_record(r->schedule), &data);
            if (again.error) continue;
            first.push_back(r->costs[0]);
            second.push_back(again.costs[0]);
        }
        for (size_t a = 0; a < first.size(); ++a)
            for (size_t b = a + 1; b < first.size(); ++b) {
                if (std::abs(first[a] - first[b]) < 0.05 * std::max(first[a], first[b])) continue;
                agree += (first[a] < first[b]) == (second[a] < second[b]);
                pairs += 1;
            }
    }
    return pairs ? agree / pairs : 0;
}

Dataset load_or_generate_dataset(const std::string& cache_path, int size, uint64_t seed,
                                 const Target& target) {
    std::vector<SearchTask> tasks = dataset_tasks(target);
    json head = header(tasks, size, seed);
    Dataset d = load(cache_path, tasks, head);
    if (!d.records.empty()) return d;
    std::printf("generating the data set (%d programs; cached in %s)\n", size, cache_path.c_str());
    d = generate(tasks, size, seed);
    save(cache_path, d, head);
    return d;
}

}  // namespace tessel::bench
