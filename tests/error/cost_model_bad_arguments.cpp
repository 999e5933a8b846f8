// The cost model given malformed input: a feature matrix whose size does not match its rows,
// options out of range, scores that do not match the programs, a shared model's member that did
// not join. Each a RuntimeError naming it.
#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(ErrorCostModelBadArguments, FeatureMatrixOfTheWrongWidth) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    MeasuredProgram p;
    p.task_key = "t";
    p.features.rows = 2;
    p.features.values.assign(100, 0.0f);
    p.costs = {1.0};
    CostModel model;
    expect_runtime_error([&] { model.train({p}); },
                         {"CostModel::train", "program 0 has 100 feature values for 2 rows",
                          "expected 164 per row"});
    expect_runtime_error(
        [&] {
            model.predict(std::vector<FeatureMatrix>{FeatureMatrix{}, p.features});
        },
        {"CostModel::predict", "program 1"});
    expect_runtime_error([&] { model.update({p}); }, {"CostModel::update", "program 0"});
    EXPECT_TRUE(model.history().empty());  // nothing was kept
    SharedCostModel shared;
    int m = shared.join();
    expect_runtime_error([&] { shared.add(m, {p}); },
                         {"SharedCostModel::add", "program 0 has 100 feature values"});
    expect_runtime_error([&] { shared.update(m, {p}); }, {"SharedCostModel::update", "program 0"});
    EXPECT_EQ(shared.num_programs(), 0);  // nothing was kept
}

TEST(ErrorCostModelBadArguments, SharedModelMemberThatDidNotJoin) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    SharedCostModel shared;
    shared.join();
    expect_runtime_error([&] { shared.add(1, {}); },
                         {"SharedCostModel::add", "no member 1 (1 joined)"});
    expect_runtime_error([&] { shared.update(-1, {}); },
                         {"SharedCostModel::update", "no member -1"});
}

TEST(ErrorCostModelBadArguments, OptionsOutOfRange) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModelOptions o;
    o.nthread = 0;
    expect_runtime_error([&] { CostModel m(o); }, {"CostModel", "nthread must be at least 1"});
    o = {};
    o.eta = 0;
    expect_runtime_error([&] { CostModel m(o); }, {"CostModel", "eta must be positive"});
    o = {};
    o.min_programs = 0;
    expect_runtime_error([&] { CostModel m(o); }, {"min_programs must be at least 1"});
}

TEST(ErrorCostModelBadArguments, ScoresThatDoNotMatchThePrograms) {
    std::vector<MeasuredProgram> programs(3);
    expect_runtime_error(
        [&] {
            ranking_quality(programs, {1.0, 2.0});
        },
        {"ranking_quality", "2 scores for 3 programs"});
    expect_runtime_error(
        [&] {
            ranking_quality(programs, {1, 2, 3}, 0);
        },
        {"ranking_quality", "k must be at least 1"});
}
