// Writing a minimised fuzzer failure as a regression test, tests/regression/issue_<slug>_test.cpp:
// the operator's name, the input seed and the step list as JSON, and an assertion that the case
// passes (lowers, runs in bounds, matches the reference, replays identically).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/schedule/Step.h"

namespace tessel::fuzz {

/// What a regression test records.
struct RegressionCase {
    std::string slug;     ///< lower_snake_case; the file is issue_<slug>_test.cpp
    std::string op_name;  ///< an operator of the suite (OperatorSuite.h)
    uint64_t input_seed = 0;
    std::vector<Step> steps;
    std::string failure;  ///< what went wrong before the fix (quoted in a comment)
};

/// A default slug: "fuzz_<op>_<category>_<8 hex digits of a hash of the steps>".
std::string regression_slug(const std::string& op_name, const std::string& category,
                            const std::vector<Step>& steps);

/// The steps as a JSON array with one step per line (steps_from_json reads it).
std::string steps_to_json_lines(const std::vector<Step>& steps);

/// The test's C++ source.
std::string regression_test_source(const RegressionCase& c);

/// Writes the source to `dir`/issue_<slug>_test.cpp (creating `dir`); returns the path.
std::string write_regression_test(const std::string& dir, const RegressionCase& c);

}  // namespace tessel::fuzz
