// vthread: virtual threads become interleaved serial work of each thread (inject_virtual_threads);
// with and without real thread bindings around them.
#include <gtest/gtest.h>

#include <sstream>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::Matmul;

TEST(ScheduleVThread, StridedThreadsInATile) {
    Matmul mm(32, 16, 6);
    Schedule s = create_schedule({mm.C});
    int c = s.stage_of(mm.C);
    s.split(c, 0, 16);  // io ii j k
    s.split(c, 1, 8);   // io ii.o ii.i j k: ii.o are 2 virtual threads 8 rows apart
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::VThread);
    s.bind(c, 2, IterAnnotation::ThreadX);
    std::string ir = expect_matches_reference(s, 6);
    EXPECT_NE(ir.find("vthread"), std::string::npos) << ir;
    std::string lowered = to_string(lower(s, {mm.A, mm.B, mm.C}));
    EXPECT_EQ(lowered.find("vthread"), std::string::npos) << lowered;
}

TEST(ScheduleVThread, WithoutThreadBindingsRunsOnTheCpu) {
    Tensor A = placeholder({24}, Float(32), "A");
    Tensor B = compute(
        {24}, [&](Var i) { return A(i) * 3.0f; }, "B");
    Schedule s = create_schedule({B});
    int b = s.stage_of(B);
    s.split(b, 0, 6);
    s.bind(b, 0, IterAnnotation::VThread);
    expect_matches_reference(s);  // also JIT-compiled: no thread-bound loop is left
}

TEST(ScheduleVThread, SharedStageAcrossVirtualThreads) {
    // The shared copy is relaxed over the vthread loop too: one copy serves both virtual threads.
    Tensor A = placeholder({8, 32}, Float(32), "A");
    Tensor As = compute(
        {8, 32}, [&](Var i, Var j) { return A(i, j); }, "As");
    Tensor B = compute(
        {8, 32}, [&](Var i, Var j) { return As(i, 31 - j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    int as = s.stage_of(As), b = s.stage_of(B);
    s.bind(b, 0, IterAnnotation::BlockX);
    s.split(b, 1, 16);  // i jo ji
    s.bind(b, 1, IterAnnotation::VThread);
    s.bind(b, 2, IterAnnotation::ThreadX);
    s.compute_at(as, b, 0);
    s.set_scope(as, StorageScope::Shared);
    s.split(as, 1, 16);  // i jo ji
    s.bind(as, 2, IterAnnotation::ThreadX);
    expect_matches_reference(s);
}

TEST(ScheduleVThread, RegisterTileSharesTheSharedFetch) {
    // Each thread computes one row of 4 outputs for each of 2 virtual threads (rows 8 apart) into
    // a local cache; the shared copy of A is fetched once per k step for both virtual threads, and
    // the local cache is one allocation of 2 x 4 elements (inject_virtual_threads interleaves
    // the virtual threads inside the k loop instead of repeating the whole body per thread).
    Matmul mm(32, 32, 16);
    Schedule s = create_schedule({mm.C});
    int cl = s.cache_write(s.stage_of(mm.C), "local"), w = cl + 1;
    s.split(w, 0, 16);  // io ii j
    s.split(w, 1, 8);   // io vt t j
    s.split(w, 3, 4);   // io vt t jo ji
    s.reorder(w, {0, 3, 1, 2, 4});
    s.bind(w, 0, IterAnnotation::BlockX);
    s.bind(w, 1, IterAnnotation::BlockY);
    s.bind(w, 2, IterAnnotation::VThread);
    s.bind(w, 3, IterAnnotation::ThreadX);
    s.compute_at(cl, w, 3);
    s.split(cl, 2, 4);  // i j ko ki
    int as = s.cache_read(0, "shared", {cl});
    cl += 1;
    s.compute_at(as, cl, 2);
    s.fuse(as, {0, 1});
    s.split(as, 0, 8);
    s.bind(as, 1, IterAnnotation::ThreadX);
    expect_matches_reference(s, 16);
    std::string lowered = to_string(lower(s, {mm.A, mm.B, mm.C}));
    EXPECT_NE(lowered.find("allocate C.local: float32[8] (local)"), std::string::npos) << lowered;
    size_t fetches = 0;  // statements storing into A.shared
    std::istringstream lines(lowered);
    for (std::string line; std::getline(lines, line);)
        fetches += line.find_first_not_of(' ') == line.find("A.shared[");
    EXPECT_EQ(fetches, 1u) << lowered;
}
