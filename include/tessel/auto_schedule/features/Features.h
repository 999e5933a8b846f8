// Ansor's program features: 164 numbers per innermost store statement, read from the IR at the
// feature point (lower() with LowerOptions::stop_after = "partition_loops": loop nests with their
// annotations, multi-dimensional BufferLoad/BufferStore accesses, before flattening).
//
//   SearchTask task("matmul", {int64_t(1024), int64_t(1024), int64_t(1024)}, Target("llvm"));
//   Schedule s = replay(task.initial_schedule(), steps);
//   FeatureMatrix m = extract_features(task, s);   // m.rows stores × kNumFeatures columns
//   const std::vector<std::string>& names = feature_names();
//
// Each row describes one BufferStore: what it computes (operation counts by kind, scaled by the
// iterations of the loops around it), how its loops are annotated (vectorize, unroll, parallel:
// count, product and length of the annotated loops, and where the innermost one sits), the GPU
// launch extents around it, how it touches each of its five most important buffers (bytes, unique
// bytes, cache lines, reuse type, distance and count, stride), its arithmetic-intensity curve,
// the allocation of the buffer it writes, and the loops around it. docs/tuning.md ("Features")
// defines every column, one line each; feature_names() lists them in column order.
//
// The values are raw counts and sizes unless `log_scale` is set (the default, what the cost
// model trains on): then every value v becomes sign(v) * log2(1 + |v|), as Ansor's are. One-hot
// and 0/1 columns keep their values (log2(2) = 1).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessel/Target.h"
#include "tessel/lower/LoweredFunc.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

class SearchTask;

/// Columns per store statement.
constexpr int kNumFeatures = 164;
/// Buffers described per store (the five with the most bytes accessed; empty slots are zeros).
constexpr int kFeatureBuffers = 5;
/// Samples of the arithmetic-intensity curve.
constexpr int kIntensityCurvePoints = 10;

/// The name of every column, in order ("float_mad", ..., "B0.bytes", ..., "auto_unroll_max_step").
const std::vector<std::string>& feature_names();

/// Features of one program: `rows` store statements (in program order) × kNumFeatures columns.
struct FeatureMatrix {
    int rows = 0;
    std::vector<float> values;  ///< row-major, rows * kNumFeatures
    /// The value at (row, column) (not bounds-checked).
    float at(int row, int column) const { return values[size_t(row) * kNumFeatures + column]; }
    /// The column index of `name` (RuntimeError naming it when there is no such feature).
    static int column(const std::string& name);
};

/// What extraction needs to know besides the IR.
struct FeatureContext {
    bool is_gpu = false;        ///< the target is a GPU (the is_gpu column)
    int cache_line_bytes = 64;  ///< Target::cache_line_bytes()
    /// Per stage name (= the name of the buffer it writes): the product of the extents of the
    /// vthread-bound loops it runs under. The feature point comes after inject_virtual_threads,
    /// which turns those loops into serial work, so they are read from the schedule.
    std::vector<std::pair<std::string, int64_t>> vthread_extents;

    /// The context of schedule `s` for `target`.
    static FeatureContext from(const Schedule& s, const Target& target);
};

/// Options of extraction.
struct FeatureOptions {
    bool log_scale = true;  ///< sign(v) * log2(1 + |v|) on every value (see the file comment)
};

/// The features of `f`, a function lowered to the feature point (stop_after = "partition_loops").
/// One row per BufferStore, in program order.
FeatureMatrix extract_features(const LoweredFunc& f, const FeatureContext& context,
                               const FeatureOptions& options = {});

/// Lowers `s` (a schedule of the task's DAG) to the feature point for the task's target and
/// extracts its features. Throws what lower() throws for a schedule that cannot be lowered for
/// the target (ScheduleError; CompileError for one the target cannot run, e.g. GPU bindings on a
/// CPU).
FeatureMatrix extract_features(const SearchTask& task, const Schedule& s,
                               const FeatureOptions& options = {});

/// The same for a schedule without a task: the kernel's arguments are the DAG's placeholders and
/// the schedule's outputs.
FeatureMatrix extract_features(const Schedule& s, const Target& target,
                               const FeatureOptions& options = {});

}  // namespace tessel
