// A CostModel in a tessel built without XGBoost: a RuntimeError that says how to get it, at
// construction (before any measurement is wasted on a tuner that cannot rank). With XGBoost
// built in, available() says so and the model constructs.
#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(ErrorCostModelWithoutXGBoost, IsARuntimeErrorAtConstruction) {
    if (CostModel::available()) {
        CostModel model;
        EXPECT_FALSE(model.trained());
        return;
    }
    expect_runtime_error([] { CostModel model; }, {"CostModel", "built without XGBoost",
                                                   "libxgboost-dev", "TESSEL_USE_XGBOOST=ON"});
}
