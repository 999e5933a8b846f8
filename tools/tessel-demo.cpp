// tessel's main job: declare real operators (matmul and a numerically
// stable softmax) in the tensor-expression DSL, print their IR, evaluate them with the reference
// interpreter on random inputs, and check the results against independent C++ loops; then
// schedule the matmul (tile, vectorize, unroll, parallel), lower it, print the loop IR and the
// schedule as a Python script, and run the lowered program in the loop-IR interpreter against
// the reference; finally compile a 1024^3 matmul through LLVM, unscheduled and with a register-
// blocked schedule, check both, and print the GFLOP/s each achieves on this machine.
//
// Then tune a 512^3 matmul with the auto-scheduler (--trials, 256 by default: a couple of
// minutes on 2 cores), printing the tuning curve and the best schedule, and time the tuned
// schedule against the unscheduled loop nest, the operator library's default schedule (the
// tuner's first trial) and the hand-written tutorial schedule.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "gemm_schedule.h"
#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"
#include "tessel/auto_schedule/tuner/Tuner.h"
#include "tessel/driver/Build.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/op/DefaultSchedule.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/ThreadPool.h"
#include "tessel/runtime/TimeEvaluator.h"
#include "tessel/te/Operation.h"
#include "tessel/te/PrintDAG.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Prints the comparison and returns whether it passed.
bool report(const char* what, const CompareResult& r, double seconds, double flops) {
    std::printf("%-8s %s  (%.3f s in an interpreter, %.1f MFLOP/s)\n", what,
                r.ok ? "matches its reference" : "MISMATCH", seconds, flops / seconds / 1e6);
    if (!r.ok) std::printf("         %s\n", r.message().c_str());
    return r.ok;
}

bool run_matmul(int64_t n, int64_t m, int64_t k) {
    Tensor A = placeholder({Expr(int(n)), Expr(int(k))}, Float(32), "A");
    Tensor B = placeholder({Expr(int(k)), Expr(int(m))}, Float(32), "B");
    IterVar kk = reduce_axis(Range(0, int(k)), "k");
    Tensor C = compute(
        {Expr(int(n)), Expr(int(m))}, [&](Var i, Var j) { return sum(A(i, kk) * B(kk, j), {kk}); },
        "C");
    std::printf("== matmul %lldx%lldx%lld\n%s", (long long)n, (long long)m, (long long)k,
                dag_to_string({C}).c_str());

    HostArray a = HostArray::random(Float(32), {n, k}, 1);
    HostArray b = HostArray::random(Float(32), {k, m}, 2);
    auto t0 = std::chrono::steady_clock::now();
    HostArray c = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    double secs = seconds_since(t0);

    HostArray expected = HostArray::full(Float(32), {n, m}, 0.0).with_storage(ArrayStorage::Ideal);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
            double acc = 0;
            for (int64_t r = 0; r < k; ++r) acc += a.get(i * k + r) * b.get(r * m + j);
            expected.set(i * m + j, acc);
        }
    auto result = compare_to_reference(c, expected, tolerance_for(Float(64), k));
    return report("matmul", result, secs, flop_count({C}));
}

bool run_softmax(int64_t rows, int64_t cols) {
    Tensor X = placeholder({Expr(int(rows)), Expr(int(cols))}, Float(32), "X");
    IterVar j1 = reduce_axis(Range(0, int(cols)), "j");
    Tensor M = compute(
        {Expr(int(rows))}, [&](Var i) { return max(X(i, j1), {j1}); }, "rowmax");
    Tensor E = compute(
        {Expr(int(rows)), Expr(int(cols))}, [&](Var i, Var j) { return exp(X(i, j) - M(i)); },
        "expd");
    IterVar j2 = reduce_axis(Range(0, int(cols)), "j");
    Tensor S = compute(
        {Expr(int(rows))}, [&](Var i) { return sum(E(i, j2), {j2}); }, "rowsum");
    Tensor Y = compute(
        {Expr(int(rows)), Expr(int(cols))}, [&](Var i, Var j) { return E(i, j) / S(i); }, "Y");
    std::printf("== softmax %lldx%lld\n%s", (long long)rows, (long long)cols,
                dag_to_string({Y}).c_str());

    HostArray x = HostArray::random(Float(32), {rows, cols}, 3, -4.0, 4.0);
    auto t0 = std::chrono::steady_clock::now();
    HostArray y = evaluate_reference({Y}, {{X, x}})[0];
    double secs = seconds_since(t0);

    HostArray expected =
        HostArray::full(Float(32), {rows, cols}, 0.0).with_storage(ArrayStorage::Ideal);
    for (int64_t i = 0; i < rows; ++i) {
        double mx = -INFINITY, total = 0;
        for (int64_t j = 0; j < cols; ++j) mx = std::max(mx, x.get(i * cols + j));
        for (int64_t j = 0; j < cols; ++j) total += std::exp(x.get(i * cols + j) - mx);
        for (int64_t j = 0; j < cols; ++j)
            expected.set(i * cols + j, std::exp(x.get(i * cols + j) - mx) / total);
    }
    auto result = compare_to_reference(y, expected, tolerance_for(Float(64), cols));
    return report("softmax", result, secs, flop_count({Y}));
}

