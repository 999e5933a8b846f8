// Writes minimised fuzzer failures as regression tests (see RegressionWriter.h).
#include "fuzz/support/RegressionWriter.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tessel::fuzz {

namespace {

std::string camel_case(const std::string& slug) {
    std::string r;
    bool upper = true;
    for (char ch : slug) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) {
            upper = true;
            continue;
        }
        r += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
        upper = false;
    }
    return r;
}

// The failure as comment lines, at most 12 of them, each cut to fit 100 columns.
std::string comment_lines(const std::string& text) {
    std::istringstream in(text);
    std::ostringstream out;
    std::string line;
    for (int n = 0; std::getline(in, line) && n < 12; ++n) {
        if (line.size() > 94) line = line.substr(0, 91) + "...";
        out << "//   " << line << "\n";
    }
    return out.str();
}

// The call that runs the case, on one line when it fits in 100 columns (as clang-format would).
std::string check_call(const RegressionCase& c) {
    std::string lhs = "    tessel::fuzz::CaseOutcome r =";
    std::string call = "tessel::fuzz::check_steps_json(\"" + c.op_name + "\", steps, " +
                       std::to_string(c.input_seed) + ");";
    if (lhs.size() + 1 + call.size() <= 100) return lhs + " " + call + "\n";
    return lhs + "\n        " + call + "\n";
}

}  // namespace

std::string regression_slug(const std::string& op_name, const std::string& category,
                            const std::vector<Step>& steps) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (char ch : steps_to_json(steps))
        h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08llx", static_cast<unsigned long long>(h & 0xffffffffu));
    return "fuzz_" + op_name + "_" + category + "_" + hex;
}

std::string steps_to_json_lines(const std::vector<Step>& steps) {
    std::string r = "[\n";
    for (size_t i = 0; i < steps.size(); ++i) {
        std::string one = steps_to_json({steps[i]});
        r += "  " + one.substr(1, one.size() - 2) + (i + 1 < steps.size() ? ",\n" : "\n");
    }
    return r + "]";
}

std::string regression_test_source(const RegressionCase& c) {
    std::ostringstream os;
    os << "// Regression test from the schedule fuzzer (tests/fuzz/schedule_fuzz_test.cpp): the\n"
       << "// minimised step list below, applied to the suite operator '" << c.op_name
       << "', failed:\n"
       << comment_lines(c.failure)
       << "// The case must lower with bounds checks, run in bounds, match the reference "
          "interpreter\n"
       << "// and replay (directly and through JSON) to byte-identical IR.\n"
       << "#include <gtest/gtest.h>\n\n"
       << "#include \"fuzz/support/FuzzCase.h\"\n\n"
       << "TEST(Regression, " << camel_case(c.slug) << ") {\n"
       << "    const char* steps = R\"json(" << steps_to_json_lines(c.steps) << ")json\";\n"
       << check_call(c) << "    EXPECT_EQ(r.verdict, tessel::fuzz::Verdict::Pass)\n"
       << "        << tessel::fuzz::verdict_name(r.verdict) << \" (\" << r.category << \"): \" << "
          "r.message;\n"
       << "}\n";
    return os.str();
}

std::string write_regression_test(const std::string& dir, const RegressionCase& c) {
    std::filesystem::create_directories(dir);
    std::string path = (std::filesystem::path(dir) / ("issue_" + c.slug + "_test.cpp")).string();
    std::ofstream out(path);
    out << regression_test_source(c);
    if (!out) throw std::runtime_error("fuzz: cannot write " + path);
    return path;
}

}  // namespace tessel::fuzz
