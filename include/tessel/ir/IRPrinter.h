// Printing IR as text that reads like a Python loop nest.
//
//   for i in parallel(0, 128):
//       allocate acc: float32[4] (local)
//       for k in range(0, 64):
//           C[i, j] = C[i, j] + A[i, k] * B[k, j]
//
// The format, node by node:
//  - For: `for i in range(min, end):` for serial loops (end = min + extent), `parallel(...)`,
//    `vectorized(...)`, `unrolled(...)`, and `thread_binding(min, end, "threadIdx.x")`; the body is
//    indented by 4 spaces. IfThenElse: `if c:` / `elif c:` / `else:`. AttrStmt: `attr key = v:`.
//  - LetStmt (`let x = v`) and Allocate (`allocate buf: float32[128, 4] (shared)`) scope over the
//    statements printed after them at the same indentation; when more statements follow that are
//    outside that scope, a `# end let x` / `# end allocate buf` line closes it.
//  - AssertStmt: `assert(cond, "msg")`; Evaluate: the expression.
//  - BufferLoad/BufferStore/TensorRead: `C[i, j]`; flat Load/Store: `buf[idx]`, with a predicate
//    `buf[idx, pred=p]`.
//  - Constants: int32 `5`, other integer types `int64(5)`, `uint8(3)`; float32 `1.5f`, float64
//    `1.5`, float16/bfloat16 `float16(1.5)`, non-finite floats `float32(inf)`, `float64(nan)`;
//    bool `True`/`False`. Floats print the shortest digits that read back to the same value.
//  - Operators: `+ - *`, float Div `/`, FloorDiv `//`, FloorMod `%`, integer Div/Mod as
//    `truncdiv(a, b)` / `truncmod(a, b)`, float Mod `fmod(a, b)`, comparisons, `and`, `or`, `not`,
//    with Python's precedences and only the parentheses they need. Cast: `float32(x)`; Select:
//    `select(c, t, f)`; Ramp: `ramp(base, stride, lanes)`; Broadcast: `broadcast(v, lanes)`;
//    Call: `exp(x)`; Let: `let x = v in body` (parenthesised inside other expressions).
//  - Reduce: `sum(A[i, k], axis=[k in range(0, 64)], where=c)` with the combiner's name; a
//    multi-value reducer lists every source and adds `value_index=i`.
//
// Names are labels, not identities (docs/design.md): within one printer, distinct variables that
// share a name print as `i`, `i_1`, `i_2` ... in order of first appearance, and so do buffers and
// tensors (each kind has its own namespace, so a Buffer `A` and its data variable `A` both print
// as `A`).
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "tessel/ir/IR.h"

namespace tessel {

/// Prints several IR trees with one consistent set of unique names (e.g. a loop nest and the
/// expressions an error message refers to).
class IRPrinter {
public:
    /// Prints to `os`, which must outlive the printer.
    explicit IRPrinter(std::ostream& os);
    ~IRPrinter();
    IRPrinter(const IRPrinter&) = delete;
    IRPrinter& operator=(const IRPrinter&) = delete;

    /// Prints an expression on the current line (no newline).
    void print(const Expr& e);
    /// Prints a statement, one line per statement, each ending in a newline, indented by
    /// `indent` levels of 4 spaces.
    void print(const Stmt& s, int indent = 0);
    /// Prints the (unique) name of a buffer or tensor (a variable prints through print(Expr)).
    void print(const Buffer& b);
    void print(const Tensor& t);

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

/// Prints an expression (see the format above); an undefined handle prints as `<undefined>`.
std::ostream& operator<<(std::ostream& os, const Expr& e);
/// Prints a statement as an indented loop nest, every line ending in a newline.
std::ostream& operator<<(std::ostream& os, const Stmt& s);
/// Prints a tensor by name.
std::ostream& operator<<(std::ostream& os, const Tensor& t);
/// Prints an operation by name.
std::ostream& operator<<(std::ostream& os, const Operation& op);
/// Prints a buffer's declaration: `A: float32[128, 64]`, with ` (shared)` for non-global scopes.
std::ostream& operator<<(std::ostream& os, const Buffer& b);

/// The expression as printed by operator<<.
std::string to_string(const Expr& e);
/// The statement as printed by operator<<.
std::string to_string(const Stmt& s);

}  // namespace tessel
