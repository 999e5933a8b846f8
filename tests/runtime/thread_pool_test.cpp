// The thread pool: every iteration once, exceptions propagated, nested loops serial, workers
// that spin between loops instead of sleeping, workers pinned to CPUs other than the caller's.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "tessel/Error.h"
#include "tessel/runtime/ThreadPool.h"

namespace tessel {
namespace {

TEST(ThreadPool, EveryIterationRunsOnce) {
    ThreadPool pool(4);
    EXPECT_EQ(pool.num_threads(), 4);
    for (int64_t n : {0, 1, 3, 4, 5, 1000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallel_for(10, 10 + n, [&](int64_t i) { ++hits[static_cast<size_t>(i - 10)]; });
        for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    }
}

TEST(ThreadPool, ExceptionPropagatesAndPoolStaysUsable) {
    ThreadPool pool(3);
    EXPECT_THROW(pool.parallel_for(0, 100,
                                   [](int64_t i) {
                                       if (i == 77) throw RuntimeError("iteration 77");
                                   }),
                 RuntimeError);
    std::atomic<int64_t> sum = 0;
    pool.parallel_for(0, 100, [&](int64_t i) { sum += i; });
    EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPool, NestedParallelForRunsSeriallyInsideWorker) {
    ThreadPool pool(4);
    std::atomic<int64_t> sum = 0;
    pool.parallel_for(0, 8, [&](int64_t i) {
        std::thread::id outer = std::this_thread::get_id();
        pool.parallel_for(0, 10, [&](int64_t j) {
            EXPECT_EQ(std::this_thread::get_id(), outer);
            sum += i * 10 + j;
        });
    });
    EXPECT_EQ(sum.load(), 79 * 80 / 2);
}

TEST(ThreadPool, ConcurrentCallersTakeTurns) {
    ThreadPool pool(3);
    std::atomic<int64_t> sum = 0;
    std::vector<std::thread> callers;
    for (int t = 0; t < 4; ++t) {
        callers.emplace_back([&] {
            for (int k = 0; k < 20; ++k) pool.parallel_for(0, 50, [&](int64_t i) { sum += i; });
        });
    }
    for (auto& c : callers) c.join();
    EXPECT_EQ(sum.load(), 4 * 20 * 1225);
}

TEST(ThreadPool, SingleThreadPoolAndBadCount) {
    ThreadPool pool(1);
    int64_t sum = 0;
    pool.parallel_for(0, 10, [&](int64_t i) { sum += i; });
    EXPECT_EQ(sum, 45);
    EXPECT_THROW(ThreadPool(0), RuntimeError);
}

TEST(ThreadPool, NumThreadsFromEnvironment) {
    const char* old = std::getenv("TESSEL_NUM_THREADS");
    std::string saved = old ? old : "";
    setenv("TESSEL_NUM_THREADS", "3", 1);
    EXPECT_EQ(ThreadPool::default_num_threads(), 3);
    setenv("TESSEL_NUM_THREADS", "lots", 1);
    EXPECT_THROW(ThreadPool::default_num_threads(), RuntimeError);
    if (old)
        setenv("TESSEL_NUM_THREADS", saved.c_str(), 1);
    else
        unsetenv("TESSEL_NUM_THREADS");
}

void add_index(int64_t i, void* closure) {
    static_cast<std::atomic<int64_t>*>(closure)->fetch_add(i);
}

TEST(ThreadPool, CEntryPoint) {
    std::atomic<int64_t> sum = 0;
    EXPECT_EQ(tessel_parallel_for(1000, add_index, &sum), 0);
    EXPECT_EQ(sum.load(), 999 * 1000 / 2);
    EXPECT_EQ(tessel_parallel_for(0, add_index, &sum), 0);
}

// Restores an environment variable when it goes out of scope.
struct SavedEnv {
    explicit SavedEnv(const char* name) : name(name) {
        const char* v = std::getenv(name);
        had = v != nullptr;
        if (had) value = v;
    }
    ~SavedEnv() {
        if (had)
            setenv(name, value.c_str(), 1);
        else
            unsetenv(name);
    }
    const char* name;
    bool had = false;
    std::string value;
};

TEST(ThreadPool, SpinFromEnvironment) {
    SavedEnv saved("TESSEL_SPIN_US");
    unsetenv("TESSEL_SPIN_US");
    EXPECT_EQ(ThreadPool::default_spin(), std::chrono::microseconds(200));
    setenv("TESSEL_SPIN_US", "0", 1);
    EXPECT_EQ(ThreadPool::default_spin(), std::chrono::microseconds(0));
    setenv("TESSEL_SPIN_US", "50", 1);
    EXPECT_EQ(ThreadPool::default_spin(), std::chrono::microseconds(50));
    for (const char* bad : {"-1", "1000001", "fast", "5us", ""}) {
        setenv("TESSEL_SPIN_US", bad, 1);
        EXPECT_THROW(ThreadPool::default_spin(), RuntimeError) << bad;
    }
    EXPECT_THROW(ThreadPool(2, std::chrono::microseconds(-1)), RuntimeError);
}

// Loops back to back and loops after the workers went to sleep both run every iteration once.
TEST(ThreadPool, SpinningAndSleepingWorkersRunEveryIteration) {
    for (int64_t us : {0, 200, 100000}) {
        ThreadPool pool(3, std::chrono::microseconds(us));
        for (int call = 0; call < 60; ++call) {
            if (call % 20 == 19) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            std::atomic<int64_t> sum = 0;
            pool.parallel_for(0, 30 + call, [&](int64_t i) { sum += i; });
            int64_t n = 30 + call;
            EXPECT_EQ(sum.load(), n * (n - 1) / 2) << "spin " << us << " us, call " << call;
        }
    }
}

long voluntary_switches() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw;
}

// Loops microseconds apart: with a spin the worker never sleeps between them (it would block in
// the kernel, a voluntary context switch, on every loop); with none it sleeps after every loop.
TEST(ThreadPool, WorkersSpinBetweenLoopsInsteadOfSleeping) {
#if defined(__SANITIZE_THREAD__)
    // ThreadSanitizer's runtime serialises atomic accesses to one address with locks of its own,
    // which block in the kernel when the spinning threads contend (CI saw 171 switches).
    GTEST_SKIP() << "counts the kernel's context switches, which ThreadSanitizer's locks add";
#endif
    auto switches_over_loops = [](std::chrono::microseconds spin) {
        ThreadPool pool(2, spin);
        std::atomic<int64_t> sum = 0;
        pool.parallel_for(0, 2, [&](int64_t i) { sum += i; });  // the worker has started
        long before = voluntary_switches();
        for (int call = 0; call < 300; ++call)
            pool.parallel_for(0, 2, [&](int64_t i) { sum += i; });
        long after = voluntary_switches();
        EXPECT_EQ(sum.load(), 301);
        return after - before;
    };
    long spinning = switches_over_loops(std::chrono::seconds(1));
    long sleeping = switches_over_loops(std::chrono::microseconds(0));
    EXPECT_LT(spinning, 30) << "with a spin of 1 s";
    EXPECT_GT(sleeping, 100) << "with no spin";
}

// The CPUs the calling thread may run on.
std::vector<int> affinity() {
    cpu_set_t set;
    CPU_ZERO(&set);
    EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

TEST(ThreadPool, PinFromEnvironment) {
    SavedEnv saved("TESSEL_PIN_THREADS");
    unsetenv("TESSEL_PIN_THREADS");
    EXPECT_TRUE(ThreadPool::default_pin());
    setenv("TESSEL_PIN_THREADS", "0", 1);
    EXPECT_FALSE(ThreadPool::default_pin());
    for (const char* bad : {"2", "yes", ""}) {
        setenv("TESSEL_PIN_THREADS", bad, 1);
        EXPECT_THROW(ThreadPool::default_pin(), RuntimeError) << bad;
    }
}

// With more CPUs than workers, each worker runs pinned to a CPU of its own that is not the
// caller's; the caller stays unpinned. Unpinned when asked, or with a worker for every CPU.
TEST(ThreadPool, WorkersArePinnedAwayFromTheCaller) {
    const std::vector<int> cpus = affinity();
    if (cpus.size() < 2) GTEST_SKIP() << "one CPU: nothing to pin";
    const int workers = std::min<int>(static_cast<int>(cpus.size()) - 1, 3);
    ThreadPool pool(workers + 1, std::chrono::microseconds(200), true);
    std::vector<std::vector<int>> seen(static_cast<size_t>(workers + 1));
    for (int call = 0; call < 20; ++call) {
        pool.parallel_for(0, workers + 1,
                          [&](int64_t i) { seen[static_cast<size_t>(i)] = affinity(); });
        const std::vector<int> pinned = pool.pinned_cpus();
        ASSERT_EQ(pinned.size(), static_cast<size_t>(workers));
        EXPECT_EQ(seen[0], cpus) << "the caller keeps its own affinity";
        for (int w = 0; w < workers; ++w) {
            EXPECT_EQ(seen[static_cast<size_t>(w + 1)],
                      std::vector<int>{pinned[static_cast<size_t>(w)]});
            for (int v = 0; v < w; ++v)
                EXPECT_NE(pinned[static_cast<size_t>(v)], pinned[static_cast<size_t>(w)]);
        }
    }
    ThreadPool unpinned(workers + 1, std::chrono::microseconds(200), false);
    unpinned.parallel_for(0, workers + 1,
                          [&](int64_t i) { seen[static_cast<size_t>(i)] = affinity(); });
    for (const std::vector<int>& s : seen) EXPECT_EQ(s, cpus);
    EXPECT_EQ(unpinned.pinned_cpus(), std::vector<int>(static_cast<size_t>(workers), -1));
    ThreadPool full(static_cast<int>(cpus.size()) + 1, std::chrono::microseconds(200), true);
    full.parallel_for(0, 100, [&](int64_t) {});
    for (int c : full.pinned_cpus()) EXPECT_EQ(c, -1);
}

}  // namespace
}  // namespace tessel
