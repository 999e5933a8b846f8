// The gradient-boosting library behind the cost model (auto_schedule/cost_model/CostModel.h),
// reduced to what the model needs: train on rows with a custom objective, predict rows, save and
// load. xgboost/XGBoostBooster.cpp implements it with XGBoost's C API; xgboost/NoXGBoost.cpp, built
// without XGBoost, throws RuntimeError from the constructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessel::internal {

/// XGBoost's parameters as the cost model sets them.
struct BoosterParams {
    uint64_t seed = 0;
    int nthread = 1;
    int max_depth = 10;
    double eta = 0.2;
    double gamma = 0.001;
    double min_child_weight = 0;
};

/// Fills the gradient and hessian of every row from the current predictions of every row, and
/// returns the loss (for early stopping).
using BoosterObjective = std::function<double(const std::vector<float>& predictions,
                                              std::vector<float>* grad, std::vector<float>* hess)>;

/// Attributes stored in a saved model, as (key, value) pairs.
using BoosterAttributes = std::vector<std::pair<std::string, std::string>>;

class Booster {
public:
    /// RuntimeError when tessel was built without XGBoost.
    explicit Booster(const BoosterParams& params);
    ~Booster();
    Booster(const Booster&) = delete;
    Booster& operator=(const Booster&) = delete;
    Booster(Booster&&) noexcept;
    Booster& operator=(Booster&&) noexcept;

    /// Whether this build has the library.
    static bool available();

    /// Trains a new model (the previous one is dropped) on `rows` (row-major, `columns` wide)
    /// for at most `rounds` rounds; with `early_stop` > 0, stops once the loss has not improved
    /// by 0.1% for that many rounds.
    void train(const std::vector<float>& rows, size_t columns, const BoosterObjective& objective,
               int rounds, int early_stop);
    /// The model's prediction for every row.
    std::vector<float> predict(const std::vector<float>& rows, size_t columns) const;
    /// The model as JSON bytes, with `attributes` stored in it.
    std::string save(const BoosterAttributes& attributes) const;
    /// Replaces the model by one save() made; returns the values of the attributes `keys` ("" for
    /// a missing one). RuntimeError for bytes XGBoost cannot read.
    std::vector<std::string> load(const std::string& bytes, const std::vector<std::string>& keys);

private:
    struct Handle;
    BoosterParams params_;
    std::unique_ptr<Handle> handle_;
};

}  // namespace tessel::internal
