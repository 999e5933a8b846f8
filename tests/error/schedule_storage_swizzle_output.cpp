// storage_swizzle of an output stage: its buffer is the caller's, compact row-major.
#include "correctness/SwizzledCopy.h"
#include "error/ExpectScheduleError.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSwizzleOutput, Throws) {
    tessel::testing::SwizzledCopy k(32, 32);
    expect_schedule_error([&] { k.s.storage_swizzle(k.s.stage_of(k.O)); },
                          {"storage_swizzle", "stage 'O'", "is an output"});
}
