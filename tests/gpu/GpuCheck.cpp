// The checks of a GPU program (see GpuCheck.h).
#include "gpu/GpuCheck.h"

#include <cmath>

#include "correctness/ScheduleTestUtil.h"  // placeholders_of, to_runtime
#include "tessel/driver/Build.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/runtime/CUDA.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/te/ReferenceInterpreter.h"

namespace tessel::testing {

namespace {

std::vector<int64_t> constant_shape(const Tensor& t) {
    std::vector<int64_t> shape;
    for (const Expr& e : t.shape()) {
        auto c = as_const_int(e);
        if (!c)
            throw GpuCheckError("tensor '" + t.name() +
                                "' has a symbolic extent: give GpuProgram::shapes");
        shape.push_back(*c);
    }
    return shape;
}

HostArray random_input(const GpuProgram& p, size_t i, uint64_t seed) {
    const Tensor& t = p.inputs[i];
    if (!p.integer_valued_inputs) return HostArray::random(t.dtype(), p.shape(i), seed);
    HostArray a = HostArray::random(t.dtype(), p.shape(i), seed, 1, 4.999);
    for (int64_t k = 0; k < a.size(); ++k) a.set(k, std::floor(a.get(k)));
    return a;
}

// An NDArray on device 0 holding a copy of `host`.
NDArray to_device(const HostArray& host) {
    NDArray d = NDArray::empty(host.shape(), to_runtime(host.dtype()), cuda(0));
    d.copy_from(host.data(), static_cast<int64_t>(host.nbytes()));
    return d;
}

}  // namespace

std::vector<Tensor> GpuProgram::args() const {
    std::vector<Tensor> a = inputs;
    a.insert(a.end(), outputs.begin(), outputs.end());
    return a;
}

std::vector<int64_t> GpuProgram::shape(size_t i) const {
    if (!shapes.empty()) return shapes.at(i);
    return constant_shape(i < inputs.size() ? inputs[i] : outputs.at(i - inputs.size()));
}

GpuProgram gpu_program(std::string name, Schedule s, int64_t reduction_length, double magnitude) {
    GpuProgram p{std::move(name), s, placeholders_of(s), s.outputs(), {}};
    p.reduction_length = reduction_length;
    p.magnitude = magnitude;
    return p;
}

GpuData make_gpu_data(const GpuProgram& p, uint64_t seed) {
    GpuData d;
    std::vector<std::pair<Tensor, HostArray>> bound;
    for (size_t i = 0; i < p.inputs.size(); ++i) {
        d.inputs.push_back(random_input(p, i, seed * 1000 + i));
        bound.emplace_back(p.inputs[i], d.inputs.back());
    }
    d.expected = evaluate_reference(p.outputs, bound);
    return d;
}

void compare_gpu_outputs(const GpuProgram& p, const std::vector<HostArray>& got, const GpuData& d,
                         const std::string& where) {
    for (size_t o = 0; o < p.outputs.size(); ++o) {
        Tolerance tol = tolerance_for(p.outputs[o].dtype(), p.reduction_length, p.magnitude);
        CompareResult r = compare_to_reference(got.at(o), d.expected.at(o), tol);
        if (!r.ok)
            throw GpuCheckError(p.name + ": " + where + " output '" + p.outputs[o].name() +
                                "': " + r.message());
    }
}

std::string check_in_interpreter(const GpuProgram& p, const GpuData& d, bool bounds_checks) {
    LowerOptions options = LowerOptions::from_env();
    options.bounds_check = options.bounds_check || bounds_checks;
    LoweredFunc f = lower(p.schedule, p.args(), "main", options);
    std::vector<HostArray> arrays = d.inputs;
    for (size_t o = 0; o < p.outputs.size(); ++o)
        arrays.emplace_back(p.outputs[o].dtype(), p.shape(p.inputs.size() + o));  // poisoned
    std::vector<HostArray*> ptrs;
    for (HostArray& a : arrays) ptrs.push_back(&a);
    LoopInterpreterOptions run_options;  // the race detector is always on for thread-bound IR
    run_options.max_steps = 20'000'000;
    run_lowered(f, ptrs, run_options);
    std::vector<HostArray> got(arrays.begin() + static_cast<long>(d.inputs.size()), arrays.end());
    compare_gpu_outputs(p, got, d, "interpreter");
    return to_string(f);
}

Module compile_for_gpu(const GpuProgram& p, const std::string& target) {
    Module m = build(p.schedule, p.args(), target);
    for (const char* kind : {"cu", "ptx"}) {
        auto it = m.sources().find(kind);
        if (it == m.sources().end() || it->second.empty())
            throw GpuCheckError(p.name + ": the module built for '" + target + "' has no '" + kind +
                                "' source");
    }
    return m;
}

std::string gpu_run_target() {
    return cuda_available() ? "cuda" : kCudaCompileTarget;
}

void check_on_gpu(const GpuProgram& p, const Module& m, const GpuData& d) {
    std::vector<NDArray> args;
    for (const HostArray& in : d.inputs) args.push_back(to_device(in));
    std::vector<HostArray> got;
    for (size_t o = 0; o < p.outputs.size(); ++o) {
        got.emplace_back(p.outputs[o].dtype(), p.shape(p.inputs.size() + o));  // poisoned
        args.push_back(to_device(got.back()));
    }
    m.get("main")(args);
    for (size_t o = 0; o < got.size(); ++o)  // copy_to synchronises (and reports kernel faults)
        args[d.inputs.size() + o].copy_to(got[o].data(), static_cast<int64_t>(got[o].nbytes()));
    compare_gpu_outputs(p, got, d, "GPU");
}

}  // namespace tessel::testing
