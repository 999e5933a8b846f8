// The build stage of measurement (MeasureInternal.h): a pool of threads lowers and compiles the
// candidates. A thread cannot be killed, so a build past its time limit is abandoned: it gets
// BuildTimeout at once, a fresh thread takes the abandoned one's place in the pool, and the
// abandoned thread drops its result and exits when its build ends (the state it touches is
// shared, so it outlives measure()). Meanwhile a CPU candidate's abandoned build runs at
// SCHED_IDLE, only where a core has nothing else to do: at normal priority it went on compiling
// beside the timing of the next candidates, and a parallel kernel timed beside three abandoned
// builds read twice its time (1.84 ms against 0.95; docs/perf/tune-network-cpu.md). A GPU
// candidate's abandoned build keeps its priority: NVRTC takes a process-wide mutex inside
// nvrtcCompileProgram, and a holder at SCHED_IDLE starved by busy cores (the search's threads,
// another process) blocked every later compile of the process past its limit, round after round
// (docs/perf/gpu-gemm-search.md, "Build timeouts"); the GPU's timings do not share its cores.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "auto_schedule/measure/MeasureInternal.h"
#include "runtime/RealTimePriority.h"
#include "tessel/Error.h"
#include "tessel/codegen/Build.h"
#include "tessel/lower/Lower.h"

namespace tessel::internal {

namespace {

using Clock = std::chrono::steady_clock;

struct BuildState {
    BuildState(SearchTask t, std::vector<MeasureInput> in, double timeout)
        : task(std::move(t)),
          inputs(std::move(in)),
          timeout_seconds(timeout),
          results(inputs.size()),
          started(inputs.size()),
          running(inputs.size()),
          done(inputs.size()),
          thread(inputs.size(), 0) {}
    SearchTask task;
    std::vector<MeasureInput> inputs;
    double timeout_seconds;
    std::vector<BuiltCandidate> results;
    std::vector<Clock::time_point> started;
    std::vector<bool> running, done;
    std::vector<long> thread;  // the kernel id of the thread building each candidate
    size_t next = 0;
    std::mutex mutex;
    std::condition_variable changed;
};

// TestFault::BuildHang: computes without blocking, as a compiler does, for well past the limit.
void spin_past(double timeout_seconds) {
    auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(4 * timeout_seconds + 0.5));
    volatile uint64_t work = 0;
    while (Clock::now() < end) work = work + 1;
}

// The kernel `f`, and its pre_transform when `s` lays out constant weights once (the worker runs
// the transform once and times the kernel alone).
std::vector<LoweredFunc> with_pre_transform(LoweredFunc f, const Schedule& s,
                                            const SearchTask& task, const LowerOptions& o) {
    std::vector<LoweredFunc> fs;
    fs.push_back(std::move(f));
    if (has_pre_transform(s))
        fs.push_back(lower_pre_transform(s, task.dag().args(), task.target(),
                                         pre_transform_name(fs[0].name), o));
    return fs;
}

BuiltCandidate build_one(const SearchTask& task, const MeasureInput& input,
                         double timeout_seconds) {
    BuiltCandidate out;
    auto t0 = Clock::now();
    try {
        if (input.test_fault == TestFault::BuildHang) spin_past(timeout_seconds);
        // Lowered here, not by the driver's build(schedule): a candidate is measured as it is,
        // whatever apply-best context the calling thread has.
        BuildOptions options;
        LoweredFunc f =
            lower(input.schedule, task.dag().args(), task.target(), "main", options.lower);
        Module m = build(with_pre_transform(f, input.schedule, task, options.lower), task.target(),
                         options);
        out.module = m.save(/*with_sources=*/false);
    } catch (const ScheduleError& e) {
        out.error = MeasureError::InstantiationError;
        out.message = e.what();
    } catch (const std::exception& e) {
        out.error = MeasureError::BuildError;
        out.message = e.what();
    }
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
}

// One pool thread: takes candidates until none is left or its current one was abandoned. It runs
// below the watcher's real-time priority (if any), so that the watcher abandons a build on time.
void build_loop(std::shared_ptr<BuildState> s) {
    step_below_real_time_priority();
    for (;;) {
        size_t i;
        {
            std::lock_guard<std::mutex> lock(s->mutex);
            if (s->next >= s->inputs.size()) return;
            i = s->next++;
            s->started[i] = Clock::now();
            s->running[i] = true;
            s->thread[i] = current_thread_id();
        }
        BuiltCandidate result = build_one(s->task, s->inputs[i], s->timeout_seconds);
        std::lock_guard<std::mutex> lock(s->mutex);
        s->running[i] = false;
        if (s->done[i]) return;  // abandoned: a replacement thread took over
        s->results[i] = std::move(result);
        s->done[i] = true;
        s->changed.notify_all();
    }
}

// The build threads alive, abandoned ones included: counted up before a thread starts, down after
// its last touch of the shared state.
std::atomic<int> build_threads_alive{0};

void start_build_thread(std::shared_ptr<BuildState> s) {
    build_threads_alive.fetch_add(1);
    std::thread([s = std::move(s)]() mutable {
        build_loop(std::move(s));
        build_threads_alive.fetch_sub(1);
    }).detach();
}

// Builds every input on a pool of `threads` threads (the file comment).
std::vector<BuiltCandidate> build_all(const SearchTask& task, std::vector<MeasureInput> inputs,
                                      int threads, double timeout_seconds) {
    size_t n = inputs.size();
    const bool demote_abandoned = !task.target().is_gpu();
    auto s = std::make_shared<BuildState>(task, std::move(inputs), timeout_seconds);
    size_t pool = std::min<size_t>(std::max(threads, 1), n);
    for (size_t t = 0; t < pool; ++t) start_build_thread(s);
    auto limit =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
    std::unique_lock<std::mutex> lock(s->mutex);
    for (;;) {
        size_t finished = 0;
        for (size_t i = 0; i < n; ++i) {
            if (!s->done[i] && s->running[i] && Clock::now() - s->started[i] > limit) {
                s->done[i] = true;  // abandoned; its thread exits when the build returns
                // Still building (it takes the lock before it exits): out of the timings' way.
                if (demote_abandoned) move_to_idle_priority(s->thread[i]);
                s->results[i].error = MeasureError::BuildTimeout;
                s->results[i].message =
                    "the build took longer than " + std::to_string(timeout_seconds) + " s";
                s->results[i].seconds = timeout_seconds;
                start_build_thread(s);
            }
            finished += s->done[i];
        }
        if (finished == n) break;
        s->changed.wait_for(lock, std::chrono::milliseconds(20));
    }
    return s->results;
}

}  // namespace

