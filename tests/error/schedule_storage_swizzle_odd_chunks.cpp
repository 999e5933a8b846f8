// storage_swizzle of a tile whose rows hold 3 or 12 chunks of 16 bytes: 8 phases neither divide
// nor fit them (a phase would XOR a chunk out of its row); refused when the schedule is lowered.
#include "correctness/SwizzledCopy.h"
#include "error/ExpectScheduleError.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorStorageSwizzleOddChunks, Throws) {
    for (int chunks : {3, 12}) {
        tessel::testing::SwizzledCopy k(32, 4 * chunks);
        k.s.storage_swizzle(k.shared);
        expect_schedule_error(
            [&] {
                lower(k.s, {k.A, k.O});
            },
            {"storage_swizzle", "stage 'A.shared'",
             "rows of " + std::to_string(chunks) + " 16-byte chunks",
             "with bits = 3 a row is a multiple of 8 chunks or divides 8"});
    }
}
