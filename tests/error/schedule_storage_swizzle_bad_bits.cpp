// storage_swizzle with bits outside 1..3.
#include "correctness/SwizzledCopy.h"
#include "error/ExpectScheduleError.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSwizzleBadBits, Throws) {
    tessel::testing::SwizzledCopy k(32, 32);
    size_t steps = k.s.steps().size();
    for (int bits : {0, 4})
        expect_schedule_error([&] { k.s.storage_swizzle(k.shared, bits); },
                              {"storage_swizzle", "stage 'A.shared'",
                               "bits " + std::to_string(bits) + " must be 1, 2 or 3"});
    EXPECT_EQ(k.s.steps().size(), steps);
}