bool wait_for_build_threads(double timeout_seconds) {
    auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout_seconds));
    while (build_threads_alive.load() > 0) {
        if (Clock::now() >= end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

int build_thread_count(const MeasureOptions& options) {
    return options.build_threads > 0
               ? options.build_threads
               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<BuiltCandidate> build_candidates(const SearchTask& task,
                                             const std::vector<MeasureInput>& inputs, int threads,
                                             double timeout_seconds) {
    // A schedule given more than once (a final check times each state several times) is built
    // once; its copies' build took no time.
    std::vector<MeasureInput> to_build;
    std::vector<size_t> where(inputs.size(), SIZE_MAX);  // the input's build in to_build
    std::vector<bool> copy(inputs.size(), false);
    std::unordered_map<std::string, size_t> first;  // a schedule's text and fault -> its build
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].built) continue;
        std::string key = std::to_string(static_cast<int>(inputs[i].test_fault)) + " " +
                          inputs[i].schedule.to_json();
        auto [it, fresh] = first.try_emplace(std::move(key), to_build.size());
        where[i] = it->second;
        copy[i] = !fresh;
        if (fresh) to_build.push_back(inputs[i]);
    }
    std::vector<BuiltCandidate> out(inputs.size());
    std::vector<BuiltCandidate> built;
    if (!to_build.empty()) built = build_all(task, std::move(to_build), threads, timeout_seconds);
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].built) {
            out[i] = *inputs[i].built;
            continue;
        }
        out[i] = built[where[i]];
        if (copy[i]) out[i].seconds = 0;
    }
    return out;
}

}  // namespace tessel::internal

namespace tessel {

std::vector<BuiltModule> build_modules(const SearchTask& task,
                                       const std::vector<MeasureInput>& inputs,
                                       const MeasureOptions& options) {
    return internal::build_candidates(task, inputs, internal::build_thread_count(options),
                                      options.build_timeout_seconds);
}

}  // namespace tessel
