// tessel's thread pool, which runs the parallel loops of compiled kernels.
//
//   ThreadPool::global().parallel_for(0, n, [&](int64_t i) { out[i] = f(i); });
//
// The global pool has TESSEL_NUM_THREADS threads (default: std::thread::hardware_concurrency()),
// counting the calling thread, which runs the first chunk itself. Iterations are split statically
// into one contiguous chunk per thread. A parallel_for called from inside another parallel_for (on
// any pool) runs serially in the calling thread, so nested parallel loops never deadlock or
// oversubscribe. Concurrent parallel_for calls from different outside threads take turns.
//
// Between parallel loops a worker spins (checks for new work, pausing the core) for a while
// before it sleeps, and the caller spins the same way for the workers to finish before it sleeps:
// TESSEL_SPIN_US microseconds (default 200; 0 sleeps at once). A kernel's parallel loops follow
// one another microseconds apart, so with the spin its workers never sleep between them; without
// it every loop waits for a sleeping thread to wake, which on a virtual machine can mean waiting
// for the host to run a halted virtual CPU (milliseconds, at the host's whim).
//
// When the process may run on more CPUs than the pool has workers (Linux), each worker is pinned
// to a CPU of its own, never the one the caller of parallel_for runs on (re-pinned when the
// caller moves): a worker woken from its sleep would otherwise often be queued on the caller's
// CPU, and the two would share one core for the whole loop. TESSEL_PIN_THREADS=0 leaves the
// workers unpinned.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessel {

/// A fixed set of worker threads for parallel loops (see the file comment).
class ThreadPool {
public:
    /// A pool of `num_threads` threads including the caller (so `num_threads - 1` workers) that
    /// spin for `spin` before sleeping (see the file comment); RuntimeError if `num_threads` < 1
    /// or `spin` is negative.
    explicit ThreadPool(int num_threads, std::chrono::microseconds spin = default_spin(),
                        bool pin = default_pin());
    /// Stops and joins the workers. Must not be called while a parallel_for runs.
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    /// The process-wide pool, created on first use with default_num_threads() threads.
    static ThreadPool& global();
    /// TESSEL_NUM_THREADS if set (a positive integer; RuntimeError naming the variable
    /// otherwise), else the hardware concurrency (at least 1).
    static int default_num_threads();
    /// TESSEL_SPIN_US if set (an integer from 0 to 1000000; RuntimeError naming the variable
    /// otherwise), else 200 microseconds.
    static std::chrono::microseconds default_spin();

    /// TESSEL_PIN_THREADS if set (0 or 1; RuntimeError naming the variable otherwise), else 1.
    static bool default_pin();

    /// Threads that run chunks, including the caller.
    int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

    /// The CPU each worker is pinned to (-1: not pinned), in worker order; for tests.
    std::vector<int> pinned_cpus() const;

    /// Calls fn(i) for every i in [begin, end), split statically over the threads; returns when
    /// all calls finished. If calls throw, the first exception caught is rethrown here after
    /// every chunk ended (a chunk stops at its first exception; other chunks run on).
    void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn);

private:
    void worker_loop(int index);
    void run_chunk(int chunk);
    // Calls `ready` until it returns true or spin_ has passed; returns its last answer.
    template <class Ready>
    bool spin_until(Ready ready) const;
    // Pins the workers to the CPUs of cpus_ other than `caller_cpu` (when it changed).
    void place_workers(int caller_cpu);

    std::chrono::microseconds spin_;
    std::vector<std::thread> workers_;
    std::mutex run_mutex_;  // one parallel_for at a time
    std::mutex mutex_;      // guards everything below; the atomics change only while it is held,
                            // except pending_, which workers count down without it
    std::condition_variable start_cv_;
    std::condition_variable done_cv_;
    std::atomic<uint64_t> generation_{0};
    std::atomic<bool> stopping_{false};
    std::atomic<int> pending_{0};
    // Set while the caller sleeps on done_cv_: only then does the worker that finishes last
    // take mutex_ to wake it (a spinning caller and worker never contend for the mutex).
    std::atomic<bool> caller_waiting_{false};
    const std::function<void(int64_t)>* fn_ = nullptr;
    int64_t begin_ = 0;
    int64_t end_ = 0;
    int chunks_ = 0;
    std::exception_ptr error_;
    // Pinning (see the file comment): the CPUs the process may run on when there are more of
    // them than workers (else empty: no pinning), the caller's CPU the workers were placed
    // around, and each worker's CPU. Changed by the caller of parallel_for under run_mutex_.
    std::vector<int> cpus_;
    int caller_cpu_ = -1;
    std::vector<int> worker_cpus_;
};

}  // namespace tessel

extern "C" {
/// The parallel-loop entry point of generated code: calls body(i, closure) for every i in
/// [0, n) on the global ThreadPool (serially when called from inside a parallel loop). Returns 0
/// on success, -1 if the pool could not run (e.g. a bad TESSEL_NUM_THREADS) or a body threw; the
/// error is then printed to stderr. Generated code passes its outlined loop body and a pointer to
/// the captured variables as `closure`.
int32_t tessel_parallel_for(int64_t n, void (*body)(int64_t i, void* closure), void* closure);
}
