// Records for the apply-best and shipped-logs tests: a matmul task, a record whose schedule splits
// and parallelises the output's loop (the factor tells records apart), and that factor read back.
#pragma once

#include <string>
#include <variant>

#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/task/SearchTask.h"

namespace tessel::test {

inline SearchTask matmul_task(int64_t n, const std::string& target) {
    return SearchTask("matmul", {n, n, n, Float(32)}, Target(target));
}

// A record of `task` whose schedule runs the output's first loop in parallel (visible in the IR),
// split by `factor` (tells records apart), measured at `cost` seconds.
inline TuningRecord tiled_record(const SearchTask& task, int factor, double cost) {
    Schedule s = task.initial_schedule();
    int out = static_cast<int>(s.stages().size()) - 1;
    s.split(out, 1, factor);
    s.parallel(out, 0);
    MeasureResult r;
    r.costs = {cost};
    return make_record(task, {s}, r);
}

// The factor of the schedule's first step when it is a split, else 0.
inline int split_factor(const Schedule& s) {
    if (s.steps().empty()) return 0;
    const auto* split = std::get_if<SplitStep>(&s.steps()[0]);
    return split ? static_cast<int>(split->factor) : 0;
}

}  // namespace tessel::test
