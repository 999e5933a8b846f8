// The cost-model benchmark's ranking figures: the data set's programs with their features, the
// splits, and the model trained on one part and scored on the other.
#pragma once

#include <string>
#include <vector>

#include "Dataset.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"

namespace tessel::bench {

/// The data set's programs as the cost model takes them (features extracted here; the mean
/// extraction time per program, lowering included, goes to `ms_per_program`).
std::vector<MeasuredProgram> measured_programs(const Dataset& d, double* ms_per_program);

/// Trains a model on `train`, ranks `test`, prints the figures and the BENCH line for `name`.
/// Returns the quality.
RankingQuality evaluate_split(const std::string& name, const std::vector<MeasuredProgram>& train,
                              const std::vector<MeasuredProgram>& test,
                              const CostModelOptions& options);

/// Whether two models trained with the same seed predict the same scores.
bool check_deterministic(const std::vector<MeasuredProgram>& programs,
                         const CostModelOptions& options);

}  // namespace tessel::bench
