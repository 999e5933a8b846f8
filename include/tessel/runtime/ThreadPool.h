// tessel's thread pool, which runs the parallel loops of compiled kernels.
//
//   ThreadPool::global().parallel_for(0, n, [&](int64_t i) { out[i] = f(i); });
//
// The global pool has TESSEL_NUM_THREADS threads (default: std::thread::hardware_concurrency()),
// counting the calling thread, which runs the first chunk itself. Iterations are split statically
// into one contiguous chunk per thread. A parallel_for called from inside another parallel_for (on
// any pool) runs serially in the calling thread, so nested parallel loops never deadlock or
// oversubscribe. Concurrent parallel_for calls from different outside threads take turns.
#pragma once

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
    /// A pool of `num_threads` threads including the caller (so `num_threads - 1` workers);
    /// RuntimeError if `num_threads` < 1.
    explicit ThreadPool(int num_threads);
    /// Stops and joins the workers. Must not be called while a parallel_for runs.
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    /// The process-wide pool, created on first use with default_num_threads() threads.
    static ThreadPool& global();
    /// TESSEL_NUM_THREADS if set (a positive integer; RuntimeError naming the variable
    /// otherwise), else the hardware concurrency (at least 1).
    static int default_num_threads();

    /// Threads that run chunks, including the caller.
    int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

    /// Calls fn(i) for every i in [begin, end), split statically over the threads; returns when
    /// all calls finished. If calls throw, the first exception caught is rethrown here after
    /// every chunk ended (a chunk stops at its first exception; other chunks run on).
    void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn);

private:
    void worker_loop(int index);
    void run_chunk(int chunk);

    std::vector<std::thread> workers_;
    std::mutex run_mutex_;  // one parallel_for at a time
    std::mutex mutex_;      // guards everything below
    std::condition_variable start_cv_;
    std::condition_variable done_cv_;
    uint64_t generation_ = 0;
    bool stopping_ = false;
    int pending_ = 0;
    const std::function<void(int64_t)>* fn_ = nullptr;
    int64_t begin_ = 0;
    int64_t end_ = 0;
    int chunks_ = 0;
    std::exception_ptr error_;
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
