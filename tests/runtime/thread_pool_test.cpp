// The thread pool: every iteration once, exceptions propagated, nested loops serial.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>

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

}  // namespace
}  // namespace tessel
