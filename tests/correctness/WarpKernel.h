// Hand-built kernels of one block for the tensor-core intrinsics (ir/IR.h) in the SPMD
// interpreter: a threadIdx.x loop of `lanes` threads around `body`, tile operands of buffers.
#pragma once

#include <vector>

#include "tessel/ir/Fragment.h"
#include "tessel/ir/IR.h"
#include "tessel/ir/IROperator.h"

namespace tessel::testing {

inline Expr i32(int64_t v) {
    return make_const(Int(32), v);
}

/// The tile operand (origin, next row) of a `cols`-column buffer at (row, col).
inline std::vector<Expr> tile(const Var& buf, Type t, int64_t cols, Expr row = i32(0),
                              int64_t col = 0) {
    Expr origin = row * i32(cols) + i32(col);
    return {Load::make(t, buf, origin), Load::make(t, buf, origin + i32(cols))};
}

inline Stmt call(Intrinsic op, std::vector<Expr> head, std::vector<std::vector<Expr>> tiles,
                 std::vector<Expr> tail = {}) {
    for (auto& t : tiles) head.insert(head.end(), t.begin(), t.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return Evaluate::make(Call::make(op, head));
}

inline Expr kind(FragmentKind k) {
    return i32(static_cast<int64_t>(k));
}

/// for tx in thread_binding(0, lanes, "threadIdx.x"): body
inline Stmt lanes_loop(const Var& tx, int64_t lanes, Stmt body) {
    return For::make(tx, i32(0), i32(lanes), ForKind::ThreadBound, std::move(body), "threadIdx.x");
}

}  // namespace tessel::testing
