// The cost model's booster in a build without XGBoost (TESSEL_USE_XGBOOST=OFF, or libxgboost-dev
// missing): constructing it, and so a CostModel, throws RuntimeError naming the package.
#include "../CostModelBooster.h"
#include "tessel/Error.h"

namespace tessel::internal {

struct Booster::Handle {};

Booster::Booster(const BoosterParams& params) : params_(params) {
    TESSEL_THROW(RuntimeError)
        << "CostModel: this tessel was built without XGBoost; install libxgboost-dev "
           "(scripts/install-deps.sh does) and reconfigure with -DTESSEL_USE_XGBOOST=ON";
}

Booster::~Booster() = default;
Booster::Booster(Booster&&) noexcept = default;
Booster& Booster::operator=(Booster&&) noexcept = default;

bool Booster::available() {
    return false;
}

void Booster::train(const std::vector<float>&, size_t, const BoosterObjective&, int, int) {}

std::vector<float> Booster::predict(const std::vector<float>&, size_t) const {
    return {};
}

std::string Booster::save(const BoosterAttributes&) const {
    return {};
}

std::vector<std::string> Booster::load(const std::string&, const std::vector<std::string>&) {
    return {};
}

}  // namespace tessel::internal
