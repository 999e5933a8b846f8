// A helper for tests/error: run a statement that must throw exactly one ScheduleError, and check
// that its message names the primitive, the stage and the axes, and shows the loop nest.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string>

#include "tessel/Error.h"

namespace tessel::testing {

/// Runs `f`; expects a ScheduleError whose message contains every string of `parts`. Any other
/// exception (an InternalError included), or none, fails the test.
template <typename F>
void expect_schedule_error(F&& f, std::initializer_list<std::string> parts) {
    try {
        f();
    } catch (const ScheduleError& e) {
        for (const std::string& p : parts)
            EXPECT_PRED_FORMAT2(::testing::IsSubstring, p, std::string(e.what()));
        return;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected a ScheduleError, got another exception: " << e.what();
        return;
    }
    ADD_FAILURE() << "expected a ScheduleError, nothing was thrown";
}

}  // namespace tessel::testing
