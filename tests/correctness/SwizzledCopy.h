// A block that copies a rows x cols tile of A into shared memory (one thread per row, `vector`
// elements per access) and writes it out transposed, O[j, i] = A[i, j] + 1: every thread reads
// what other threads wrote, so a layout the reads and writes disagree on gives wrong results and
// a missing barrier is a race. Used by the storage_swizzle correctness and error tests.
#pragma once

#include "tessel/ir/IROperator.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

namespace tessel::testing {

struct SwizzledCopy {
    Tensor A, O;
    Schedule s;
    int shared = -1;  ///< the shared copy's stage (A.shared)
    SwizzledCopy(int rows, int cols, Type t = Float(32), int vector = 1) : s(make(rows, cols, t)) {
        int o = s.stage_of(O);
        shared = s.cache_read(s.stage_of(A), "shared", {o});
        o = s.stage_of(O);
        s.split(o, 0, cols);  // O: block (extent 1), j, i
        s.bind(o, 0, IterAnnotation::BlockX);
        s.bind(o, 2, IterAnnotation::ThreadX);
        s.compute_at(shared, o, 0);
        s.split(shared, 1, vector);  // A.shared: i, j.outer, j.inner
        s.fuse(shared, {0, 1});
        s.split(shared, 0, rows);  // the copies, `rows` threads
        s.bind(shared, 1, IterAnnotation::ThreadX);
        if (vector > 1) s.vectorize(shared, 2);
    }

private:
    Schedule make(int rows, int cols, Type t) {
        A = placeholder({rows, cols}, t, "A");
        O = compute(
            {cols, rows}, [&](Var j, Var i) { return A(i, j) + make_const(t, 1); }, "O");
        return create_schedule({O});
    }
};

}  // namespace tessel::testing
