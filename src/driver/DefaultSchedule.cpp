// op::default_schedule (driver/DefaultSchedule.h): the tuning records first, then the rules.
#include "tessel/driver/DefaultSchedule.h"

#include "driver/ChooseSchedule.h"

namespace tessel::op {

Schedule default_schedule(const std::vector<Tensor>& outputs, const Target& target) {
    auto rules = [&] { return default_schedule_rules(outputs, target); };
    return internal::choose_schedule(outputs, target, rules, /*shipped_logs=*/true);
}

}  // namespace tessel::op
