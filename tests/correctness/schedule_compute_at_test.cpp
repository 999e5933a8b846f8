#include <gtest/gtest.h>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

TEST(ScheduleSmoke, ComputeAtWithHalo) {
    Tensor A = placeholder({30, 12}, Float(32), "A");
    Tensor B = compute({30, 12}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
    Tensor C = compute({29, 10}, [&](Var i, Var j) { return B(i, j) + B(i + 1, j + 2); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C), b = s.stage_of(B);
    s.split(c, 0, 8);
    s.compute_at(b, c, 0);
    LoweredFunc f = lower(s, {A, C});
    std::printf("%s\n", to_string(f).c_str());
    HostArray a = HostArray::random(Float(32), {30, 12}, 1);
    HostArray out(Float(32), {29, 10});
    run_lowered(f, {&a, &out});
    HostArray ref = evaluate_reference({C}, {{A, a}})[0];
    EXPECT_CLOSE_TO_REFERENCE(out, ref, tolerance_for(Float(32), 1));
}
