// A schedule record written in a format version this tessel does not read.
#include "error/ExpectScheduleError.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_schedule_error;

TEST(ErrorRecordNewerFormat, Throws) {
    Tensor A = placeholder({16, 12}, Float(32), "A");
    Tensor B = compute(
        {16, 12}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    s.split(s.stage_of(B), 0, 4);
    std::string record = s.to_json();
    std::string version = "\"format_version\":" + std::to_string(kScheduleFormatVersion);
    ASSERT_NE(record.find(version), std::string::npos) << record;
    std::string newer = record;
    newer.replace(newer.find(version), version.size(),
                  "\"format_version\":" + std::to_string(kScheduleFormatVersion + 1));
    expect_schedule_error([&] { schedule_from_json({B}, newer); },
                          {"schedule_from_json", "format version", "newer tessel"});
    std::string text = record;
    text.replace(text.find(version), version.size(), "\"format_version\":\"one\"");
    expect_schedule_error([&] { schedule_from_json({B}, text); },
                          {"schedule_from_json", "format_version is not an integer"});
}
