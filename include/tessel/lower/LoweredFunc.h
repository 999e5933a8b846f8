// The result of lowering: one function over global buffers.
#pragma once

#include <string>
#include <vector>

#include "tessel/ir/IR.h"

namespace tessel {

/// A lowered kernel: `body` reads and writes the `args` buffers (global scope, compact row-major,
/// in the order the caller passes them) and allocates everything else itself. Before storage
/// flattening the body accesses them with BufferLoad/BufferStore; afterwards with Load/Store on
/// each buffer's data variable (element indices into the compact row-major layout).
struct LoweredFunc {
    std::string name;
    std::vector<Buffer> args;
    Stmt body;
};

}  // namespace tessel
