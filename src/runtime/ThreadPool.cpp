#include "tessel/runtime/ThreadPool.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

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

// Tells the core that this thread is spinning (it may run a sibling hyperthread meanwhile).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// An integer environment variable from `min` to `max` (RuntimeError otherwise); `fallback` when
// unset.
long env_integer(const char* name, long min, long max, long fallback, const char* what) {
    const char* env = std::getenv(name);
    if (!env) return fallback;
    char* end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || value < min || value > max) {
        TESSEL_THROW(RuntimeError) << name << "='" << env << "' is not " << what
                                   << " (an integer from " << min << " to " << max << ")";
    }
    return value;
}

// The CPUs this process may run on, in increasing order (empty where that cannot be known).
std::vector<int> allowed_cpus() {
    std::vector<int> cpus;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
#endif
    return cpus;
}

// The CPU the calling thread runs on now, or -1.
int current_cpu() {
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
}

// Pins `thread` to `cpu`; a failure leaves it where it was (pinning is a placement hint).
void pin_thread(std::thread& thread, int cpu) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(thread.native_handle(), sizeof(set), &set);
#else
    (void)thread, (void)cpu;
#endif
}

}  // namespace
}  // namespace internal

ThreadPool::ThreadPool(int num_threads, std::chrono::microseconds spin, bool pin) : spin_(spin) {
    if (num_threads < 1) {
        TESSEL_THROW(RuntimeError) << "ThreadPool: " << num_threads << " threads; need at least 1";
    }
    if (spin.count() < 0) {
        TESSEL_THROW(RuntimeError)
            << "ThreadPool: a spin of " << spin.count() << " microseconds; need at least 0";
    }
    for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
    worker_cpus_.assign(workers_.size(), -1);
    if (pin && !workers_.empty()) {
        std::vector<int> cpus = internal::allowed_cpus();
        if (cpus.size() > workers_.size()) cpus_ = std::move(cpus);
    }
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
    unsigned hw = std::thread::hardware_concurrency();
    return static_cast<int>(
        internal::env_integer("TESSEL_NUM_THREADS", 1, 4096, hw == 0 ? 1 : hw, "a thread count"));
}

std::chrono::microseconds ThreadPool::default_spin() {
    return std::chrono::microseconds(
        internal::env_integer("TESSEL_SPIN_US", 0, 1000000, 200, "a spin time in microseconds"));
}

bool ThreadPool::default_pin() {
    return internal::env_integer("TESSEL_PIN_THREADS", 0, 1, 1, "0 or 1") == 1;
}

std::vector<int> ThreadPool::pinned_cpus() const {
    return worker_cpus_;
}

void ThreadPool::place_workers(int caller_cpu) {
    if (cpus_.empty() || caller_cpu == caller_cpu_) return;
    caller_cpu_ = caller_cpu;
    size_t next = 0;
    for (size_t w = 0; w < workers_.size(); ++w) {
        if (cpus_[next] == caller_cpu) ++next;  // cpus_ has a CPU more than the workers
        if (worker_cpus_[w] != cpus_[next]) {
            internal::pin_thread(workers_[w], cpus_[next]);
            worker_cpus_[w] = cpus_[next];
        }
        ++next;
    }
}

template <class Ready>
bool ThreadPool::spin_until(Ready ready) const {
    if (spin_.count() == 0) return ready();
    auto deadline = std::chrono::steady_clock::now() + spin_;
    for (unsigned i = 1;; ++i) {
        if (ready()) return true;
        internal::cpu_relax();
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return ready();
    }
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
    // The job's fields are written before generation_ moves (under mutex_), so a worker that
    // sees the new generation sees them.
    auto woken = [&] { return stopping_.load() || generation_.load() != seen; };
    while (true) {
        if (!spin_until(woken)) {
            std::unique_lock<std::mutex> lock(mutex_);
            start_cv_.wait(lock, woken);
        }
        if (stopping_) return;
        seen = generation_;
        run_chunk(index);
        // The caller sets caller_waiting_ before it checks pending_ for the last time, this
        // worker counts pending_ down before it reads caller_waiting_: either the caller sees 0
        // and does not sleep or this worker sees it waiting. The notification is under the
        // mutex: a caller between its check of pending_ and its wait holds it.
        if (pending_.fetch_sub(1) == 1 && caller_waiting_.load()) {
            std::lock_guard<std::mutex> lock(mutex_);
            done_cv_.notify_one();
        }
    }
}

void ThreadPool::parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn) {
    if (end <= begin) return;
    if (internal::t_inside_parallel || workers_.empty() || end - begin == 1) {
        return internal::run_serial(begin, end, fn);
    }
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    place_workers(internal::current_cpu());
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
    auto finished = [&] { return pending_.load() == 0; };
    bool done = spin_until(finished);
    {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!done) {
            caller_waiting_ = true;
            done_cv_.wait(lock, finished);
            caller_waiting_ = false;
        }
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
