// The cost model's booster through XGBoost's C API (Debian's libxgboost-dev). The objective is
// custom (CostModel.cpp computes gradients from program-level sums), so each round predicts the
// training rows and boosts one tree with XGBoosterBoostOneIter.
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "../CostModelBooster.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

void check(int status, const char* what) {
    if (status != 0)
        TESSEL_THROW(RuntimeError)
            << "CostModel: XGBoost failed in " << what << ": " << XGBGetLastError();
}

// A DMatrix of dense rows (every value present: NaN marks missing, and features are never NaN).
class DMatrix {
public:
    DMatrix(const std::vector<float>& rows, size_t columns) {
        bst_ulong n = columns ? rows.size() / columns : 0;
        check(XGDMatrixCreateFromMat(rows.data(), n, columns, std::nanf(""), &h_),
              "XGDMatrixCreateFromMat");
    }
    ~DMatrix() { XGDMatrixFree(h_); }
    DMatrix(const DMatrix&) = delete;
    DMatrix& operator=(const DMatrix&) = delete;
    DMatrixHandle get() const { return h_; }

private:
    DMatrixHandle h_ = nullptr;
};

std::string number(double v) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
}

}  // namespace

struct Booster::Handle {
    BoosterHandle h = nullptr;
    ~Handle() {
        if (h) XGBoosterFree(h);
    }
};

Booster::Booster(const BoosterParams& params) : params_(params) {}

Booster::~Booster() = default;
Booster::Booster(Booster&&) noexcept = default;
Booster& Booster::operator=(Booster&&) noexcept = default;

bool Booster::available() {
    return true;
}

namespace {

// A booster with the cost model's parameters, caching `cache` (the training rows) if given.
BoosterHandle make_booster(const BoosterParams& p, const DMatrix* cache) {
    BoosterHandle h = nullptr;
    DMatrixHandle dmats[1] = {cache ? cache->get() : nullptr};
    check(XGBoosterCreate(dmats, cache ? 1 : 0, &h), "XGBoosterCreate");
    const std::pair<const char*, std::string> settings[] = {
        {"booster", "gbtree"},
        {"tree_method", "hist"},
        {"objective", "reg:squarederror"},  // the identity link; the gradients are ours
        {"base_score", "0"},                // a program's score is a sum over its rows
        {"disable_default_eval_metric", "1"},
        {"verbosity", "0"},
        {"seed", std::to_string(p.seed)},
        {"nthread", std::to_string(p.nthread)},
        {"max_depth", std::to_string(p.max_depth)},
        {"eta", number(p.eta)},
        {"gamma", number(p.gamma)},
        {"min_child_weight", number(p.min_child_weight)},
    };
    for (const auto& [key, value] : settings) {
        int status = XGBoosterSetParam(h, key, value.c_str());
        if (status != 0) XGBoosterFree(h);
        check(status, "XGBoosterSetParam");
    }
    return h;
}

}  // namespace

void Booster::train(const std::vector<float>& rows, size_t columns,
                    const BoosterObjective& objective, int rounds, int early_stop) {
    DMatrix train(rows, columns);
    auto handle = std::make_unique<Handle>();
    handle->h = make_booster(params_, &train);
    size_t n = columns ? rows.size() / columns : 0;
    std::vector<float> predictions(n), grad(n), hess(n);
    double best = std::numeric_limits<double>::infinity();
    int since_best = 0;
    for (int round = 0; round < rounds; ++round) {
        bst_ulong len = 0;
        const float* out = nullptr;
        check(XGBoosterPredict(handle->h, train.get(), 0, 0, 1, &len, &out), "XGBoosterPredict");
        TESSEL_CHECK(len == n) << "XGBoost predicted " << len << " of " << n << " rows";
        predictions.assign(out, out + len);
        double loss = objective(predictions, &grad, &hess);
        if (early_stop > 0) {
            since_best = loss < best * 0.999 ? 0 : since_best + 1;
            best = std::min(best, loss);
            if (since_best >= early_stop) break;
        }
        check(XGBoosterBoostOneIter(handle->h, train.get(), grad.data(), hess.data(), n),
              "XGBoosterBoostOneIter");
    }
    handle_ = std::move(handle);
}

std::vector<float> Booster::predict(const std::vector<float>& rows, size_t columns) const {
    TESSEL_CHECK(handle_) << "predict before train";
    DMatrix data(rows, columns);
    bst_ulong len = 0;
    const float* out = nullptr;
    check(XGBoosterPredict(handle_->h, data.get(), 0, 0, 0, &len, &out), "XGBoosterPredict");
    return std::vector<float>(out, out + len);
}

std::string Booster::save(const BoosterAttributes& attributes) const {
    TESSEL_CHECK(handle_) << "save before train";
    for (const auto& [key, value] : attributes)
        check(XGBoosterSetAttr(handle_->h, key.c_str(), value.c_str()), "XGBoosterSetAttr");
    bst_ulong len = 0;
    const char* bytes = nullptr;
    check(XGBoosterSaveModelToBuffer(handle_->h, R"({"format": "json"})", &len, &bytes),
          "XGBoosterSaveModelToBuffer");
    return std::string(bytes, len);
}

std::vector<std::string> Booster::load(const std::string& bytes,
                                       const std::vector<std::string>& keys) {
    auto handle = std::make_unique<Handle>();
    handle->h = make_booster(params_, nullptr);
    check(XGBoosterLoadModelFromBuffer(handle->h, bytes.data(), bytes.size()),
          "XGBoosterLoadModelFromBuffer");
    // Loading restores the saved parameters; the threads are this process's choice.
    check(XGBoosterSetParam(handle->h, "nthread", std::to_string(params_.nthread).c_str()),
          "XGBoosterSetParam");
    std::vector<std::string> values;
    for (const std::string& key : keys) {
        const char* value = nullptr;
        int found = 0;
        check(XGBoosterGetAttr(handle->h, key.c_str(), &value, &found), "XGBoosterGetAttr");
        values.push_back(found && value ? value : "");
    }
    handle_ = std::move(handle);
    return values;
}

}  // namespace tessel::internal
