// tessel's error types.
//
// Two channels (docs/design.md, "How the code should read"):
//  - user mistakes are typed exceptions thrown when the offending call is made: DSLError for the
//    tensor-expression language, ScheduleError for schedule primitives, CompileError for code
//    generation, RuntimeError for running kernels. Their messages name the call, the tensor or
//    stage, and the axes at fault.
//  - broken internal invariants throw InternalError through TESSEL_CHECK, with file and line.
//    A user mistake that surfaces as an InternalError is a bug in tessel.
//
// Python maps DSLError to TypeError, ScheduleError to ValueError, and the others to RuntimeError.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessel {

/// Base of every error tessel throws.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Misuse of the tensor-expression DSL: wrong index count, mismatched dtypes, misplaced Reduce ...
class DSLError : public Error {
public:
    explicit DSLError(const std::string& message) : Error(message) {}
};

/// Misuse of a schedule primitive, reported when the primitive is called.
class ScheduleError : public Error {
public:
    explicit ScheduleError(const std::string& message) : Error(message) {}
};

/// A program tessel cannot compile for the requested target.
class CompileError : public Error {
public:
    explicit CompileError(const std::string& message) : Error(message) {}
};

/// A failure while running a compiled kernel or evaluating a program (bad arguments,
/// out-of-bounds).
class RuntimeError : public Error {
public:
    explicit RuntimeError(const std::string& message) : Error(message) {}
};

/// A broken internal invariant: always a bug in tessel, never the user's fault.
class InternalError : public Error {
public:
    explicit InternalError(const std::string& message) : Error(message) {}
};

namespace internal {

/// Builds a message with operator<< and throws it as E when destroyed. Used by the macros below.
template <typename E>
class ErrorBuilder {
public:
    ErrorBuilder() = default;
    ErrorBuilder(const char* file, int line, const char* condition) {
        stream_ << "Internal error at " << file << ":" << line << ": check failed: " << condition
                << "\n";
    }
    template <typename T>
    ErrorBuilder& operator<<(const T& value) {
        stream_ << value;
        return *this;
    }
    [[noreturn]] void raise() { throw E(stream_.str()); }

private:
    std::ostringstream stream_;
};

/// Lets a streamed ErrorBuilder expression end in a throw inside a macro.
struct Raiser {
    template <typename E>
    [[noreturn]] void operator&(ErrorBuilder<E>& builder) {
        builder.raise();
    }
    template <typename E>
    [[noreturn]] void operator&(ErrorBuilder<E>&& builder) {
        builder.raise();
    }
};

}  // namespace internal
}  // namespace tessel

/// Internal invariant: `TESSEL_CHECK(x > 0) << "more context";` throws InternalError if false.
/// (A `while` rather than `if/else`: the raiser never returns, and no dangling-else arises.)
#define TESSEL_CHECK(cond)               \
    while (__builtin_expect(!(cond), 0)) \
    ::tessel::internal::Raiser() &       \
        ::tessel::internal::ErrorBuilder<::tessel::InternalError>(__FILE__, __LINE__, #cond)

/// Throws a typed user error: `TESSEL_THROW(DSLError) << "compute 'C': ...";`
#define TESSEL_THROW(ErrorType) \
    ::tessel::internal::Raiser() & ::tessel::internal::ErrorBuilder<::tessel::ErrorType>()
