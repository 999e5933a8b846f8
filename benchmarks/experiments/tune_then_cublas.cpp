// tune_then_cublas (issue 57, docs/ideas.md "What a GPU tuning leaves in its process"): the
// Python experiment's question without Python. A C++ process makes a CUDA context (cudart, as
// PyTorch does), then one step of a tuning of the fp16 4096^3 GEMM for `cuda` (simulated
// measurements: no worker, no build), then a float32 cublasSgemm, and prints cuBLAS's statuses
// (0 is success) or the exception it threw. cudart and cuBLAS are opened with dlopen (PyTorch's
// wheels carry them; LD_LIBRARY_PATH names their folder). Built and run by
// `cublas_after_tune.py --cpp BUILD_DIR STEP...`. Steps:
//   none          nothing between the context and the product
//   history, writer, runner, space, model, all
//                 one part of the tuner alone (the log read, its writer, the measure runner, the
//                 search space unlowered, the shared cost model), or all of them
//   rules, replay, lower, features
//                 the default candidate's parts (Tuner.cpp's default_candidate): the rules'
//                 schedule, then replayed on the task's initial schedule, then lowered, or its
//                 features extracted (which lowers it)
//   ctor          the tuner made (internal::Tuner), no round
//   tune_zero     tune() of 0 trials; tune_one: 1 trial (one random candidate, nothing else)
//   tune_stop     tune_one with a should_stop callback
// A step with "pythreads" in its name takes Python's defaults (every core for the tuner and the
// builds; else one), with "default" measures the default schedule first (as Python's tune does).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "auto_schedule/tuner/TunerInternal.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/auto_schedule/measure/MeasureRunner.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/auto_schedule/tuner/Tuner.h"
#include "tessel/lower/Lower.h"
#include "tessel/op/DefaultSchedule.h"

using namespace tessel;

namespace {

template <typename F>
F symbol(void* lib, const char* name) {
    void* p = dlsym(lib, name);
    if (!p) {
        std::printf("no symbol %s\n", name);
        std::exit(2);
    }
    return reinterpret_cast<F>(p);
}

bool has(const std::string& step, const char* part) {
    return step.find(part) != std::string::npos;
}

void tuning_step(const std::string& step, const std::string& target) {
    SearchTask task("matmul_mixed",
                    {int64_t(4096), int64_t(4096), int64_t(4096), std::string("float16")},
                    Target(target));
    TuningOptions o;
    o.trials = has(step, "tune_one") || has(step, "tune_stop") ? 1 : 0;
    o.measurements_per_round = 1;
    o.population = 1;
    o.generations = 0;
    o.remeasure_top = 0;
    o.eps_greedy = 1.0;
    o.num_threads = has(step, "pythreads") ? 0 : 1;
    o.measure_default = has(step, "default");
    o.verbose = 0;
    o.seed = 1;
    o.measure.simulate_ms = 1;
    o.measure.build_threads = has(step, "pythreads") ? 0 : 1;
    o.cost_model.min_programs = 1 << 20;
    o.log_file =
        (std::filesystem::temp_directory_path() / ("tune_then_cublas_" + step + ".jsonl")).string();
    std::filesystem::remove(o.log_file);
    if (has(step, "tune_stop")) o.should_stop = [] { return false; };
    SearchSpaceOptions unlowered;
    unlowered.lower = false;
    unlowered.num_threads = 1;
    if (step.rfind("tune", 0) == 0) {
        tune(task, o);
    } else if (step.rfind("ctor", 0) == 0) {
        internal::Tuner tuner(task, o);
    } else if (step == "history") {
        internal::read_history(task, o.log_file, 0, 1);
    } else if (step == "writer") {
        RecordWriter writer(o.log_file);
    } else if (step == "runner") {
        std::make_shared<LocalMeasureRunner>(o.measure);
    } else if (step == "space") {
        SearchSpace space(task, unlowered);
    } else if (step == "model") {
        SharedCostModel model(o.cost_model);
        model.add(model.join(), {});
    } else if (step == "rules" || step == "replay" || step == "features" || step == "lower") {
        // The default candidate's parts (Tuner.cpp's default_candidate): the rules' schedule,
        // replayed on the task's initial schedule, lowered, its features.
        Schedule rules = op::default_schedule_rules(task.dag().outputs, task.target());
        if (step == "rules") return;
        Schedule s = replay(task.initial_schedule(), rules.steps());
        if (step == "replay") return;
        if (step == "lower")
            lower(s, task.dag().args(), task.target());
        else
            extract_features(task, s);
    } else if (step == "all") {
        internal::read_history(task, o.log_file, 0, 1);
        RecordWriter writer(o.log_file);
        auto runner = std::make_shared<LocalMeasureRunner>(o.measure);
        SearchSpace space(task, unlowered);
        SharedCostModel model(o.cost_model);
        model.add(model.join(), {});
    } else if (step != "none") {
        std::printf("unknown step %s\n", step.c_str());
        std::exit(2);
    }
}

// The process's address space after the step: its virtual size and mappings (/proc/self), which
// an allocation failing in cuBLAS would run into under a limit (ulimit -v, vm.max_map_count).
std::string address_space() {
    std::ifstream status("/proc/self/status"), maps("/proc/self/maps");
    std::string line, vm = "?";
    while (std::getline(status, line))
        if (line.rfind("VmSize:", 0) == 0) vm = line.substr(7);
    int64_t n = 0;
    while (std::getline(maps, line)) ++n;
    return "VmSize" + vm + ", " + std::to_string(n) + " mappings";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string step = argc > 1 ? argv[1] : "none";
    const std::string target = argc > 2 ? argv[2] : "cuda";
    void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL);
    void* blas = dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!rt || !blas) {
        std::printf("dlopen: %s\n", dlerror());
        return 2;
    }
    auto cuda_malloc = symbol<int (*)(void**, size_t)>(rt, "cudaMalloc");
    auto cuda_free = symbol<int (*)(void*)>(rt, "cudaFree");
    auto cuda_synchronize = symbol<int (*)()>(rt, "cudaDeviceSynchronize");
    auto cublas_create = symbol<int (*)(void**)>(blas, "cublasCreate_v2");
    auto cublas_sgemm =
        symbol<int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                       const float*, int, const float*, float*, int)>(blas, "cublasSgemm_v2");
    cuda_free(nullptr);  // the context first, as PyTorch makes it
    tuning_step(step, target);
    const std::string space = address_space();
    try {
        void* handle = nullptr;
        const int created = cublas_create(&handle);
        const int n = 4096;
        float *a = nullptr, *b = nullptr, *c = nullptr;
        cuda_malloc(reinterpret_cast<void**>(&a), sizeof(float) * n * n);
        cuda_malloc(reinterpret_cast<void**>(&b), sizeof(float) * n * n);
        cuda_malloc(reinterpret_cast<void**>(&c), sizeof(float) * n * n);
        const float one = 1, zero = 0;
        const int gemm = cublas_sgemm(handle, 0, 0, n, n, n, &one, a, n, b, n, &zero, c, n);
        std::printf("%-22s cublasCreate %d, cublasSgemm %d, synchronize %d (before: %s)\n",
                    step.c_str(), created, gemm, cuda_synchronize(), space.c_str());
    } catch (const std::exception& e) {
        std::printf("%-22s FAILED: %s (before: %s)\n", step.c_str(), e.what(), space.c_str());
    }
    return 0;
}
