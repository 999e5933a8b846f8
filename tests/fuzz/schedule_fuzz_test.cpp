// Fuzzes the schedule core: random step lists (split, fuse, reorder, tile, annotations, pragmas,
// compute locations, caches with storage layouts, follow_split, rfactor; legal or not) on a suite of operators, each lowered with bounds checks, run
// in the loop-IR interpreter and compared with the reference interpreter, and replayed directly
// and through JSON to byte-identical IR (support/FuzzCase.h). Prints the seed and, per primitive,
// how many were applied and rejected. A failing case is minimised and written as a regression test
// (support/FuzzDriver.h lists the TESSEL_FUZZ_* environment variables; TESSEL_FUZZ_CASES=10000
// is the long mode).
#include <gtest/gtest.h>

#include <cstdio>

#include "fuzz/support/FuzzDriver.h"

using namespace tessel::fuzz;

TEST(ScheduleFuzz, RandomStepListsMatchTheReference) {
    FuzzConfig config = FuzzConfig::from_env();
    std::printf("schedule fuzz: seed %llu, %lld cases (TESSEL_FUZZ_SEED, TESSEL_FUZZ_CASES)\n",
                static_cast<unsigned long long>(config.seed), static_cast<long long>(config.cases));
    FuzzReport report = run_fuzz(config);
    std::printf("%s", report.summary().c_str());
    for (const FuzzFailure& f : report.first_failures) {
        std::string saved = save_failure(f, config.seed, config.save_dir);
        std::printf("FAILURE %s", saved.c_str());
        ADD_FAILURE() << saved;
    }
    EXPECT_EQ(report.failures, 0);
    std::fflush(stdout);
}
