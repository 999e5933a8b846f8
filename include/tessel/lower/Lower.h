// lower(): a schedule to a LoweredFunc, through the pass pipeline listed in src/lower/Lower.cpp.
#pragma once

#include <string>
#include <vector>

#include "tessel/Target.h"
#include "tessel/lower/LoweredFunc.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// Options of the pipeline; `from_env()` reads the TESSEL_ environment variables.
struct LowerOptions {
    /// Insert a run-time check before every load and store (TESSEL_BOUNDS_CHECK=1).
    bool bounds_check = false;
    /// 0: quiet; 1: pass names; 2: the IR after each pass; 3: also the code build() generates
    /// (TESSEL_DEBUG).
    int debug = 0;
    /// Print each pass's time (TESSEL_TIME_PASSES=1).
    bool time_passes = false;
    /// When not empty, the pipeline stops after the pass of this name (its first run, for
    /// "simplify") and returns the IR as it is then: "partition_loops" gives the IR just before
    /// storage flattening, with multi-dimensional BufferLoad/BufferStore accesses (what the cost
    /// model's features read). lower_pass_names() lists the names; any other name is a
    /// ScheduleError listing them.
    std::string stop_after;
    /// Skip a CPU sum's taps on a zero padding (schedule_ops, lower/ScheduleOps.h). The cost
    /// model's features and the search's checks lower without it: its guards take partition_loops
    /// about twice as long on a convolution (1.2 -> 2.4 ms for a 3 x 3 layer's default schedule),
    /// and the features then read the taps multiplied, the same in training and prediction.
    bool skip_padding_taps = true;
    static LowerOptions from_env();
};

/// The passes of lower() for `target`, in order ("simplify" runs three times and is listed
/// once): the names LowerOptions::stop_after accepts and TESSEL_DEBUG prints.
std::vector<std::string> lower_pass_names(const Target& target);

/// Lowers schedule `s` to a function over `args` (every placeholder the DAG reads and every
/// output, in the order the caller will pass them) for `target`. For a GPU target the last pass
/// splits the function into workspaces and kernels (split_host_device, lower/SplitHostDevice.h)
/// and checks the target's limits. Deterministic: the same schedule, arguments and target give
/// byte-identical printed IR, in any process. Throws ScheduleError for bad arguments (an unknown
/// stop_after name included) or schedules that cannot be lowered for the target.
LoweredFunc lower(const Schedule& s, const std::vector<Tensor>& args, const Target& target,
                  const std::string& name = "main",
                  const LowerOptions& options = LowerOptions::from_env());

/// Lowers without a target: the pipeline up to verify_lowered, with no host/device split and no
/// target limits. Thread-bound loops stay in place, so the loop interpreter runs GPU schedules as
/// SPMD programs; build() for "cuda" splits such a function itself.
LoweredFunc lower(const Schedule& s, const std::vector<Tensor>& args,
                  const std::string& name = "main",
                  const LowerOptions& options = LowerOptions::from_env());

/// True when a stage of `s` is pre-transformed (Schedule::pre_transform): lower() then gives the
/// kernel, which takes each transformed weight `<weight>_packed` in the weight's place in
/// `args`, and lower_pre_transform() the one-time function that makes those buffers.
bool has_pre_transform(const Schedule& s);

/// The name of the pre-transform function of kernel `kernel`: "<kernel>_pre_transform".
std::string pre_transform_name(const std::string& kernel);

/// The one-time layout rewrite of `s`'s constant operands: a function over the weights that `s`
/// pre-transforms (in `args`' order, `args` being lower()'s) and then their laid-out buffers
/// `<weight>_packed` (outputs), computing only the pre-transformed stages, through the same
/// pipeline as lower(). Padding that the layout adds past a weight's end is never written (the
/// kernel never reads it). ScheduleError when `s` pre-transforms nothing.
LoweredFunc lower_pre_transform(const Schedule& s, const std::vector<Tensor>& args,
                                const Target& target, const std::string& name,
                                const LowerOptions& options = LowerOptions::from_env());
/// lower_pre_transform() without a target (as lower() without one).
LoweredFunc lower_pre_transform(const Schedule& s, const std::vector<Tensor>& args,
                                const std::string& name,
                                const LowerOptions& options = LowerOptions::from_env());

/// The function printed: its signature, then its body (ir/IRPrinter.h).
std::string to_string(const LoweredFunc& f);

}  // namespace tessel
