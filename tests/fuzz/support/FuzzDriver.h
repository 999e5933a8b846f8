// The schedule fuzzer's main loop: many cases, each a random step list on one suite operator
// (round robin), checked by check_schedule; statistics and the failures found.
//
// Environment (README.md lists them):
//   TESSEL_FUZZ_CASES     cases per run (default 500, the CI run)
//   TESSEL_FUZZ_SEED      the base seed (default 20240603); case k uses a seed derived from it
//   TESSEL_FUZZ_SAVE_DIR  where minimised failures are written as regression tests
//                         (default: fuzz_failures/ in the working directory)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz/support/FuzzCase.h"
#include "fuzz/support/StepGenerator.h"

namespace tessel::fuzz {

/// How a fuzz run is configured.
struct FuzzConfig {
    int64_t cases = 500;
    uint64_t seed = 20240603;
    int max_attempts = 16;  ///< primitives attempted per case: uniform in [1, max_attempts]
    std::string save_dir = "fuzz_failures";
    /// The defaults, overridden by the TESSEL_FUZZ_* environment variables.
    static FuzzConfig from_env();
};

/// One failing case, as found (not minimised).
struct FuzzFailure {
    std::string op_name;
    int64_t case_index = 0;
    std::vector<Step> steps;  ///< the steps applied so far
    std::string attempt;      ///< the primitive being attempted, when one failed itself
    CaseOutcome outcome;
};

/// What a run found.
struct FuzzReport {
    StepStats stats;
    int64_t cases = 0, passed = 0, late_rejects = 0, budget = 0, failures = 0;
    std::map<std::string, int64_t> late_reject_reasons;  ///< first line of lower()'s message
    std::vector<FuzzFailure> first_failures;  ///< the first failure of each (operator, category)
    double seconds = 0;
    /// Counts, rejection rate and the statistics table, for the test's output.
    std::string summary() const;
};

/// Runs `config.cases` cases.
FuzzReport run_fuzz(const FuzzConfig& config);

/// Minimises `f` (when its steps alone reproduce it) and writes a regression test into `dir`;
/// returns a description: the path and the minimised steps as JSON.
std::string save_failure(const FuzzFailure& f, uint64_t input_seed, const std::string& dir);

}  // namespace tessel::fuzz
