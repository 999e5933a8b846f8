// One schedule-fuzzer case: lower a schedule of a suite operator with bounds checks, run it in the
// loop-IR interpreter on random inputs, compare every output with the reference interpreter, and
// check that replaying the steps (directly and through JSON) gives byte-identical lowered IR.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/support/OperatorSuite.h"
#include "tessel/HostArray.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::fuzz {

/// An operator with its random inputs and the reference interpreter's outputs for them.
struct PreparedOperator {
    FuzzOperator op;
    uint64_t input_seed = 0;
    std::vector<HostArray> inputs;    ///< one per op.placeholders
    std::vector<HostArray> expected;  ///< one per op.outputs (evaluate_reference)
};

/// Makes the named operator and evaluates the reference on inputs drawn from `input_seed`.
PreparedOperator prepare_operator(const std::string& name, uint64_t input_seed);

/// Thrown when one of the fuzzer's own checks fails (not an exception of tessel's).
struct FuzzCheckFailed : std::runtime_error {
    FuzzCheckFailed(std::string category_, const std::string& message)
        : std::runtime_error(message), category(std::move(category_)) {}
    std::string category;  ///< e.g. "mismatch", "replay", "rejected_step_changed_schedule"
};

/// How a case ended.
enum class Verdict {
    Pass,        ///< correct results, deterministic replay
    LateReject,  ///< every primitive accepted, but lower() threw ScheduleError
    Budget,      ///< the interpreter's step budget ran out (a slow schedule, not a wrong one)
    Invalid,     ///< check_steps only: the step list does not replay (a minimiser candidate)
    Failure,     ///< a bug: wrong result, out-of-bounds access, InternalError, replay mismatch ...
};
const char* verdict_name(Verdict v);

/// The outcome of one case.
struct CaseOutcome {
    Verdict verdict = Verdict::Pass;
    std::string category;  ///< Failure: "mismatch", "runtime_error", "internal_error", "replay" ...
    std::string message;
    bool failed() const { return verdict == Verdict::Failure; }
};

/// Checks schedule `s` of `p.op`'s DAG (see the file comment).
CaseOutcome check_schedule(const PreparedOperator& p, const Schedule& s);

/// Replays `steps` on a fresh schedule of `p.op` (Invalid when a step does not apply), then
/// check_schedule.
CaseOutcome check_steps(const PreparedOperator& p, const std::vector<Step>& steps);

/// check_steps for a regression test: the operator by name and the steps as JSON.
CaseOutcome check_steps_json(const std::string& op_name, const std::string& steps_json,
                             uint64_t input_seed);

}  // namespace tessel::fuzz
