#include "tessel/runtime/ThreadPool.h"

#include <cstdlib>
#include <iostream>
#include <string>

#include "tessel/Error.h"

namespace tessel {
namespace internal {
namespace {

/// True in pool workers, and in a caller while it runs its own chunk: parallel_for then runs
/// serially.
thread_local bool t_inside_parallel = false;

void run_serial(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn) {
    for (int64_t i = begin; i < end; ++i) fn(i);
}

}  // namespace
}  // namespace internal

ThreadPool::ThreadPool(int num_threads) {
    if (num_threads < 1) {
        TESSEL_THROW(RuntimeError) << "ThreadPool: " << num_threads << " threads; need at least 1";
    }
    for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    start_cv_.notify_all();
    for (auto& w : workers_) w.join();
}

int ThreadPool::default_num_threads() {
    if (const char* env = std::getenv("TESSEL_NUM_THREADS")) {
        char* end = nullptr;
        long value = std::strtol(env, &end, 10);
        if (end == env || *end != '\0' || value < 1 || value > 4096) {
            TESSEL_THROW(RuntimeError) << "TESSEL_NUM_THREADS='" << env
                                       << "' is not a thread count (an integer from 1 to 4096)";
        }
        return static_cast<int>(value);
    }
    unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
}

ThreadPool& ThreadPool::global() {
    static ThreadPool pool(default_num_threads());
    return pool;
}

void ThreadPool::run_chunk(int chunk) {
    if (chunk >= chunks_) return;
    int64_t n = end_ - begin_;
    int64_t lo = begin_ + n * chunk / chunks_, hi = begin_ + n * (chunk + 1) / chunks_;
    try {
        internal::run_serial(lo, hi, *fn_);
    } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
    }
}

void ThreadPool::worker_loop(int index) {
    internal::t_inside_parallel = true;
    uint64_t seen = 0;
    while (true) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_) return;
            seen = generation_;
        }
        run_chunk(index);
        std::lock_guard<std::mutex> lock(mutex_);
        if (--pending_ == 0) done_cv_.notify_one();
    }
}

void ThreadPool::parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn) {
    if (end <= begin) return;
    if (internal::t_inside_parallel || workers_.empty() || end - begin == 1) {
        return internal::run_serial(begin, end, fn);
    }
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        fn_ = &fn;
        begin_ = begin;
        end_ = end;
        chunks_ = static_cast<int>(std::min<int64_t>(num_threads(), end - begin));
        pending_ = static_cast<int>(workers_.size());
        error_ = nullptr;
        ++generation_;
    }
    start_cv_.notify_all();
    internal::t_inside_parallel = true;
    run_chunk(0);
    internal::t_inside_parallel = false;
    std::exception_ptr error;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        done_cv_.wait(lock, [&] { return pending_ == 0; });
        error = error_;
        error_ = nullptr;
        fn_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace tessel

extern "C" int32_t tessel_parallel_for(int64_t n, void (*body)(int64_t i, void* closure),
                                       void* closure) {
    try {
        tessel::ThreadPool::global().parallel_for(0, n, [&](int64_t i) { body(i, closure); });
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "tessel_parallel_for: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "tessel_parallel_for: unknown exception\n";
    }
    return -1;
}
