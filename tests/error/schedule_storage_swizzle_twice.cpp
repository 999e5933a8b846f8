// storage_swizzle on a stage that is already swizzled.
#include "correctness/SwizzledCopy.h"
#include "error/ExpectScheduleError.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSwizzleTwice, Throws) {
    tessel::testing::SwizzledCopy k(32, 32);
    k.s.storage_swizzle(k.shared, 2);
    expect_schedule_error([&] { k.s.storage_swizzle(k.shared); },
                          {"storage_swizzle", "stage 'A.shared'", "already swizzled (bits 2)"});
}
