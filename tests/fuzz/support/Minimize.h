// Minimising a failing fuzzer case: the shortest step list that still fails the same way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fuzz/support/FuzzCase.h"
#include "tessel/schedule/Step.h"

namespace tessel::fuzz {

/// Greedy minimisation: tries dropping each step (last first) and keeps the drop when
/// `still_fails` holds for the shorter list; repeats until no single step can be dropped.
/// `still_fails(steps)` is assumed to hold for the input.
std::vector<Step> minimize_steps(std::vector<Step> steps,
                                 const std::function<bool(const std::vector<Step>&)>& still_fails);

/// minimize_steps where "still fails" means: check_steps(p, ...) is a Failure of `category`.
std::vector<Step> minimize_case(const PreparedOperator& p, const std::vector<Step>& steps,
                                const std::string& category);

}  // namespace tessel::fuzz
