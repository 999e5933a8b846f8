// The schedule fuzzer's main loop (see FuzzDriver.h).
#include "fuzz/support/FuzzDriver.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "fuzz/support/Minimize.h"
#include "fuzz/support/RegressionWriter.h"
#include "tessel/Error.h"

namespace tessel::fuzz {

namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::string first_line(const std::string& s) {
    return s.substr(0, s.find('\n'));
}

// Applies random primitives; a primitive that fails other than by ScheduleError is the outcome.
CaseOutcome generate(StepGenerator& gen, Schedule& s, int count) {
    try {
        gen.apply_random(s, count);
        return CaseOutcome{};
    } catch (const FuzzCheckFailed& e) {
        return CaseOutcome{Verdict::Failure, e.category, e.what()};
    } catch (const InternalError& e) {
        return CaseOutcome{Verdict::Failure, "primitive_internal_error", e.what()};
    } catch (const std::exception& e) {
        return CaseOutcome{Verdict::Failure, "primitive_exception", e.what()};
    }
}

void record(FuzzReport& r, const std::string& op, int64_t index, const Schedule& s,
            const std::string& attempt, const CaseOutcome& o) {
    switch (o.verdict) {
        case Verdict::Pass: ++r.passed; return;
        case Verdict::Budget: ++r.budget; return;
        case Verdict::LateReject:
            ++r.late_rejects;
            ++r.late_reject_reasons[op + ": " + first_line(o.message)];
            return;
        default: break;
    }
    ++r.failures;
    for (const FuzzFailure& f : r.first_failures)
        if (f.op_name == op && f.outcome.category == o.category) return;
    r.first_failures.push_back(FuzzFailure{op, index, s.steps(), attempt, o});
}

}  // namespace

FuzzConfig FuzzConfig::from_env() {
    FuzzConfig c;
    if (const char* v = std::getenv("TESSEL_FUZZ_CASES")) c.cases = std::atoll(v);
    if (const char* v = std::getenv("TESSEL_FUZZ_SEED")) c.seed = std::strtoull(v, nullptr, 0);
    if (const char* v = std::getenv("TESSEL_FUZZ_SAVE_DIR")) c.save_dir = v;
    return c;
}

FuzzReport run_fuzz(const FuzzConfig& config) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<PreparedOperator> ops;
    for (const std::string& name : operator_names())
        ops.push_back(prepare_operator(name, config.seed));
    FuzzReport r;
    for (int64_t k = 0; k < config.cases; ++k) {
        const PreparedOperator& p = ops[static_cast<size_t>(k) % ops.size()];
        StepGenerator gen(splitmix64(config.seed + static_cast<uint64_t>(k)), &r.stats);
        Schedule s = create_schedule(p.op.outputs);
        CaseOutcome o = generate(gen, s, 1 + gen.pick(config.max_attempts));
        std::string attempt = o.failed() ? gen.last_attempt() : "";
        if (!o.failed()) o = check_schedule(p, s);
        ++r.cases;
        record(r, p.op.name, k, s, attempt, o);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

std::string FuzzReport::summary() const {
    std::ostringstream os;
    int64_t attempts = stats.total_applied() + stats.total_rejected();
    char line[200];
    std::snprintf(line, sizeof line,
                  "schedule fuzz: %lld cases in %.1f s: %lld passed, %lld failed, %lld rejected by "
                  "lower(), %lld over the step budget\n",
                  (long long)cases, seconds, (long long)passed, (long long)failures,
                  (long long)late_rejects, (long long)budget);
    os << line;
    std::snprintf(line, sizeof line, "primitives: %lld attempted, rejection rate %.1f%%\n",
                  (long long)attempts,
                  attempts ? 100.0 * double(stats.total_rejected()) / double(attempts) : 0.0);
    os << line << stats.report();
    if (!late_reject_reasons.empty())
        os << "rejected by lower() (ScheduleError after every step applied):\n";
    for (const auto& [reason, n] : late_reject_reasons) os << "  " << n << "x " << reason << "\n";
    return os.str();
}

std::string save_failure(const FuzzFailure& f, uint64_t input_seed, const std::string& dir) {
    std::ostringstream os;
    os << "case " << f.case_index << " (" << f.op_name << ") " << verdict_name(f.outcome.verdict)
       << " [" << f.outcome.category << "]: " << f.outcome.message << "\n";
    if (!f.attempt.empty()) {
        // A primitive failed itself: the repro is the steps before it plus that call.
        os << "  while attempting " << f.attempt << " after steps:\n"
           << steps_to_json_lines(f.steps) << "\n";
        return os.str();
    }
    PreparedOperator p = prepare_operator(f.op_name, input_seed);
    std::vector<Step> steps = f.steps;
    if (check_steps(p, steps).category == f.outcome.category)
        steps = minimize_case(p, steps, f.outcome.category);
    RegressionCase rc{regression_slug(f.op_name, f.outcome.category, steps), f.op_name, input_seed,
                      steps, f.outcome.message};
    std::string path = write_regression_test(dir, rc);
    os << "  minimised to " << steps.size() << " of " << f.steps.size() << " steps, saved as "
       << std::filesystem::absolute(path).string() << ":\n"
       << steps_to_json_lines(steps) << "\n";
    return os.str();
}

}  // namespace tessel::fuzz