bool run_scheduled_matmul(int n) {
    Tensor A = placeholder({n, n}, Float(32), "A");
    Tensor B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    Tensor C = compute(
        {n, n}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.tile(c, 0, 1, 16, 16);           // i.outer j.outer i.inner j.inner k
    s.split(c, 3, 8);                  // ... j.inner.outer j.inner.inner k
    s.reorder(c, {0, 1, 5, 2, 3, 4});  // i.outer j.outer k i.inner j.inner.outer j.inner.inner
    s.vectorize(c, 5);
    s.unroll(c, 4);
    s.parallel(c, 0);
    auto t0 = std::chrono::steady_clock::now();
    LoweredFunc f = lower(s, {A, B, C});
    double lower_ms = seconds_since(t0) * 1e3;
    std::printf("== scheduled matmul %dx%dx%d\n%s\n%s", n, n, n, s.to_python().c_str(),
                to_string(f).c_str());
    HostArray a = HostArray::random(Float(32), {n, n}, 4),
              b = HostArray::random(Float(32), {n, n}, 5);
    HostArray out(Float(32), {n, n});
    t0 = std::chrono::steady_clock::now();
    run_lowered(f, {&a, &b, &out});
    double secs = seconds_since(t0);
    HostArray ref = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    auto result = compare_to_reference(out, ref, tolerance_for(Float(32), n));
    std::printf("lowered in %.2f ms\n", lower_ms);
    return report("lowered", result, secs, flop_count({C}));
}

// Compiles the matmul through LLVM unscheduled and with the GEMM tutorial's final schedule; checks
// and times both.
// Builds each schedule of an n^3 matmul over `args` (A, B, C), checks it on sampled entries and
// times it (median of at least 3 runs and 0.5 s), printing GFLOP/s against the first one.
bool time_matmuls(int n, const std::vector<Tensor>& args,
                  const std::vector<std::pair<const char*, const Schedule*>>& schedules) {
    NDArray a = NDArray::empty({n, n}, float32()), b = NDArray::empty({n, n}, float32()),
            out = NDArray::empty({n, n}, float32());
    HostArray ha = HostArray::random(Float(32), {n, n}, 6),
              hb = HostArray::random(Float(32), {n, n}, 7);
    for (int64_t i = 0; i < int64_t(n) * n; ++i) {
        a.data_as<float>()[i] = float(ha.get(i));
        b.data_as<float>()[i] = float(hb.get(i));
    }
    double flops = 2.0 * n * n * n, first_gflops = 0;
    bool ok = true;
    for (const auto& [name, s] : schedules) {
        auto t0 = std::chrono::steady_clock::now();
        BuildOptions as_written;  // "unscheduled" is the loop nest, not a shipped tuning record
        as_written.tuning_logs = false;
        Module m = build(*s, args, Target("llvm"), "main", as_written);
        double build_ms = seconds_since(t0) * 1e3;
        Kernel kernel = m.get("main");
        kernel({a, b, out});
        bool correct =
            check_gemm_sampled(n, a.data_as<float>(), b.data_as<float>(), out.data_as<float>(), 512)
                .empty();
        TimeEvaluatorOptions options;
        options.min_repeats = 3;
        options.min_total_seconds = 0.5;
        TimingResult r = time_evaluate([&](int) { kernel({a, b, out}); }, 1, options);
        double gflops = flops / r.median / 1e9;
        if (first_gflops == 0) first_gflops = gflops;
        std::printf("%-15s %s  built in %.0f ms, median %.2f ms = %.1f GFLOP/s (%.1fx %s)\n", name,
                    correct ? "correct" : "WRONG", build_ms, r.median * 1e3, gflops,
                    gflops / first_gflops, schedules.front().first);
        ok = ok && correct;
    }
    return ok;
}

bool run_compiled_matmul(int n) {
    if (!has_llvm_backend()) {
        std::printf("== compiled matmul: skipped (tessel built without the LLVM backend)\n");
        return true;
    }
    Tensor A = placeholder({n, n}, Float(32), "A");
    Tensor B = placeholder({n, n}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, n), "k");
    Tensor C = compute(
        {n, n}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule plain = create_schedule({C});
    // The C++ GEMM tutorial's final schedule (tutorials/cpp/gemm): B packed into column panels,
    // 8×32 register tiles over 128-deep blocks of k, 512-column blocks, parallel rows.
    Schedule blocked = create_schedule({C});
    schedule_gemm(blocked, B, C);
    std::printf("== compiled matmul %dx%dx%d (LLVM, %d threads)\n%s", n, n, n,
                ThreadPool::global().num_threads(), blocked.to_python().c_str());
    return time_matmuls(n, {A, B, C}, {{"unscheduled", &plain}, {"blocked", &blocked}});
}

// Tunes a 512^3 matmul with the auto-scheduler (tune(): sketches, evolutionary search guided by
// the XGBoost cost model, every candidate built, checked and timed in a worker) and compares the
// best schedule with the unscheduled loop nest, the operator library's default schedule (the
// tuner's first trial) and the hand-written tutorial schedule, all timed here with one harness.
bool run_tuned_matmul(int n, int64_t trials, const std::string& log_file) {
    if (!has_llvm_backend() || !CostModel::available()) {
        std::printf("== tuned matmul: skipped (tessel built without %s)\n",
                    has_llvm_backend() ? "XGBoost" : "the LLVM backend");
        return true;
    }
    SearchTask task("op.matmul",
                    {int64_t(n), int64_t(n), int64_t(n), int64_t(0), int64_t(0), Float(32)},
                    Target("llvm"));
    std::remove(log_file.c_str());  // a fresh tuning each run (tune() would resume from the log)
    TuningOptions options;
    options.trials = trials;
    options.log_file = log_file;
    options.verbose = 0;
    options.on_progress = [](const TuningProgress& p) {
        if (p.last_round) std::printf("  %s\n", format_progress(p).c_str());
    };
    std::printf("== tuned matmul %dx%dx%d: %lld trials on %s (log %s)\n", n, n, n,
                static_cast<long long>(trials), task.target().str().c_str(), log_file.c_str());
    TuningResult r = tune(task, options);
    if (!r.best_schedule) {
        std::printf("no candidate measured successfully\n");
        return false;
    }
    std::printf("tuning curve (trials: best GFLOP/s while tuning):");
    for (const TuningCurvePoint& p : r.curve)
        if (p.trial % options.measurements_per_round == 0 || p.trial == r.trials)
            std::printf(" %lld: %.1f", static_cast<long long>(p.trial), p.best_gflops);
    std::printf("\n");
    if (r.final_gflops > 0) {
        std::printf("the final check (the fastest and the default side by side): best %.1f GFLOP/s",
                    r.final_gflops);
        if (std::isfinite(r.default_seconds) && !r.best_is_default)
            std::printf(", the default %.1f", r.flops / r.default_seconds / 1e9);
        std::printf("%s\n", r.best_is_default ? " (the default schedule)" : "");
    }
    std::printf("best schedule, as Python:\n%s", r.best_schedule->to_python().c_str());
    const TensorDAG& dag = task.dag();
    Schedule plain = task.initial_schedule();
    Schedule blocked = task.initial_schedule();
    schedule_gemm(blocked, dag.inputs[1], dag.outputs[0]);
    Schedule rules = op::default_schedule_rules(dag.outputs, task.target());
    return time_matmuls(n, dag.args(),
                        {{"unscheduled", &plain},
                         {"default (rules)", &rules},
                         {"hand-written", &blocked},
                         {"tuned", &*r.best_schedule}});
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"tessel's main job: define, schedule, compile and tune real operators"};
    int64_t trials = 256;
    std::string log_file = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : "/tmp") +
                           "/tessel-demo-matmul-512.jsonl";
    app.add_option("--trials", trials, "trials of the 512^3 matmul's tuning (0: no tuning)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--log", log_file, "the tuning log (replaced)");
    CLI11_PARSE(app, argc, argv);
    try {
        bool ok = run_matmul(128, 96, 64);
        ok = run_softmax(64, 100) && ok;
        ok = run_scheduled_matmul(48) && ok;
        ok = run_compiled_matmul(1024) && ok;
        if (trials > 0) ok = run_tuned_matmul(512, trials, log_file) && ok;
        std::printf("%s\n", ok ? "demo: all results correct" : "demo: FAILED");
        return ok ? 0 : 1;
    } catch (const Error& e) {
        std::fprintf(stderr, "tessel-demo: %s\n", e.what());
        return 2;
    }
}
