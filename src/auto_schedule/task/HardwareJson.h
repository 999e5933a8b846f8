// The hardware parameters of a search task as JSON and back, as HardwareParams::fields describes
// them: search tasks (SearchTask.cpp) and tuning records (records/RecordJson.cpp) write and check
// them alike.
#pragma once

#include <nlohmann/json.hpp>

#include "support/JsonFields.h"
#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel::internal {

/// {"num_cores": 16, "vector_unit_bytes": 64, ...}: every field.
inline nlohmann::json hardware_to_json(const HardwareParams& h) {
    return options_json(h, kEveryField);
}

/// Reads every field of `j` (an object; each required, an integer in its range; other keys are
/// left for a later tessel's fields), each problem, at "hardware.<field>", sent to `report`
/// (which words it: a task's DSLError, a record's skip reason).
inline HardwareParams hardware_from_json(const nlohmann::json& j, const FieldReporter& report) {
    HardwareParams h;
    JsonFields f(j, "hardware", report);
    f.require(option_names<HardwareParams>(kEveryField));
    read_options(f, h, kEveryField);
    return h;
}

}  // namespace tessel::internal
