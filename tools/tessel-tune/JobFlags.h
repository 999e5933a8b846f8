// The job fields `tessel-tune run` takes as flags, each overriding the job file's: TuningOptions'
// top-level and search fields and MeasureOptions' measure fields, as their structs describe them
// (TuningOptions::fields, MeasureOptions::fields; tessel/Options.h). `--population 64` is the
// job's "search": {"population": 64}; a flag is checked as the job's field is.
#pragma once

#include <CLI/CLI.hpp>
#include <deque>
#include <string>

namespace tessel::tune_tool {

class JobFlags {
public:
    /// Adds a flag per field to `cmd` ("--measurements-per-round", "--min-repeat-ms", ...).
    void add_to(CLI::App& cmd);
    /// The flags given, as a JSON object in the job's shape ("{}" when none was).
    std::string overrides_json() const;

private:
    enum class Kind { Integer, Number, Flag, Text };
    struct Flag {
        std::string group;  // "" (top level), "search" or "measure"
        std::string name;
        Kind kind;
        std::string value;
        CLI::Option* option = nullptr;
    };
    struct Adder;
    std::deque<Flag> flags_;  // stable addresses: CLI11 writes into `value`
};

}  // namespace tessel::tune_tool
