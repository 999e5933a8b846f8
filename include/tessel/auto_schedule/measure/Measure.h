// Measurement: builds tuning candidates and times them on the hardware, without ever taking the
// tuner down or recording a wrong kernel as fast (docs/design.md, decision 7; docs/tuning.md,
// "Measurement").
//
//   Measurer measurer;                                   // options: MeasureOptions
//   std::vector<MeasureResult> r = measurer.measure(task, {{schedule_a}, {schedule_b}});
//   if (r[0].ok()) std::cout << r[0].mean_cost() << " s\n";
//
// A batch goes through three stages:
//  1. Build: every candidate is lowered and compiled on a pool of threads (LLVM or NVRTC), each
//     under a time limit; a build past it is abandoned (BuildTimeout; its thread finishes in the
//     background, a fresh one takes its place).
//  2. Check: the built module, saved as bytes, is loaded by a worker process (tools/tessel-measure,
//     linked with libtessel_runtime alone) and run once on the task's random inputs with its
//     outputs filled with NaN and guard zones around every argument; the outputs come back and
//     are compared with the task's reference output, using the shared tolerance (Tolerance.h).
//  3. Time: only a candidate whose outputs are right is timed, in the worker, as TVM's runners
//     time (number / repeat / min_repeat_ms; optional cache flush); every repeat is kept.
// Candidates run one at a time, after the whole batch is built, so nothing else of the tuner runs
// while one is timed. A worker that crashes, aborts, hangs past the limit or runs out of memory
// is killed if need be and replaced; the candidate gets the matching error code.
//
// The reference output is computed once per task: by the reference interpreter when the task
// does at most `reference_flop_limit` floating-point operations, otherwise by the operator
// library's default schedule built and run in a worker, which is first checked against the
// reference interpreter at sampled output points (docs/tuning.md says why).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/Options.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// Why a candidate has no time. Spelled in records as measure_error_name() gives.
enum class MeasureError : uint8_t {
    None,                ///< measured: its outputs were right and it was timed
    InstantiationError,  ///< the steps do not replay, or lowering refuses the schedule
    BuildError,          ///< the backend failed (CompileError)
    BuildTimeout,        ///< the build took longer than build_timeout_seconds
    LoadError,           ///< the worker could not load the built module
    RunError,            ///< the kernel reported an error (non-zero status, CUDA error)
    RunTimeout,          ///< the run or its timing took longer than its limit; worker killed
    WrongAnswer,         ///< outputs differ from the reference beyond the tolerance
    OutOfBoundsWrite,    ///< the kernel wrote into the guard zone around an argument
    Crash,               ///< the worker died of a signal (SIGSEGV, SIGABRT, ...)
    OutOfMemory,         ///< the worker ran out of memory (its limit, or the system's OOM kill)
    WorkerError,         ///< the worker could not be started or spoke nonsense
};

/// "none", "instantiation_error", "build_error", "build_timeout", "load_error", "run_error",
/// "run_timeout", "wrong_answer", "out_of_bounds_write", "crash", "out_of_memory", "worker_error".
const char* measure_error_name(MeasureError error);
/// The error named `name` (as measure_error_name writes it); nullopt for an unknown name.
std::optional<MeasureError> measure_error_from_name(const std::string& name);

/// Where a candidate came from (records keep it).
enum class CandidateOrigin : uint8_t {
    Manual,     ///< given by a person or a test
    CostModel,  ///< picked by the cost model from the evolved population
    Random,     ///< sampled at random (epsilon-greedy)
    Mutation,   ///< a mutation of a measured candidate
    Crossover,  ///< a crossover of measured candidates
    /// Another measurement of a schedule already in the log (not a trial): the tuner times its
    /// fastest candidates again, and a schedule costs the median of its measurements
    /// (ScheduleCosts, Record.h).
    Remeasure,
    /// The task's rule-based default schedule (op::default_schedule_rules): the tuner's first
    /// trial (TuningOptions::measure_default), so that a tuned best is never slower than it.
    Default,
    /// A measurement of the tuning's final check (not a trial): the fastest schedules and the
    /// default timed side by side, in turns, at the end of a tuning; the check's timings decide
    /// which of them is the best (ScheduleCosts, Record.h).
    Check,
};

/// "manual", "cost_model", "random", "mutation", "crossover", "remeasure", "default", "check".
const char* candidate_origin_name(CandidateOrigin origin);
/// The origin named `name`; nullopt for an unknown name.
std::optional<CandidateOrigin> candidate_origin_from_name(const std::string& name);

/// A fault a test plants in a candidate (MeasureOptions::allow_test_faults): never used by the
/// tuner. The worker crashes, hangs or corrupts memory itself, as a broken kernel would.
enum class TestFault : uint8_t {
    None,
    Segfault,          ///< a write to address 16 before the kernel runs
    Abort,             ///< std::abort()
    Hang,              ///< an endless loop
    OutOfBoundsWrite,  ///< the kernel runs, then one element past the first output is written
    WrongValues,       ///< the kernel runs, then the first output's first element is corrupted
    OutOfMemory,       ///< allocates until the worker's memory limit is hit
    BuildHang,         ///< the build computes (without blocking) well past the build time limit
    HangWhileTiming,   ///< the check run passes, then the worker hangs while timing
    MalformedReply,    ///< the check run passes, then the timing reply's costs are not numbers
};

