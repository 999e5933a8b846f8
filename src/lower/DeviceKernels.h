// What the host/device split (lower/SplitHostDevice.h) and the CUDA backend both read of a
// kernel: thread tags, the launch geometry and the stage a kernel computes.
#pragma once

#include <array>
#include <string>
#include <unordered_set>

#include "tessel/ir/IR.h"

namespace tessel::internal {

/// The index of a thread tag: blockIdx.x/y/z → 0/1/2 and threadIdx.x/y/z → 0/1/2; -1 otherwise.
int thread_tag_axis(const std::string& tag);
/// True for blockIdx.x/y/z.
bool is_block_tag(const std::string& tag);
/// True for a For bound to blockIdx.* or threadIdx.* (the root of a kernel).
bool is_kernel_root(const Stmt& s);

/// A kernel's grid and block extents (int64; 1 where no loop is bound to the axis).
struct KernelGeometry {
    std::array<Expr, 3> grid;
    std::array<Expr, 3> block;
};

/// The geometry of kernel statement `kernel` (as split_host_device leaves it: host lets, ifs and
/// asserts around the kernel's root loop): each axis's extent is the largest of the loops bound
/// to it, with the wrapping lets substituted.
KernelGeometry kernel_geometry(const Stmt& kernel);

/// The buffer the statement's root stage stores to: the last store to a buffer of `global` (the
/// stages computed inside a kernel come before its root's store), else the last store at all;
/// "?" when it stores nothing.
std::string kernel_stage(const Stmt& s, const std::unordered_set<const Variable*>& global);

}  // namespace tessel::internal
