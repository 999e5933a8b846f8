// The tuning-log reader treats a log as untrusted input: thousands of mutated lines (truncated,
// bytes flipped, fields of the wrong type, NaN and huge numbers, deep nesting, a 10 MB line)
// never crash it or make it throw; each line is either a record that passes every check or is
// skipped and counted.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "tessel/auto_schedule/records/Record.h"

using namespace tessel;

namespace {

std::string good_line() {
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                    Target("llvm -num-cores=2"));
    Schedule s = task.initial_schedule();
    s.split(2, 0, 4);
    MeasureResult r;
    r.costs = {1e-3, 1.1e-3};
    r.timestamp = 1.7e9;
    return record_to_json(make_record(task, {s, CandidateOrigin::Random}, r, 7, 2));
}

// Replaces the value after `"key":` with `value`.
std::string with_value(std::string line, const std::string& key, const std::string& value) {
    size_t at = line.find("\"" + key + "\":");
    if (at == std::string::npos) return line;
    at += key.size() + 3;
    size_t end = at;
    int depth = 0;
    bool in_string = false;
    for (; end < line.size(); ++end) {
        char c = line[end];
        if (in_string) {
            if (c == '\\')
                ++end;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '[' || c == '{')
            ++depth;
        else if ((c == ']' || c == '}') && depth-- == 0)
            break;
        else if (c == ',' && depth == 0)
            break;
    }
    return line.substr(0, at) + value + line.substr(end);
}

std::string mutate(const std::string& good, std::mt19937_64& rng) {
    static const std::vector<std::string> keys = {
        "format_version", "task",      "dag_hash",      "workload",  "params",       "target",
        "hardware",       "num_cores", "schedule",      "steps",     "workload_key", "result",
        "error_code",     "costs",     "build_seconds", "timestamp", "provenance",   "seed",
        "round",          "origin",    "tessel_version"};
    static const std::vector<std::string> values = {"null",
                                                    "true",
                                                    "\"x\"",
                                                    "[]",
                                                    "{}",
                                                    "-1",
                                                    "1e999",
                                                    "-1e999",
                                                    "NaN",
                                                    "Infinity",
                                                    "18446744073709551616",
                                                    "-9223372036854775809",
                                                    "3.5",
                                                    "[NaN]",
                                                    "[1e308,1e308]",
                                                    "[-0.0]",
                                                    "\"\\ud800\"",
                                                    "[[[[[[[[[[]]]]]]]]]]",
                                                    "99",
                                                    "0"};
    std::string line = good;
    switch (rng() % 6) {
        case 0: return line.substr(0, rng() % line.size());  // truncated
        case 1:
            for (int i = 0, n = 1 + int(rng() % 6); i < n; ++i)
                line[rng() % line.size()] = static_cast<char>(rng() % 256);
            return line;
        case 2:
        case 3: return with_value(line, keys[rng() % keys.size()], values[rng() % values.size()]);
        case 4: return std::string(1 + rng() % 100000, '[') + line;  // deep nesting
        default: {
            size_t at = rng() % line.size();
            return line.substr(0, at) + line.substr(rng() % line.size());  // spliced
        }
    }
}

}  // namespace

TEST(RecordReaderFuzz, MutatedLinesNeverCrashTheReader) {
    std::string good = good_line();
    std::mt19937_64 rng(2024);
    std::string log;
    int lines = 0;
    for (; lines < 3000; ++lines) {
        std::string m = mutate(good, rng);
        for (char& c : m)
            if (c == '\n') c = ' ';  // one mutated line stays one line
        if (m.find_first_not_of(" \t\r") == std::string::npos)
            m = "x";  // blank lines are not counted
        log += m + "\n";
    }
    log += std::string(10 << 20, 'x') + "\n";                           // a 10 MB line
    log += "{\"format_version\":" + std::string(5 << 20, '9') + "}\n";  // a 5 MB number
    log += std::string(200000, '[') + std::string(200000, ']') + "\n";
    log += good + "\n";
    lines += 4;
    std::istringstream in(log);
    RecordLog read;
    ASSERT_NO_THROW(read = read_records(in));
    EXPECT_EQ(static_cast<int64_t>(read.records.size()) + read.skipped, lines)
        << "every non-blank line is a record or a skip";
    EXPECT_GE(read.skip_reasons["too long"], 1);
    EXPECT_GE(read.skip_reasons["nested too deeply"], 1);
    EXPECT_GT(read.skipped, 2000);
    for (const TuningRecord& r : read.records) {  // what passed is sound
        EXPECT_LE(r.dag_hash.size(), 16u);
        for (double c : r.costs) EXPECT_TRUE(std::isfinite(c) && c >= 0);
        EXPECT_TRUE(std::isfinite(r.timestamp));
        EXPECT_NO_THROW((void)r.task_key());
    }
}
