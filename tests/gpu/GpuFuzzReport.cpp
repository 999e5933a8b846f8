// The GPU schedule fuzzer's report and replay (see GpuFuzz.h).
#include <cstdio>
#include <sstream>

#include "fuzz/support/FuzzCase.h"
#include "gpu/GpuFuzz.h"
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel::testing {

namespace {

constexpr GpuVerdict kVerdicts[] = {GpuVerdict::PassedOnGpu, GpuVerdict::CompiledOnly,
                                    GpuVerdict::Rejected, GpuVerdict::Budget, GpuVerdict::Failed};

std::string per_primitive_table(const GpuFuzzReport& r) {
    std::ostringstream os;
    char line[200];
    std::snprintf(line, sizeof line, "  %-24s %14s %14s %10s %8s\n", "primitive (checked cases)",
                  "passed on GPU", "compiled only", "budget", "failed");
    os << line;
    for (const auto& [prim, counts] : r.per_primitive) {
        auto get = [&](GpuVerdict v) {
            auto it = counts.find(v);
            return static_cast<long long>(it == counts.end() ? 0 : it->second);
        };
        std::snprintf(line, sizeof line, "  %-24s %14lld %14lld %10lld %8lld\n", prim.c_str(),
                      get(GpuVerdict::PassedOnGpu), get(GpuVerdict::CompiledOnly),
                      get(GpuVerdict::Budget), get(GpuVerdict::Failed));
        os << line;
    }
    return os.str();
}

}  // namespace

std::string GpuFuzzReport::summary(const GpuFuzzConfig& config) const {
    std::ostringstream os;
    os << "gpu schedule fuzz: seed " << config.seed << ", " << draws << " draws in "
       << static_cast<int64_t>(seconds * 10) / 10.0 << " s for " << config.cases
       << " checked cases:";
    for (GpuVerdict v : kVerdicts)
        os << (v == kVerdicts[0] ? " " : ", ") << count(v) << " " << gpu_verdict_name(v);
    os << "\n";
    if (!cuda_available()) os << "  (no GPU: " << cuda_unavailable_reason() << ")\n";
    os << per_primitive_table(*this);
    os << "primitives drawn (applied / rejected when drawn):\n" << stats.report();
    if (!reject_reasons.empty()) os << "rejected draws (drawn again):\n";
    for (const auto& [reason, n] : reject_reasons) os << "  " << n << "x " << reason << "\n";
    return os.str();
}

std::string describe(const GpuFuzzFailure& f, uint64_t input_seed) {
    std::ostringstream os;
    os << "GPU fuzz failure: operator " << f.op_name << ", draw seed " << f.draw_seed
       << ", TESSEL_GPU_FUZZ_SEED " << input_seed << ", phase " << f.phase << ":\n  " << f.message
       << "\n  steps (completion included): " << f.steps_json
       << "\n  reproduce: check_gpu_steps_json(\"" << f.op_name << "\", R\"(" << f.steps_json
       << ")\", " << input_seed << ", &message)\n";
    return os.str();
}

GpuVerdict check_gpu_steps_json(const std::string& op_name, const std::string& steps_json,
                                uint64_t input_seed, std::string* message) {
    fuzz::PreparedOperator p = fuzz::prepare_operator(op_name, input_seed);
    GpuProgram g{op_name,
                 replay(p.op.outputs, steps_from_json(steps_json)),
                 p.op.placeholders,
                 p.op.outputs,
                 {}};
    g.reduction_length = p.op.reduction_length;
    g.magnitude = p.op.magnitude;
    GpuData d{p.inputs, p.expected};
    try {
        check_in_interpreter(g, d, /*bounds_checks=*/true);
        Module m = compile_for_gpu(g, gpu_run_target());
        if (!cuda_available()) return GpuVerdict::CompiledOnly;
        check_on_gpu(g, m, d);
        return GpuVerdict::PassedOnGpu;
    } catch (const ScheduleError& e) {
        if (message) *message = e.what();
        return GpuVerdict::Rejected;
    } catch (const std::exception& e) {
        if (message) *message = e.what();
        return GpuVerdict::Failed;
    }
}

}  // namespace tessel::testing
