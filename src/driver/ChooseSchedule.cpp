// What a schedule without steps becomes (ChooseSchedule.h).
#include "driver/ChooseSchedule.h"

#include "tessel/auto_schedule/records/ApplyHistoryBest.h"
#include "tessel/auto_schedule/records/ShippedLogs.h"
#include "tessel/op/DefaultSchedule.h"

namespace tessel::internal {

Schedule choose_schedule(const std::vector<Tensor>& outputs, const Target& target,
                         const std::function<Schedule()>& unmatched, bool shipped_logs) {
    if (ApplyHistoryBest* best = current_apply_history_best())
        return best->choose(outputs, target,
                            [&] { return op::default_schedule_rules(outputs, target); });
    // The shipped logs are silent about computations they hold no record of.
    ApplyHistoryBest* shipped = shipped_logs ? shipped_tuning_logs() : nullptr;
    return shipped ? shipped->choose(outputs, target, unmatched) : unmatched();
}

}  // namespace tessel::internal
