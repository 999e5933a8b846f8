// verify_schedule: what needs the finished schedule, its bounds or the target — threads per block
// over the target's limit, shared memory over the target's limit, a shared stage outside every
// kernel, thread bindings for a CPU target — answered without lowering, and by lower() first.
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/VerifySchedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

namespace {

// C = A + 1 over n x m with the columns on threadIdx.x and the rows on blockIdx.x; A's row is
// staged in shared memory when `shared`.
struct Copy {
    Tensor A, S, C;
    Schedule s;
    Copy(int64_t n, int64_t m, bool shared)
        : A(placeholder({n, m}, Float(32), "A")),
          S(compute(
              {n, m}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "S")),
          C(compute(
              {n, m}, [&](Var i, Var j) { return S(i, j) + 1.0f; }, "C")),
          s(create_schedule({C})) {
        s.bind(2, 0, IterAnnotation::BlockX);
        s.bind(2, 1, IterAnnotation::ThreadX);
        if (!shared) return;
        s.set_scope(1, StorageScope::Shared);
        s.compute_at(1, 2, 0);
        s.bind(1, 1, IterAnnotation::ThreadX);
    }
};

}  // namespace

TEST(ErrorVerifySchedule, ThreadsOverTheTargetsLimit) {
    Copy c(4, 2048, false);
    expect_schedule_error([&] { verify_schedule(c.s, Target("cuda -arch=sm_80")); },
                          {"2048 threads", "more than the 1024"});
    expect_schedule_error(
        [&] {
            lower(c.s, {c.A, c.C}, Target("cuda -arch=sm_80"));
        },
        {"2048 threads"});
}

TEST(ErrorVerifySchedule, SharedMemoryOverTheTargetsLimit) {
    Copy small(4, 256, true);
    EXPECT_NO_THROW(verify_schedule(small.s, Target("cuda -arch=sm_80")));
    // One row of 80000 floats in shared memory: 320,000 bytes per block.
    Tensor A = placeholder({4, 80000}, Float(32), "A");
    Tensor S = compute(
        {4, 80000}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "S");
    Tensor C = compute(
        {4, 80000}, [&](Var i, Var j) { return S(i, j) + 1.0f; }, "C");
    Schedule s = create_schedule({C});
    s.split(2, 1, 1000);  // i, j.outer, j.inner
    s.bind(2, 0, IterAnnotation::BlockX);
    s.bind(2, 2, IterAnnotation::ThreadX);
    s.set_scope(1, StorageScope::Shared);
    s.compute_at(1, 2, 0);
    s.split(1, 1, 1000);
    s.bind(1, 2, IterAnnotation::ThreadX);
    expect_schedule_error(
        [&] { verify_schedule(s, Target("cuda -arch=sm_80")); },
        {"stage 'S'", "320000 bytes of shared memory per block", "more than the"});
}

TEST(ErrorVerifySchedule, SharedStageOutsideEveryKernel) {
    Copy c(8, 8, false);
    c.s.set_scope(1, StorageScope::Shared);  // S stays a root stage: no kernel holds it
    expect_schedule_error(
        [&] { verify_schedule(c.s, Target("cuda -arch=sm_80")); },
        {"verify_schedule", "stage 'S'", "shared scope", "not computed inside a kernel"});
}

TEST(ErrorVerifySchedule, ThreadBindingsForACpuTarget) {
    Copy c(8, 8, false);
    EXPECT_THROW(verify_schedule(c.s, Target("llvm")), CompileError);
    try {
        verify_schedule(c.s, Target("llvm"));
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("needs a GPU target"), std::string::npos) << e.what();
    }
}
