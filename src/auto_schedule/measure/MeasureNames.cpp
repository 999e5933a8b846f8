// The spellings of measurement error codes and candidate origins (records use them), and
// MeasureResult's helpers.
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "tessel/auto_schedule/measure/Measure.h"

namespace tessel {

namespace {

constexpr std::array<std::pair<MeasureError, const char*>, 12> kErrors = {{
    {MeasureError::None, "none"},
    {MeasureError::InstantiationError, "instantiation_error"},
    {MeasureError::BuildError, "build_error"},
    {MeasureError::BuildTimeout, "build_timeout"},
    {MeasureError::LoadError, "load_error"},
    {MeasureError::RunError, "run_error"},
    {MeasureError::RunTimeout, "run_timeout"},
    {MeasureError::WrongAnswer, "wrong_answer"},
    {MeasureError::OutOfBoundsWrite, "out_of_bounds_write"},
    {MeasureError::Crash, "crash"},
    {MeasureError::OutOfMemory, "out_of_memory"},
    {MeasureError::WorkerError, "worker_error"},
}};

constexpr std::array<std::pair<CandidateOrigin, const char*>, 8> kOrigins = {{
    {CandidateOrigin::Manual, "manual"},
    {CandidateOrigin::CostModel, "cost_model"},
    {CandidateOrigin::Random, "random"},
    {CandidateOrigin::Mutation, "mutation"},
    {CandidateOrigin::Crossover, "crossover"},
    {CandidateOrigin::Remeasure, "remeasure"},
    {CandidateOrigin::Default, "default"},
    {CandidateOrigin::Check, "check"},
}};

template <typename Table, typename E>
const char* name_in(const Table& table, E value) {
    for (const auto& [v, name] : table)
        if (v == value) return name;
    return "unknown";
}

template <typename E, typename Table>
std::optional<E> value_in(const Table& table, const std::string& name) {
    for (const auto& [v, n] : table)
        if (name == n) return v;
    return std::nullopt;
}

}  // namespace

const char* measure_error_name(MeasureError error) {
    return name_in(kErrors, error);
}

std::optional<MeasureError> measure_error_from_name(const std::string& name) {
    return value_in<MeasureError>(kErrors, name);
}

const char* candidate_origin_name(CandidateOrigin origin) {
    return name_in(kOrigins, origin);
}

std::optional<CandidateOrigin> candidate_origin_from_name(const std::string& name) {
    return value_in<CandidateOrigin>(kOrigins, name);
}

double MeasureResult::mean_cost() const {
    if (costs.empty()) return std::numeric_limits<double>::infinity();
    return std::accumulate(costs.begin(), costs.end(), 0.0) / static_cast<double>(costs.size());
}

}  // namespace tessel
