// build() of different schedules from several threads at once (the tuner builds candidates in
// parallel): every module computes the right result.
#include <gtest/gtest.h>

#include <thread>

#include "codegen/CodegenTestUtil.h"

using namespace tessel;

TEST(ConcurrentBuild, SchedulesBuiltFromFourThreads) {
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t, &failures] {
            for (int round = 0; round < 3; ++round) {
                int n = 16 + 8 * t + round;
                Tensor A = placeholder({n}, Float(32), "A");
                Tensor C = compute(
                    {n}, [&](Var i) { return A(i) * 3.0f; }, "C");
                Schedule s = create_schedule({C});
                s.split(s.stage_of(C), 0, 4 + round);
                Module m = build(s, {A, C});
                NDArray a = NDArray::empty({n}, float32()), c = NDArray::empty({n}, float32());
                for (int i = 0; i < n; ++i) a.data_as<float>()[i] = float(i);
                m.get("main")({a, c});
                for (int i = 0; i < n; ++i)
                    if (c.data_as<float>()[i] != 3.0f * i) ++failures[t];
            }
        });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}
