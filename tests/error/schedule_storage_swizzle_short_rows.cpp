// storage_swizzle of a tile whose rows are 16 bytes (one chunk: nothing to permute) or not a
// whole number of 16-byte chunks: refused when the schedule is lowered.
#include "correctness/SwizzledCopy.h"
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSwizzleShortRows, Throws) {
    for (int cols : {4, 6}) {
        tessel::testing::SwizzledCopy k(32, cols);
        k.s.storage_swizzle(k.shared);
        expect_schedule_error(
            [&] {
                lower(k.s, {k.A, k.O});
            },
            {"storage_swizzle", "stage 'A.shared'",
             "rows of " + std::to_string(cols) + " elements (" + std::to_string(4 * cols) +
                 " bytes)",
             "a multiple of 16 bytes and at least 32", "loop nest of 'A.shared'"});
    }
}
