// The GPU schedule fuzzer (see GpuFuzz.h).
#include "gpu/GpuFuzz.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>

#include "fuzz/support/FuzzCase.h"
#include "gpu/GpuCompletion.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel::testing {

namespace {

constexpr int kDrawsPerCase = 20;
constexpr size_t kMaxFailuresKept = 10;

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::string first_line(const std::string& s) {
    return s.substr(0, s.find('\n'));
}

struct Outcome {
    GpuVerdict verdict;
    std::string phase, message;
};

// Runs `f`; nullopt when it returns, else how it failed (a refusal is a rejection, not a bug).
template <typename F>
std::optional<Outcome> run_phase(const char* phase, F f) {
    try {
        f();
        return std::nullopt;
    } catch (const ScheduleError& e) {
        return Outcome{GpuVerdict::Rejected, phase, e.what()};
    } catch (const CompletionRefused& e) {
        return Outcome{GpuVerdict::Rejected, phase, e.what()};
    } catch (const RuntimeError& e) {
        std::string what = e.what();
        bool budget = what.find("step budget exceeded") != std::string::npos;
        return Outcome{budget ? GpuVerdict::Budget : GpuVerdict::Failed, phase, what};
    } catch (const std::exception& e) {
        return Outcome{GpuVerdict::Failed, phase, e.what()};
    } catch (...) {
        return Outcome{GpuVerdict::Failed, phase, "an exception of unknown type"};
    }
}

GpuProgram program_of(const fuzz::PreparedOperator& p, const Schedule& s) {
    GpuProgram g{p.op.name, s, p.op.placeholders, p.op.outputs, {}};
    g.reduction_length = p.op.reduction_length;
    g.magnitude = p.op.magnitude;
    return g;
}

// The three checks of GpuCheck.h on a complete schedule.
Outcome check_gpu_schedule(const fuzz::PreparedOperator& p, const Schedule& s) {
    GpuProgram g = program_of(p, s);
    GpuData d{p.inputs, p.expected};
    if (auto o = run_phase("interpreter", [&] { check_in_interpreter(g, d, /*bounds_checks=*/true); })) return *o;
    std::optional<Module> m;
    if (auto o = run_phase("build", [&] { m = compile_for_gpu(g, gpu_run_target()); })) return *o;
    if (!cuda_available()) return {GpuVerdict::CompiledOnly, "", ""};
    if (auto o = run_phase("gpu", [&] { check_on_gpu(g, *m, d); })) return *o;
    return {GpuVerdict::PassedOnGpu, "", ""};
}

// What a schedule uses: its steps' kinds (annotations by name), cross-thread reductions, scopes.
std::set<std::string> primitives_of(const Schedule& s, size_t random_steps) {
    std::set<std::string> used;
    for (size_t i = 0; i < random_steps && i < s.steps().size(); ++i) {
        const Step& step = s.steps()[i];
        const auto* a = std::get_if<AnnotateStep>(&step);
        used.insert(a ? annotation_name(a->annotation) : step_kind_name(step));
    }
    for (const Stage& st : s.stages()) {
        if (st.attach == AttachKind::Inlined) continue;
        if (st.scope != StorageScope::Global)
            used.insert(std::string("scope ") + scope_name(st.scope));
        for (int id : st.leaf)
            if (st.iters[id].kind == IterKind::Reduction &&
                st.iters[id].annotation >= IterAnnotation::ThreadX)
                used.insert("cross_thread_reduction");
    }
    return used;
}

struct Draw {
    Outcome outcome;
    std::optional<Schedule> schedule;
    std::set<std::string> primitives;
};

Draw run_draw(const fuzz::PreparedOperator& p, uint64_t seed, const GpuFuzzConfig& config,
              fuzz::StepStats* stats) {
    static const int64_t kThreads[] = {32, 64, 128, 256};
    fuzz::StepGenerator gen(seed, stats, fuzz::StepMix::Gpu);
    Draw d{{GpuVerdict::Failed, "", ""}, create_schedule(p.op.outputs), {}};
    Schedule& s = *d.schedule;
    int count = 1 + gen.pick(config.max_attempts);
    if (auto o = run_phase("steps", [&] { gen.apply_random(s, count); })) {
        o->verdict = GpuVerdict::Failed;  // a primitive failing other than by ScheduleError
        o->message = gen.last_attempt() + ": " + o->message;
        d.outcome = *o;
        return d;
    }
    size_t random_steps = s.steps().size();
    int64_t threads = kThreads[gen.pick(4)];
    if (auto o = run_phase("complete", [&] { complete_gpu_schedule(s, threads); })) {
        d.outcome = *o;
        return d;
    }
    d.primitives = primitives_of(s, random_steps);
    d.outcome = check_gpu_schedule(p, s);
    return d;
}

void record(GpuFuzzReport& r, const fuzz::PreparedOperator& p, uint64_t seed, const Draw& d) {
    const Outcome& o = d.outcome;
    ++r.verdicts[o.verdict];
    if (o.verdict == GpuVerdict::Rejected)
        ++r.reject_reasons[p.op.name + " (" + o.phase + "): " + first_line(o.message)];
    if (o.verdict != GpuVerdict::Rejected)
        for (const std::string& prim : d.primitives) ++r.per_primitive[prim][o.verdict];
    if (o.verdict == GpuVerdict::Failed && r.failures.size() < kMaxFailuresKept)
        r.failures.push_back({p.op.name, seed, o.phase, o.message,
                              d.schedule ? steps_to_json(d.schedule->steps()) : "[]"});
}

}  // namespace

const char* gpu_verdict_name(GpuVerdict v) {
    switch (v) {
        case GpuVerdict::PassedOnGpu: return "passed on GPU";
        case GpuVerdict::CompiledOnly: return "compiled only";
        case GpuVerdict::Rejected: return "rejected";
        case GpuVerdict::Budget: return "over budget";
        case GpuVerdict::Failed: return "failed";
    }
    return "?";
}

GpuFuzzConfig GpuFuzzConfig::from_env() {
    GpuFuzzConfig c;
    if (const char* v = std::getenv("TESSEL_GPU_FUZZ_CASES")) c.cases = std::atoll(v);
    if (const char* v = std::getenv("TESSEL_GPU_FUZZ_SEED")) c.seed = std::strtoull(v, nullptr, 0);
    return c;
}

int64_t GpuFuzzReport::count(GpuVerdict v) const {
    auto it = verdicts.find(v);
    return it == verdicts.end() ? 0 : it->second;
}

GpuFuzzReport run_gpu_fuzz(const GpuFuzzConfig& config) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<fuzz::PreparedOperator> ops;
    for (const std::string& name : fuzz::operator_names())
        ops.push_back(fuzz::prepare_operator(name, config.seed));
    GpuFuzzReport r;
    int64_t checked = 0;
    for (int64_t k = 0; checked < config.cases && k < config.cases * kDrawsPerCase; ++k) {
        const fuzz::PreparedOperator& p = ops[static_cast<size_t>(k) % ops.size()];
        uint64_t seed = splitmix64(config.seed + static_cast<uint64_t>(k));
        Draw d = run_draw(p, seed, config, &r.stats);
        ++r.draws;
        if (d.outcome.verdict != GpuVerdict::Rejected) ++checked;
        record(r, p, seed, d);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace tessel::testing
