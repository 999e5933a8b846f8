// The fuzzer's own tools: the greedy minimiser keeps exactly the steps a failure needs, and the
// regression writer's step list reads back with steps_from_json.
#include <gtest/gtest.h>

#include "fuzz/support/Minimize.h"
#include "fuzz/support/RegressionWriter.h"

using namespace tessel;
using namespace tessel::fuzz;

namespace {

bool has_split(const std::vector<Step>& steps, int64_t factor) {
    for (const Step& s : steps)
        if (const auto* sp = std::get_if<SplitStep>(&s); sp && sp->factor == factor) return true;
    return false;
}

std::vector<Step> some_steps() {
    return {SplitStep{0, 0, 3}, ReorderStep{0, {1, 0}},
            SplitStep{0, 1, 5}, AnnotateStep{0, 0, IterAnnotation::Parallel},
            SplitStep{0, 2, 7}, ComputeInlineStep{1}};
}

}  // namespace

TEST(FuzzMinimizer, KeepsOnlyTheStepsTheFailureNeeds) {
    // "Fails" when both the factor-3 and the factor-7 splits are present.
    auto fails = [](const std::vector<Step>& s) { return has_split(s, 3) && has_split(s, 7); };
    std::vector<Step> min = minimize_steps(some_steps(), fails);
    ASSERT_EQ(min.size(), 2u);
    EXPECT_TRUE(fails(min));
}

TEST(FuzzMinimizer, RegressionSourceCarriesTheOperatorAndReadableSteps) {
    RegressionCase c{"fuzz_matmul_mismatch_0000abcd", "matmul", 7, some_steps(),
                     "run: output 'C': 1 of 221 elements differ"};
    std::string src = regression_test_source(c);
    EXPECT_NE(src.find("TEST(Regression, FuzzMatmulMismatch0000abcd)"), std::string::npos);
    EXPECT_NE(src.find("check_steps_json(\"matmul\", steps, 7)"), std::string::npos);
    EXPECT_NE(src.find("//   run: output 'C'"), std::string::npos);
    std::string json = steps_to_json_lines(c.steps);
    EXPECT_EQ(steps_to_json(steps_from_json(json)), steps_to_json(c.steps));
}
