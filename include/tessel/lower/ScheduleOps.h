// ScheduleOps: the loop nests of a schedule, before any other lowering pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/lower/LoweredFunc.h"
#include "tessel/schedule/InferBounds.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// Which function of a schedule to build: the kernel, or the one-time transform of its constant
/// operands (Schedule::pre_transform).
enum class SchedulePart : uint8_t {
    Kernel,        ///< every stage but the pre-transformed ones; their buffers are arguments
    PreTransform,  ///< the pre-transformed stages alone: weights in, laid-out buffers out
};

/// Builds every stage's loop nest from the schedule (after bound inference): leaf loops in order
/// with their annotations as For kinds, inlined stages substituted, stages computed at a loop
/// emitted at the start of its body with their storage allocated there, reductions as an
/// initialisation nest (over the data-parallel loops inside the first reduction loop) and an
/// update nest, split guards as `if likely(cond)` around the innermost statements.
///
/// A sum whose term reads a zero padding as a factor (a convolution's window over its padded
/// input: the padding stage read, or its `if_then_else(c, x, 0)` inlined) updates under the
/// padding's condition `if (c)`, in a schedule without thread bindings (a CPU's): the taps on the
/// padding are skipped rather than multiplied by zero. Conjuncts of `c` on the stage's vectorized
/// loops are left out; partition_loops takes the rest out of the loops (docs/operators.md,
/// "Taps on the padding"). A skipped tap whose other factor is infinite or NaN would have added
/// NaN: the result then differs from the definition's, as oneDNN's and PyTorch's convolutions,
/// which never multiply the padding, do. `skip_padding_taps` false leaves the guard out
/// (LowerOptions::skip_padding_taps).
///
/// `args` lists the tensors the caller passes (every placeholder the DAG reads, every output, in
/// any order; other stages may be listed too and are then written to the caller's buffer).
/// The result accesses buffers with BufferLoad/BufferStore. Throws ScheduleError for arguments
/// that omit a needed placeholder or output, or list a tensor of another DAG, or twice.
///
/// `bounds`, when not empty, is infer_bounds(s) computed by the caller (lower() passes on what
/// verify_schedule inferred), saving bound inference, the largest part of its cost.
///
/// With pre-transformed stages, the Kernel part takes each one's buffer (named `<weight>_packed`,
/// its storage layout over the whole weight) in its weight's place in `args`; the PreTransform
/// part takes the weights (in `args`' order) then their laid-out buffers, and computes only
/// those stages (ScheduleError when there are none, or when a stage reads a weight directly
/// besides its transformed copy or the copy does not cover the whole weight).
LoweredFunc schedule_ops(const Schedule& s, const std::vector<Tensor>& args,
                         const std::string& name, std::vector<StageBounds> bounds = {},
                         SchedulePart part = SchedulePart::Kernel, bool skip_padding_taps = true);

}  // namespace tessel
