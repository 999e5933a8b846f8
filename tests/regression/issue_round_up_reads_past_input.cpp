// A round_up split of a stage that reads an input at its own indices computed the padded points
// by reading the input past its end (A[i, 23] of a 23-column A). Padded points now recompute the
// region's last point into the padded storage.
#include <gtest/gtest.h>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

TEST(IssueRoundUpReadsPastInput, PaddedPointsStayInsideTheInput) {
    Tensor A = placeholder({5, 23}, Float(32), "A");
    Tensor B = compute(
        {5, 23}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    Tensor C = compute(
        {5, 23}, [&](Var i, Var j) { return B(i, j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    s.split(s.stage_of(B), 1, 4, TailStrategy::RoundUp);
    LoweredFunc f = lower(s, {A, C});
    HostArray a = HostArray::random(Float(32), {5, 23}, 1), out(Float(32), {5, 23});
    run_lowered(f, {&a, &out});
    EXPECT_CLOSE_TO_REFERENCE(out, evaluate_reference({C}, {{A, a}})[0], tolerance_for(Float(32)));
}