/// A candidate built ahead of its measurement, maybe on another machine (build_modules(); a
/// cluster's daemon builds while its nodes time, docs/distributed.md).
struct BuiltModule {
    MeasureError error =
        MeasureError::None;       ///< None, InstantiationError, BuildError, BuildTimeout
    std::string message;          ///< why there is no module
    std::vector<uint8_t> module;  ///< Module::save(false)
    double seconds = 0;           ///< the build's time
};

/// One candidate.
struct MeasureInput {
    Schedule schedule;  ///< a schedule of the task's DAG (e.g. replay(task.initial_schedule(), s))
    CandidateOrigin origin = CandidateOrigin::Manual;
    TestFault test_fault = TestFault::None;  ///< tests only (see TestFault)
    /// Built already (build_modules() of this schedule): the Measurer skips its build stage.
    std::shared_ptr<const BuiltModule> built = nullptr;
};

/// What measuring one candidate gave. Times in seconds.
struct MeasureResult {
    MeasureError error = MeasureError::None;
    std::string error_message;  ///< empty when error is None
    std::vector<double> costs;  ///< one per repeat: the mean time of one run
    double build_seconds = 0;   ///< lowering and code generation
    double run_seconds = 0;     ///< the worker's part: load, check run, timing
    double timestamp = 0;       ///< when the measurement finished (seconds since the Unix epoch)

    bool ok() const { return error == MeasureError::None; }
    /// The mean of costs (infinity when there are none).
    double mean_cost() const;
};

/// Options of a Measurer. The timing defaults are TVM's runners'.
struct MeasureOptions {
    int number = 3;              ///< runs per repeat (raised until a repeat lasts min_repeat_ms)
    int repeat = 1;              ///< repeats, each one cost
    double min_repeat_ms = 100;  ///< the least time a repeat lasts
    bool flush_cache = false;    ///< flush the arguments from the CPU caches (GPU: the L2) first
    double build_timeout_seconds = 15;
    double run_timeout_seconds = 10;  ///< for the check run; timing gets this plus its own time
    int build_threads = 0;            ///< 0: the host's hardware threads
    int64_t worker_memory_limit_bytes = 0;  ///< the worker's address-space limit; 0: none
    /// The tessel-measure program; empty: $TESSEL_MEASURE_WORKER, else the installed one, else
    /// the one of the build tree.
    std::string worker_path;
    uint64_t seed = 1;  ///< of the task's random inputs
    /// CPU tasks: where the worker places each argument, in bytes past a page (a multiple of 16
    /// below 4096). 16 is where glibc's malloc places a block of 128 KiB or more: a NumPy
    /// array's data, a std::vector's. A kernel's speed can depend on it (a tuned 1024^3 GEMM
    /// ran at 0.7 x on such arrays what it ran at on page-aligned ones, AMD Zen 4:
    /// docs/perf/user-calls.md), so the tuner times candidates where users' arrays lie; 0 places
    /// them on a page, as tessel's own NDArrays of a page or more.
    int64_t array_offset = 16;
    /// Tasks doing at most this many floating-point operations take the reference interpreter's
    /// output as the reference; larger ones a checked default-schedule build (file comment).
    double reference_flop_limit = 5e7;
    /// Output points at which a default-schedule reference is checked against the interpreter.
    int reference_samples = 64;
    bool allow_test_faults = false;  ///< honour MeasureInput::test_fault (tests only)
    /// GPU tasks: the CUDA device (ordinal) the Measurer's worker runs candidates on.
    int device_id = 0;
    /// LocalMeasureRunner (MeasureRunner.h): workers a request's candidates are spread over,
    /// each with its own Measurer, measuring at the same time. 0: one per CUDA device for GPU
    /// tasks (device_id 0, 1, ...), one for CPU tasks. More than one on a CPU task times
    /// candidates side by side on shared cores (tests only: their times mean little).
    int workers = 0;
    /// Tests and benchmarks only: a simulated worker. When > 0 nothing is built or run: each
    /// candidate takes this many milliseconds of (sleeping) device time and costs a
    /// deterministic time derived from its step list (simulated_cost()), so that a run on a
    /// cluster and a local run with the same seed write the same records.
    double simulate_ms = 0;
    /// Tests and benchmarks, with simulate_ms: each candidate is built for real before its
    /// simulated measurement (a build that fails is the candidate's error), so that where the
    /// builds run shows in a job's time.
    bool simulate_builds = false;

