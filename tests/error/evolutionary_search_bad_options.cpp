// Evolutionary search options out of range are a RuntimeError naming the option.
#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/tuner/EvolutionarySearch.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(ErrorEvolutionarySearch, BadOptions) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)}, Target("llvm"));
    SearchSpace space(task);
    CostModel model;
    EvolutionOptions o;
    o.population = 0;
    expect_runtime_error([&] { evolutionary_search(space, model, {}, {}, 4, 0, o); },
                         {"evolutionary_search: population (at least 1) out of range (0)"});
    o = EvolutionOptions{};
    o.mutation_prob = -1;
    expect_runtime_error([&] { evolutionary_search(space, model, {}, {}, 4, 0, o); },
                         {"evolutionary_search: mutation_prob out of range (-1)"});
    expect_runtime_error([&] { evolutionary_search(space, model, {}, {}, -1, 0, {}); },
                         {"the number of states asked for out of range (-1)"});
}
