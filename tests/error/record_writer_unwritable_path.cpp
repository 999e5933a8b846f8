// A tuning log that cannot be opened for appending is a RuntimeError naming it.
#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/records/Record.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

TEST(ErrorRecordWriter, UnwritablePath) {
    expect_runtime_error([] { RecordWriter w("/nonexistent-folder/tuning.jsonl"); },
                         {"RecordWriter", "/nonexistent-folder/tuning.jsonl", "cannot open"});
}
