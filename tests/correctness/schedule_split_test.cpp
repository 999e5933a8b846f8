#include <gtest/gtest.h>

#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

using namespace tessel;

TEST(ScheduleSmoke, MatmulSplitReorder) {
    Tensor A = placeholder({37, 19}, Float(32), "A");
    Tensor B = placeholder({19, 23}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, 19), "k");
    Tensor C = compute({37, 23}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule({C});
    int c = s.stage_of(C);
    s.split(c, 0, 8);
    s.split(c, 2, 4);
    s.reorder(c, {0, 2, 4, 1, 3});
    LoweredFunc f = lower(s, {A, B, C});
    std::printf("%s\n", to_string(f).c_str());
    HostArray a = HostArray::random(Float(32), {37, 19}, 1), b = HostArray::random(Float(32), {19, 23}, 2);
    HostArray out(Float(32), {37, 23});
    run_lowered(f, {&a, &b, &out});
    HostArray ref = evaluate_reference({C}, {{A, a}, {B, b}})[0];
    EXPECT_CLOSE_TO_REFERENCE(out, ref, tolerance_for(Float(32), 19));
}
