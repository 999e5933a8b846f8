// lower(): a schedule to a LoweredFunc, through the pass pipeline listed in src/lower/Lower.cpp.
#pragma once

#include <string>
#include <vector>

#include "tessel/lower/LoweredFunc.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// Options of the pipeline; `from_env()` reads the TESSEL_ environment variables.
struct LowerOptions {
    /// Insert a run-time check before every load and store (TESSEL_BOUNDS_CHECK=1).
    bool bounds_check = false;
    /// 0: quiet; 1: pass names; 2: the IR after each pass (TESSEL_DEBUG).
    int debug = 0;
    /// Print each pass's time (TESSEL_TIME_PASSES=1).
    bool time_passes = false;
    static LowerOptions from_env();
};

/// Lowers schedule `s` to a function over `args` (every placeholder the DAG reads and every
/// output, in the order the caller will pass them). Deterministic: the same schedule and
/// arguments give byte-identical printed IR, in any process. Throws ScheduleError for bad
/// arguments or schedules that cannot be lowered.
LoweredFunc lower(const Schedule& s, const std::vector<Tensor>& args,
                  const std::string& name = "main",
                  const LowerOptions& options = LowerOptions::from_env());

/// The function printed: its signature, then its body (ir/IRPrinter.h).
std::string to_string(const LoweredFunc& f);

}  // namespace tessel
