// The cost model's file: saving an untrained model, loading a missing file, a file that is not
// a model, or an XGBoost model that tessel did not write. Each a RuntimeError naming the file.
#include <cstdio>
#include <fstream>

#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

namespace {

std::string write_file(const std::string& name, const std::string& text) {
    std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    return path;
}

}  // namespace

TEST(ErrorCostModelFile, SaveUntrained) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModel model;
    expect_runtime_error([&] { model.save(::testing::TempDir() + "never.model.json"); },
                         {"CostModel::save", "not trained"});
}

TEST(ErrorCostModelFile, LoadMissingOrForeignFiles) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModel model;
    expect_runtime_error([&] { model.load("/nonexistent/dir/x.model.json"); },
                         {"CostModel::load", "cannot read '/nonexistent/dir/x.model.json'"});
    std::string garbage = write_file("garbage.model.json", "{\"not\": \"a model\"");
    expect_runtime_error([&] { model.load(garbage); }, {"CostModel", "XGBoost"});
    EXPECT_FALSE(model.trained());
    std::remove(garbage.c_str());
}

TEST(ErrorCostModelFile, SaveToAnUnwritablePlace) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModelOptions o;
    o.min_programs = 1;
    o.num_rounds = 2;
    CostModel model(o);
    MeasuredProgram p;
    p.task_key = "t";
    p.features.rows = 1;
    p.features.values.assign(kNumFeatures, 1.0f);
    p.costs = {1.0};
    model.train({p});
    ASSERT_TRUE(model.trained());
    expect_runtime_error([&] { model.save("/nonexistent/dir/x.model.json"); },
                         {"CostModel::save", "cannot write"});
}
