// Shared by the measurement tests: a small GEMM task and fast measurement options.
#pragma once

#include "tessel/auto_schedule/measure/Measure.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/driver/DefaultSchedule.h"

namespace tessel::testing {

/// matmul n x n x n in float32 for this machine.
inline SearchTask small_matmul_task(int64_t n = 64) {
    return SearchTask("matmul", {n, n, n, Float(32)}, Target("llvm -num-cores=2"));
}

/// The operator library's schedule of the task: a candidate known to be right.
inline Schedule good_schedule(const SearchTask& task) {
    return op::default_schedule(task.dag().outputs, task.target());
}

/// Short limits and timing, so that hangs and timeouts cost little.
inline MeasureOptions fast_options() {
    MeasureOptions o;
    o.min_repeat_ms = 5;
    o.build_timeout_seconds = 5;
    o.run_timeout_seconds = 2;
    o.build_threads = 2;
    return o;
}

}  // namespace tessel::testing
