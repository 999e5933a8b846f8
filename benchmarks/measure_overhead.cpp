// Benchmark: the measurement pipeline (auto_schedule/measure/Measure.h) on a 1024^3 float32 GEMM
// for a 2-core target, with TVM's default timing (number=3, repeat=1, min_repeat_ms=100). A batch
// of tiled, vectorised, parallel candidates (different tile sizes) is built on 2 threads and
// measured in a tessel-measure worker; the Measurer's own accounting splits the time into build,
// worker start, module load, data transfer, the check run (which is also the warm-up run TVM's
// time evaluator makes), the correctness check and the timing itself. Prints candidates per
// minute, builds per second and the overhead (everything but build and timing) relative to the
// timing time, without and with the check run. The task's reference (computed once per task) is
// reported apart. Checked first: a 64^3 batch of the same candidates must all measure right.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tessel/auto_schedule/measure/Measure.h"

using namespace tessel;

namespace {

// The output stage tiled ti x tj over k blocks of tk, (io, jo, ko, ii, ki, ji) with ji
// vectorised and io parallel.
Schedule tiled(const SearchTask& task, int ti, int tj, int tk) {
    Schedule s = task.initial_schedule();
    int c = static_cast<int>(s.stages().size()) - 1;
    s.split(c, 0, ti);  // io ii j k
    s.split(c, 2, tj);  // io ii jo ji k
    s.split(c, 4, tk);  // io ii jo ji ko ki
    s.reorder(c, {0, 2, 4, 1, 5, 3});
    s.vectorize(c, 5);
    s.parallel(c, 0);
    return s;
}

std::vector<MeasureInput> candidates(const SearchTask& task, int count) {
    std::vector<MeasureInput> out;
    const int tis[] = {4, 8, 16, 32}, tjs[] = {8, 16, 32}, tks[] = {4, 8, 16, 32};
    for (int ti : tis)
        for (int tj : tjs)
            for (int tk : tks)
                if (static_cast<int>(out.size()) < count)
                    out.push_back({tiled(task, ti, tj, tk), CandidateOrigin::Random});
    return out;
}

void line(const char* what, double seconds, int n) {
    std::printf("BENCH measure_overhead %s ms=%.3f\n", what, 1e3 * seconds / n);
}

}  // namespace

int main(int argc, char** argv) {
    int count = argc > 1 ? std::atoi(argv[1]) : 24;
    Target target("llvm -num-cores=2");
    MeasureOptions options;  // number=3, repeat=1, min_repeat_ms=100: TVM's defaults
    options.build_threads = 2;
    {
        SearchTask small("matmul", {int64_t(64), int64_t(64), int64_t(64), Float(32)}, target);
        MeasureOptions quick = options;
        quick.min_repeat_ms = 1;
        Measurer check(quick);
        for (const MeasureResult& r : check.measure(small, candidates(small, count))) {
            if (r.ok()) continue;
            std::fprintf(stderr, "check failed: %s: %s\n", measure_error_name(r.error),
                         r.error_message.c_str());
            return 1;
        }
    }
    SearchTask task("matmul", {int64_t(1024), int64_t(1024), int64_t(1024), Float(32)}, target);
    Measurer measurer(options);
    std::vector<MeasureInput> batch = candidates(task, count);
    std::vector<MeasureResult> results = measurer.measure(task, batch);
    int n = static_cast<int>(results.size()), ok = 0;
    double best = 1e30;
    for (const MeasureResult& r : results)
        if (r.ok()) ++ok, best = std::min(best, r.mean_cost());
    const MeasureStats& s = measurer.stats();
    double batch_time = s.total - s.reference;
    double overhead = s.worker_start + s.load + s.transfer + s.check +
                      (batch_time - s.build - s.worker_start - s.load - s.check_run - s.transfer -
                       s.check - s.timing);  // the client's own orchestration
    std::printf(
        "measured %d candidates of a 1024^3 GEMM (%d ok, best %.2f GFLOP/s) in %.2f s; "
        "reference %.2f s once per task; workers started %lld\n",
        n, ok, 2e-9 * 1024.0 * 1024 * 1024 / best, batch_time, s.reference,
        static_cast<long long>(s.workers_started));
    line("worker_process_start_once", s.process_start, 1);
    line("build_per_candidate_wall", s.build, n);
    line("worker_start_per_candidate", s.worker_start, n);
    line("load_per_candidate", s.load, n);
    line("transfer_per_candidate", s.transfer, n);
    line("check_run_per_candidate", s.check_run, n);
    line("check_per_candidate", s.check, n);
    line("timing_per_candidate", s.timing, n);
    std::printf("BENCH measure_overhead builds_per_second tessel=%.2f bar=20 ratio=%.3f\n",
                n / s.build, n / s.build / 20);
    std::printf("BENCH measure_overhead candidates_per_minute tessel=%.1f\n", 60 * n / batch_time);
    std::printf("BENCH measure_overhead overhead_over_timing ratio=%.4f bar=0.20\n",
                overhead / s.timing);
    std::printf("BENCH measure_overhead overhead_with_check_run_over_timing ratio=%.4f\n",
                (overhead + s.check_run) / s.timing);
    return ok == n ? 0 : 1;
}
