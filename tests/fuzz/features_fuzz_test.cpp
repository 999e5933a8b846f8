// Features of random schedules: the schedule fuzzer's step generator on every operator of its
// suite (odd extents, guards, caches, compute_at, rfactor, storage layouts), each lowered to the
// feature point. Extraction must not throw, must give one row per BufferStore of the IR, and
// every raw value must be finite and non-negative (all features are counts, sizes and ratios of
// them); the log-scaled values finite. Schedules the lowering refuses are skipped.
#include <gtest/gtest.h>

#include <cmath>

#include "fuzz/support/OperatorSuite.h"
#include "fuzz/support/StepGenerator.h"
#include "tessel/auto_schedule/features/Features.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using namespace tessel::fuzz;

namespace {

int count_stores(const Stmt& s) {
    int n = 0;
    post_order_visit(s,
                     [&](const IRNode* node) { n += node->node_type == IRNodeType::BufferStore; });
    return n;
}

}  // namespace

TEST(FeaturesFuzz, RandomSchedulesGiveFiniteRows) {
    StepStats stats;
    Target target("llvm");
    LowerOptions o;
    o.stop_after = "partition_loops";
    int checked = 0;
    for (const std::string& name : operator_names()) {
        for (uint64_t seed = 0; seed < 40; ++seed) {
            FuzzOperator op = make_operator(name);
            Schedule s(op.outputs);
            StepGenerator gen(seed * 7919 + name.size(), &stats);
            gen.apply_random(s, 12);
            LoweredFunc f;
            try {
                f = lower(s, op.args(), target, "main", o);
            } catch (const Error&) {
                continue;  // a schedule the lowering refuses
            }
            FeatureContext context = FeatureContext::from(s, target);
            FeatureMatrix raw = extract_features(f, context, FeatureOptions{false});
            FeatureMatrix scaled = extract_features(f, context);
            ASSERT_EQ(raw.rows, count_stores(f.body)) << name << " " << to_string(f);
            ASSERT_EQ(raw.values.size(), size_t(raw.rows) * kNumFeatures);
            for (size_t i = 0; i < raw.values.size(); ++i) {
                ASSERT_TRUE(std::isfinite(raw.values[i]) && raw.values[i] >= 0)
                    << name << ": " << feature_names()[i % kNumFeatures] << " = " << raw.values[i]
                    << " in\n"
                    << to_string(f) << "\nsteps:\n"
                    << s.to_python();
                ASSERT_TRUE(std::isfinite(scaled.values[i]));
            }
            ++checked;
        }
    }
    std::printf("features fuzz: %d schedules checked\n", checked);
    EXPECT_GT(checked, int(operator_names().size()) * 20);
}
