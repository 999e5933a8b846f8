// One schedule-fuzzer case (see FuzzCase.h).
#include "fuzz/support/FuzzCase.h"

#include <optional>
#include <stdexcept>

#include "correctness/ScheduleTestUtil.h"  // view_of
#include "tessel/Error.h"
#include "tessel/Tolerance.h"
#include "tessel/driver/Build.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/te/ReferenceInterpreter.h"

namespace tessel::fuzz {

namespace {

LowerOptions fuzz_lower_options() {
    LowerOptions o = LowerOptions::from_env();  // TESSEL_DEBUG shows the passes of a failing case
    o.bounds_check = true;
    return o;
}

std::string lowered_ir(const Schedule& s, const FuzzOperator& op) {
    return to_string(lower(s, op.args(), "main", fuzz_lower_options()));
}

// Runs `f`, turning what it throws into an outcome; a ScheduleError counts as `on_schedule_error`.
template <typename F>
CaseOutcome run_phase(const char* phase, Verdict on_schedule_error, F f) {
    auto fail = [&](const std::string& category, const std::string& what) {
        return CaseOutcome{Verdict::Failure, category, std::string(phase) + ": " + what};
    };
    try {
        f();
    } catch (const FuzzCheckFailed& e) {
        return fail(e.category, e.what());
    } catch (const ScheduleError& e) {
        if (on_schedule_error == Verdict::Failure) return fail("schedule_error", e.what());
        return CaseOutcome{on_schedule_error, "schedule_error",
                           std::string(phase) + ": " + e.what()};
    } catch (const RuntimeError& e) {
        std::string what = e.what();
        if (what.find("step budget exceeded") != std::string::npos)
            return CaseOutcome{Verdict::Budget, "budget", what};
        return fail("runtime_error", what);
    } catch (const InternalError& e) {
        return fail("internal_error", e.what());
    } catch (const std::exception& e) {
        return fail("exception", e.what());
    } catch (...) {
        return fail("exception", "an exception of unknown type");
    }
    return CaseOutcome{};
}

// Replays the steps directly and through their JSON; both must lower to `ir`, byte for byte.
void check_replay(const PreparedOperator& p, const Schedule& s, const std::string& ir) {
    Schedule again = replay(p.op.outputs, s.steps(), s.limits());
    if (lowered_ir(again, p.op) != ir)
        throw FuzzCheckFailed("replay", "replay(outputs, steps) lowers to different IR");
    std::string json = steps_to_json(s.steps());
    std::vector<Step> parsed = steps_from_json(json);
    if (steps_to_json(parsed) != json)
        throw FuzzCheckFailed("json", "steps_from_json(steps_to_json(steps)) is not the same list");
    if (lowered_ir(replay(p.op.outputs, parsed, s.limits()), p.op) != ir)
        throw FuzzCheckFailed("json", "the JSON round trip of the steps lowers to different IR");
    (void)s.to_python();
}

void compare_outputs(const PreparedOperator& p, const std::vector<HostArray>& arrays,
                     const std::string& category) {
    for (size_t i = 0; i < p.op.outputs.size(); ++i) {
        const HostArray& got = arrays[p.inputs.size() + i];
        CompareResult r = compare_to_reference(got, p.expected[i], p.op.tolerance(i));
        if (!r.ok)
            throw FuzzCheckFailed(category,
                                  "output '" + p.op.outputs[i].name() + "': " + r.message());
    }
}

void run_and_compare(const PreparedOperator& p, const LoweredFunc& f) {
    std::vector<HostArray> arrays = p.inputs;
    for (size_t i = 0; i < p.op.outputs.size(); ++i)
        arrays.emplace_back(p.op.outputs[i].dtype(), p.expected[i].shape());
    std::vector<HostArray*> args;
    for (HostArray& a : arrays) args.push_back(&a);
    // Far above what any suite operator needs (a few 100k steps with heavy recomputation), low
    // enough that a runaway schedule costs a second, not minutes.
    LoopInterpreterOptions options;
    options.max_steps = 2'000'000;
    run_lowered(f, args, options);
    compare_outputs(p, arrays, "mismatch");
}

// The same function JIT-compiled by the LLVM backend (bounds checks included) must agree too.
void run_jit_and_compare(const PreparedOperator& p, const LoweredFunc& f, const Schedule& s) {
    if (testing::has_thread_bindings(s)) {  // a GPU schedule: the CPU backend refuses it
        try {
            (void)build(f, "llvm");
        } catch (const CompileError& e) {
            if (std::string(e.what()).find("GPU target") != std::string::npos) return;
            throw FuzzCheckFailed("jit_gpu", std::string("unexpected CompileError: ") + e.what());
        }
        throw FuzzCheckFailed("jit_gpu", "the llvm backend accepted thread-bound IR");
    }
    std::vector<HostArray> arrays = p.inputs;
    for (size_t i = 0; i < p.op.outputs.size(); ++i)
        arrays.emplace_back(p.op.outputs[i].dtype(), p.expected[i].shape());
    Module m = build(f, "llvm");
    std::vector<NDArray> views;
    for (HostArray& a : arrays) views.push_back(testing::view_of(a));
    m.get(f.name)(views);
    compare_outputs(p, arrays, "jit_mismatch");
}

}  // namespace

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::Pass: return "pass";
        case Verdict::LateReject: return "late_reject";
        case Verdict::Budget: return "budget";
        case Verdict::Invalid: return "invalid";
        case Verdict::Failure: return "failure";
    }
    return "?";
}

PreparedOperator prepare_operator(const std::string& name, uint64_t input_seed) {
    PreparedOperator p{make_operator(name), input_seed, {}, {}};
    p.inputs = p.op.random_inputs(input_seed);
    std::vector<std::pair<Tensor, HostArray>> bound;
    for (size_t i = 0; i < p.inputs.size(); ++i)
        bound.emplace_back(p.op.placeholders[i], p.inputs[i]);
    p.expected = evaluate_reference(p.op.outputs, bound);
    return p;
}

CaseOutcome check_schedule(const PreparedOperator& p, const Schedule& s) {
    LoweredFunc f;
    std::string ir;
    CaseOutcome o = run_phase("lower", Verdict::LateReject, [&] {
        (void)s.infer_extents();
        f = lower(s, p.op.args(), "main", fuzz_lower_options());
        ir = to_string(f);
    });
    if (o.verdict != Verdict::Pass) return o;
    o = run_phase("replay", Verdict::Failure, [&] { check_replay(p, s, ir); });
    if (o.verdict != Verdict::Pass) return o;
    o = run_phase("run", Verdict::Failure, [&] { run_and_compare(p, f); });
    if (o.verdict != Verdict::Pass || !has_llvm_backend()) return o;
    o = run_phase("jit", Verdict::Failure, [&] { run_jit_and_compare(p, f, s); });
    return o;
}

CaseOutcome check_steps(const PreparedOperator& p, const std::vector<Step>& steps) {
    std::optional<Schedule> s;
    try {
        s.emplace(replay(p.op.outputs, steps));
    } catch (const ScheduleError& e) {
        return CaseOutcome{Verdict::Invalid, "schedule_error", e.what()};
    } catch (const std::exception& e) {
        return CaseOutcome{Verdict::Failure, "replay", std::string("replay: ") + e.what()};
    }
    return check_schedule(p, *s);
}

CaseOutcome check_steps_json(const std::string& op_name, const std::string& steps_json,
                             uint64_t input_seed) {
    PreparedOperator p = prepare_operator(op_name, input_seed);
    return check_steps(p, steps_from_json(steps_json));
}

}  // namespace tessel::fuzz
