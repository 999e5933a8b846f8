// Features: the column names, the log scale, and the entry points (a lowered function, a
// schedule and target, a search task) agreeing with each other.
#include <cmath>
#include <set>

#include "tessel/auto_schedule/task/SearchTask.h"
#include "unit/FeaturesTestUtil.h"

using namespace tessel;
using tessel::testing::Gemm;
using tessel::testing::raw_features;

TEST(FeaturesApi, NamesAreUniqueAndInGroupOrder) {
    const std::vector<std::string>& n = feature_names();
    ASSERT_EQ(n.size(), size_t(kNumFeatures));
    EXPECT_EQ(std::set<std::string>(n.begin(), n.end()).size(), n.size());
    EXPECT_EQ(n.front(), "float_mad");
    EXPECT_EQ(FeatureMatrix::column("vec_num"), 16);
    EXPECT_EQ(FeatureMatrix::column("is_gpu"), 49);
    EXPECT_EQ(FeatureMatrix::column("B0.acc_type.read"), 57);
    EXPECT_EQ(FeatureMatrix::column("B4.stride"), 146);
    EXPECT_EQ(FeatureMatrix::column("arith_intensity_curve_0"), 147);
    EXPECT_EQ(FeatureMatrix::column("alloc_size"), 157);
    EXPECT_EQ(n.back(), "auto_unroll_max_step");
}

TEST(FeaturesApi, LogScaleIsSignedLog2OfOnePlus) {
    Gemm g(16);
    Schedule s = create_schedule({g.C});
    Target t("llvm");
    LowerOptions o;
    o.stop_after = "partition_loops";
    LoweredFunc f = lower(s, g.args(), t, "main", o);
    FeatureMatrix raw = extract_features(f, FeatureContext::from(s, t), FeatureOptions{false});
    FeatureMatrix scaled = extract_features(f, FeatureContext::from(s, t));
    ASSERT_EQ(raw.values.size(), scaled.values.size());
    for (size_t i = 0; i < raw.values.size(); ++i)
        EXPECT_FLOAT_EQ(scaled.values[i], std::log2(1.0f + raw.values[i])) << i;
    EXPECT_FLOAT_EQ(scaled.at(1, FeatureMatrix::column("float_mad")), std::log2(4097.0f));
}

TEST(FeaturesApi, EntryPointsAgree) {
    SearchTask task("matmul", {int64_t(32), int64_t(32), int64_t(32), Float(32)}, Target("llvm"));
    Schedule s = task.initial_schedule();
    int c = static_cast<int>(s.stages().size()) - 1;
    s.split(c, 1, 8);
    s.vectorize(c, 2);
    FeatureMatrix from_task = extract_features(task, s);
    FeatureMatrix from_schedule = extract_features(s, task.target());
    EXPECT_EQ(from_task.rows, 2);
    EXPECT_EQ(from_task.values, from_schedule.values);
    // Deterministic: the same schedule gives the same numbers.
    EXPECT_EQ(extract_features(task, s).values, from_task.values);
}

TEST(FeaturesApi, OneElementProgram) {
    // One store in one loop of extent 1: no loop moves anything, one cache line, no reuse.
    Tensor A = placeholder({1}, Float(32), "A");
    Tensor B = compute(
        {1}, [&](Var i) { return A(i) * 2.0f; }, "B");
    auto f = raw_features(create_schedule({B}), {A, B});
    ASSERT_EQ(f.m.rows, 1);
    EXPECT_FEATURE(f, 0, "float_mul", 1);
    EXPECT_FEATURE(f, 0, "B0.unique_bytes", 4);
    EXPECT_FEATURE(f, 0, "B0.lines", 1);
    EXPECT_FEATURE(f, 0, "B0.reuse_type.no_reuse", 1);
}
