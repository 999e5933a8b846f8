// A helper for tests/error: run a statement that must throw exactly one CompileError, and check
// that its message names what is at fault.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string>

#include "tessel/Error.h"

namespace tessel::testing {

/// Runs `f`; expects a CompileError whose message contains every string of `parts`. Any other
/// exception, or none, fails the test.
template <typename F>
void expect_compile_error(F&& f, std::initializer_list<std::string> parts) {
    try {
        f();
    } catch (const CompileError& e) {
        for (const std::string& p : parts)
            EXPECT_PRED_FORMAT2(::testing::IsSubstring, p, std::string(e.what()));
        return;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected a CompileError, got another exception: " << e.what();
        return;
    }
    ADD_FAILURE() << "expected a CompileError, nothing was thrown";
}

}  // namespace tessel::testing
