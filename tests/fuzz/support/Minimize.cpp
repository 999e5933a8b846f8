// Greedy step-list minimisation (see Minimize.h).
#include "fuzz/support/Minimize.h"

namespace tessel::fuzz {

std::vector<Step> minimize_steps(std::vector<Step> steps,
                                 const std::function<bool(const std::vector<Step>&)>& still_fails) {
    bool changed = true;
    while (changed) {
        changed = false;
        // Last first: later steps depend on earlier ones (positions), rarely the other way.
        for (size_t i = steps.size(); i-- > 0;) {
            std::vector<Step> shorter = steps;
            shorter.erase(shorter.begin() + static_cast<std::ptrdiff_t>(i));
            if (still_fails(shorter)) {
                steps = std::move(shorter);
                changed = true;
            }
        }
    }
    return steps;
}

std::vector<Step> minimize_case(const PreparedOperator& p, const std::vector<Step>& steps,
                                const std::string& category) {
    return minimize_steps(steps, [&](const std::vector<Step>& candidate) {
        CaseOutcome o = check_steps(p, candidate);
        return o.failed() && o.category == category;
    });
}

}  // namespace tessel::fuzz
