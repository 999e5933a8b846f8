// storage_swizzle and storage_align on one stage, in either order: padded rows would break the
// swizzle's row arithmetic, and a swizzled layout needs no padding.
#include "correctness/SwizzledCopy.h"
#include "error/ExpectScheduleError.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSwizzleWithStorageAlign, Throws) {
    tessel::testing::SwizzledCopy aligned(32, 32), swizzled(32, 32);
    aligned.s.storage_align(aligned.shared, 0, 32, 4);
    expect_schedule_error([&] { aligned.s.storage_swizzle(aligned.shared); },
                          {"storage_swizzle", "stage 'A.shared'", "storage dimension 0 (i0)",
                           "padded (storage_align)", "use one or the other"});
    swizzled.s.storage_swizzle(swizzled.shared);
    expect_schedule_error([&] { swizzled.s.storage_align(swizzled.shared, 0, 32, 4); },
                          {"storage_align", "stage 'A.shared'", "it is swizzled (storage_swizzle)",
                           "use one or the other"});
}
