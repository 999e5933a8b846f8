// The runtime signature of a lowered function: shared by every backend's build().
#pragma once

#include <string>
#include <vector>

#include "tessel/codegen/Build.h"
#include "tessel/lower/LoweredFunc.h"
#include "tessel/runtime/KernelSignature.h"

namespace tessel::internal {

/// The runtime dtype of IR type `t`; CompileError (naming `backend`) for a handle.
DataType runtime_type(Type t, const char* backend);

/// The signature of `f` on `device` (argument access from the body's loads and stores, in-place
/// flags from `options`, symbolic extents by name) and the symbolic extent variables in
/// shape_vars() order. CompileError (naming `backend`) for an in-place name that is no argument,
/// or an extent that is neither a constant nor a variable.
KernelSignature make_signature(const LoweredFunc& f, const BuildOptions& options, DeviceType device,
                               const char* backend, std::vector<Var>* shape_vars);

}  // namespace tessel::internal