    /// The fields, described once (tessel/Options.h): job files' "measure", Python's keywords,
    /// tessel-tune's flags and the measurement protocol follow from it.
    template <typename S, typename V>
    static void fields(S& s, V& v) {
        constexpr unsigned all = kJobMeasure | kTune | kMeasurer;
        constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
        v.integer("number", s.number, 1, 1 << 20, all,
                  "runs per repeat (raised until a repeat lasts min_repeat_ms)");
        v.integer("repeat", s.repeat, 1, 1000, all, "repeats, each one cost");
        v.number("min_repeat_ms", s.min_repeat_ms, 0, 1e6, all, "the least time a repeat lasts");
        v.flag("flush_cache", s.flush_cache, all,
               "flush the arguments from the CPU caches (GPU: the L2) before each repeat");
        v.number("build_timeout", s.build_timeout_seconds, 1e-3, 1e5, all,
                 "seconds a candidate's build may take");
        v.number("run_timeout", s.run_timeout_seconds, 1e-3, 1e5, all,
                 "seconds the check run may take (timing gets this plus its own time)");
        v.integer("build_threads", s.build_threads, 0, 4096, all,
                  "threads building candidates (0: the host's hardware threads)");
        v.integer("worker_memory_limit", s.worker_memory_limit_bytes, 0, kMax, kTune | kMeasurer,
                  "the worker's address-space limit in bytes (0: none)");
        v.text("worker_path", s.worker_path, kTune | kMeasurer,
               "the tessel-measure program (empty: $TESSEL_MEASURE_WORKER, else the installed "
               "one, else the build tree's)");
        v.integer("seed", s.seed, 0, kMax, kMeasurer, "the seed of the task's random inputs");
        v.integer("array_offset", s.array_offset, 0, 4080, all,
                  "CPU tasks: bytes past a page at which each argument lies, a multiple of 16 "
                  "(16: where malloc places NumPy's and std::vector's large arrays; 0: "
                  "page-aligned)");
        v.number("reference_flop_limit", s.reference_flop_limit, 0, 1e300, kProtocolOnly,
                 "tasks of at most this many operations take the interpreter's output as the "
                 "reference");
        v.integer("reference_samples", s.reference_samples, 0, 1 << 20, kProtocolOnly,
                  "output points at which a default-schedule reference is checked");
        v.flag("allow_test_faults", s.allow_test_faults, kProtocolOnly,
               "honour MeasureInput::test_fault (tests only)");
        v.integer("device_id", s.device_id, 0, 1 << 16, kProtocolOnly,
                  "the CUDA device the worker runs candidates on");
        v.integer("workers", s.workers, 0, 1 << 16, kProtocolOnly,
                  "workers a request's candidates are spread over (0: one per CUDA device for "
                  "GPU tasks, one for CPU tasks)");
        v.number("simulate_ms", s.simulate_ms, 0, 1e7, all,
                 "tests and benchmarks: simulate the worker, each candidate taking this many ms "
                 "and a cost derived from its steps (0: measure for real)");
        v.flag("simulate_builds", s.simulate_builds, all,
               "tests and benchmarks: with simulate_ms, build each candidate for real first");
    }
};

/// Where a Measurer's time went, summed over its measurements (seconds).
struct MeasureStats {
    int64_t candidates = 0;
    int64_t workers_started = 0;  ///< including the first: replacements = this - 1
    double reference = 0;         ///< computing reference outputs (once per task)
    double build = 0;             ///< wall time of the build stage
    double worker_start = 0;      ///< sending workers the task's inputs (after a start)
    double process_start = 0;     ///< from starting each worker process to its first reply
    double load = 0;              ///< loading modules in the worker
    double check_run = 0;         ///< the one run whose outputs are checked (also the warm-up)
    double transfer = 0;          ///< moving modules and outputs between processes
    double check = 0;             ///< comparing outputs with the reference
    double timing = 0;            ///< the worker's timing loop
    double total = 0;             ///< everything measure() took
};

/// Builds and measures candidates of search tasks (see the file comment). Not thread-safe: one
/// thread calls measure() at a time. The worker process lives as long as the Measurer.
class Measurer {
public:
    explicit Measurer(MeasureOptions options = {});
    ~Measurer();
    Measurer(const Measurer&) = delete;
    Measurer& operator=(const Measurer&) = delete;

    /// Measures `inputs` of `task`; one result per input, in order (a schedule given more than
    /// once is built once and timed once per input: its copies' build_seconds are 0). Throws
    /// (RuntimeError) only
    /// when the task itself cannot be measured: no worker program, a reference that cannot be
    /// computed or that fails its check.
    std::vector<MeasureResult> measure(const SearchTask& task,
                                       const std::vector<MeasureInput>& inputs);

    const MeasureOptions& options() const;
    /// Where the time went so far.
    const MeasureStats& stats() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

/// Builds `inputs` of `task` as a Measurer's build stage would (options.build_threads threads,
/// each build under options.build_timeout_seconds); one result per input, in order. An input
/// built already is returned as it is; a schedule given more than once (with the same test
/// fault) is built once, its copies' seconds 0.
std::vector<BuiltModule> build_modules(const SearchTask& task,
                                       const std::vector<MeasureInput>& inputs,
                                       const MeasureOptions& options);

/// The cost the simulated worker (MeasureOptions::simulate_ms) gives a schedule: between 1 and
/// 2 ms, from a hash of its step list (the same in every process and on every machine).
double simulated_cost(const Schedule& schedule);

/// The tessel-measure program MeasureOptions::worker_path = "" resolves to (may not exist).
std::string default_measure_worker_path();

}  // namespace tessel
