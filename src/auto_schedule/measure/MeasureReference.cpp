// A task's inputs and reference output (MeasureInternal.h). Small tasks take the reference
// interpreter's output. For large ones (a 1024^3 GEMM takes the interpreter about a minute) the
// reference is the operator library's default schedule, built and run in a worker like any
// candidate, and trusted only after the reference interpreter has computed a sample of its output
// points (a DAG whose outputs are the original bodies at sampled coordinates; intermediate stages
// are computed in full) and they agree. Candidates are then compared with a tolerance twice the
// usual one, as both sides round.
#include <chrono>
#include <cmath>
#include <random>

#include "auto_schedule/measure/MeasureInternal.h"
#include "codegen/Signature.h"
#include "tessel/Error.h"
#include "tessel/codegen/Build.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/op/DefaultSchedule.h"
#include "tessel/te/ReferenceInterpreter.h"

namespace tessel::internal {

namespace {

using json = nlohmann::json;

std::vector<int64_t> constant_shape(const Tensor& t) {
    std::vector<int64_t> shape;
    for (const Expr& e : t->shape) {
        const IntImm* v = e.as<IntImm>();
        if (!v)
            TESSEL_THROW(RuntimeError) << "measurement: tensor '" << t->name
                                       << "' has a symbolic extent; tasks need constant shapes";
        shape.push_back(v->value);
    }
    return shape;
}

// Uniform in [-1, 1] (floats) or the dtype's small range, with every zero replaced by one.
HostArray random_input(const Tensor& t, uint64_t seed) {
    HostArray a = HostArray::random(t->dtype, constant_shape(t), seed);
    if (t->dtype.is_bool()) return a;
    for (int64_t i = 0; i < a.size(); ++i)
        if (a.get(i) == 0) a.set(i, 1.0);
    return a;
}

// Whether the worker can compare this task's outputs itself: float32 and float64 outputs, whose
// references it receives as float32 or float64 (compare_values' types). Others go to the client.
bool worker_checks(const TaskData& data) {
    auto wide_float = [](Type t) { return t.code == TypeCode::Float && t.bits >= 32; };
    for (const HostArray& r : data.reference)
        if (!wide_float(r.dtype()) || r.nbytes() == 0) return false;
    return !data.reference.empty();
}

// The Setup request: the arguments and the inputs' bytes; with `checked` (a task whose reference
// is known and worker_checks), each output's reference and tolerance after the inputs.
measure::Message setup_message(const SearchTask& task, const MeasureOptions& options,
                               const std::vector<HostArray>& inputs,
                               const TaskData* checked = nullptr) {
    json args = json::array();
    measure::Message m{measure::MessageKind::Setup, "", {}};
    const TensorDAG& dag = task.dag();
    size_t o = 0;
    for (const Tensor& t : dag.args()) {
        DataType d = runtime_type(t->dtype, "measurement");
        bool output = false;
        for (const Tensor& out : dag.outputs) output = output || same_tensor(out, t);
        json arg = {{"dtype", {d.to_dlpack().code, d.bits, d.lanes}},
                    {"shape", constant_shape(t)},
                    {"output", output}};
        if (output && checked) {
            const HostArray& ref = checked->reference.at(o);
            const Tolerance& tol = checked->tolerance.at(o++);
            arg["reference"] = {
                {"bits", ref.element_bytes() * 8}, {"rtol", tol.rtol}, {"atol", tol.atol}};
        }
        args.push_back(std::move(arg));
    }
    auto append = [&m](const HostArray& a) {
        const auto* p = static_cast<const uint8_t*>(a.data());
        m.data.insert(m.data.end(), p, p + a.nbytes());
    };
    for (const HostArray& a : inputs) append(a);
    if (checked)
        for (const HostArray& r : checked->reference) append(r);
    json header = {{"device", task.target().is_gpu() ? "cuda" : "cpu"},
                   {"device_id", options.device_id},
                   {"array_offset", options.array_offset},
                   {"args", args}};
    m.json = header.dump();
    return m;
}

// The longest reduction in the DAG (the K of Tolerance.h).
int64_t reduction_length(const TensorDAG& dag) {
    int64_t longest = 1;
    for (const Operation& op : topo_order(dag.outputs)) {
        const ComputeOpNode* c = as_compute(op);
        if (!c) continue;
        int64_t k = 1;
        for (const IterVar& r : c->reduce_axis) {
            const IntImm* e = r.dom().extent.as<IntImm>();
            k *= e ? e->value : 1;
        }
        longest = std::max(longest, k);
    }
    return longest;
}

std::vector<std::pair<Tensor, HostArray>> input_pairs(const TaskData& data, const TensorDAG& dag) {
    std::vector<std::pair<Tensor, HostArray>> pairs;
    for (size_t i = 0; i < dag.inputs.size(); ++i)
        pairs.emplace_back(dag.inputs[i], data.inputs[i]);
    return pairs;
}

}  // namespace

const char* worker_fault_name(TestFault f) {
    switch (f) {
        case TestFault::Segfault: return "segfault";
        case TestFault::Abort: return "abort";
        case TestFault::Hang: return "hang";
        case TestFault::OutOfBoundsWrite: return "out_of_bounds_write";
        case TestFault::WrongValues: return "wrong_values";
        case TestFault::OutOfMemory: return "out_of_memory";
        case TestFault::HangWhileTiming: return "hang_while_timing";
        case TestFault::MalformedReply: return "malformed_reply";
        default: return "";
    }
}

measure::Message run_request(const std::vector<uint8_t>& module, TestFault fault) {
    json header = {{"kernel", "main"}, {"fault", worker_fault_name(fault)}};
    return {measure::MessageKind::Run, header.dump(), module};
}

std::vector<HostArray> split_outputs(const TaskData& data, const std::vector<uint8_t>& bytes) {
    std::vector<HostArray> out;
    size_t at = 0;
    for (const HostArray& ref : data.reference) {
        HostArray a(ref.dtype(), ref.shape());
        if (a.nbytes() > bytes.size() - at)
            TESSEL_THROW(RuntimeError) << "measurement: the worker returned too few output bytes";
        std::memcpy(a.data(), bytes.data() + at, a.nbytes());
        at += a.nbytes();
        out.push_back(std::move(a));
    }
    if (at != bytes.size())
        TESSEL_THROW(RuntimeError) << "measurement: the worker returned too many output bytes";
    return out;
}

}  // namespace tessel::internal

namespace tessel::internal {

namespace {

// The default schedule's output, run in `worker` and checked at sampled points.
void trusted_build_reference(const SearchTask& task, const MeasureOptions& options,
                             WorkerProcess& worker, TaskData& data) {
    const TensorDAG& dag = task.dag();
    Schedule s = op::default_schedule_rules(dag.outputs, task.target());
    // Lowered here: the rules' schedule as it is, never a tuning record (build() of a schedule
    // without steps would consult them).
    std::vector<LoweredFunc> fs = {lower(s, dag.args(), task.target(), "main")};
    if (has_pre_transform(s))  // the worker runs the transform once, then the kernel
        fs.push_back(lower_pre_transform(s, dag.args(), task.target(), pre_transform_name("main")));
    Module m = build(fs, task.target());
    WorkerProcess::Outcome setup = worker.request(data.setup, options.run_timeout_seconds);
    if (setup.error != MeasureError::None)
        TESSEL_THROW(RuntimeError) << "measurement: the worker could not take task " << task.key()
                                   << ": " << setup.message;
    worker.task_key = data.key;
    WorkerProcess::Outcome run = worker.request(run_request(m.save(false), TestFault::None),
                                                options.run_timeout_seconds * 10);
    if (run.error != MeasureError::None)
        TESSEL_THROW(RuntimeError) << "measurement: the default schedule of " << task.key()
                                   << " (the reference) failed: " << run.message;
    data.reference = split_outputs(data, run.reply.data);
    std::vector<CompareResult> checks =
        check_at_samples(dag, input_pairs(data, dag), data.reference, data.tolerance,
                         options.reference_samples, options.seed + 7);
    for (size_t o = 0; o < checks.size(); ++o) {
        if (checks[o].ok) continue;
        TESSEL_THROW(RuntimeError)
            << "measurement: the default schedule of " << task.key()
            << " disagrees with the reference interpreter on output '" << data.output_names[o]
            << "', so it cannot serve as the reference: " << checks[o].message();
    }
    // Two rounded computations may differ by twice the distance of each from the ideal.
    for (Tolerance& t : data.tolerance) t = t.scaled(2);
}

}  // namespace

TaskData prepare_task(const SearchTask& task, const MeasureOptions& options,
                      WorkerProcess& worker) {
    const TensorDAG& dag = task.dag();
    TaskData data;
    data.key = task.key();
    for (size_t i = 0; i < dag.inputs.size(); ++i)
        data.inputs.push_back(random_input(dag.inputs[i], options.seed * 1000003 + i));
    data.setup = setup_message(task, options, data.inputs);
    int64_t k = reduction_length(dag);
    for (const Tensor& o : dag.outputs) {
        data.tolerance.push_back(tolerance_for(o->dtype, k, 1.0));
        data.output_names.push_back(o->name);
        // Shapes and dtypes of the outputs, for split_outputs before a reference exists.
        data.reference.emplace_back(o->dtype, constant_shape(o));
    }
    if (flop_count(dag.outputs) <= options.reference_flop_limit) {
        data.reference = evaluate_reference(dag.outputs, input_pairs(data, dag));
    } else {
        trusted_build_reference(task, options, worker, data);
    }
    if (worker_checks(data)) {
        // The worker compares each candidate's outputs where they are: no outputs cross the
        // socket (256 MB per candidate for an 8192^2 softmax). It is sent the references next.
        data.setup = setup_message(task, options, data.inputs, &data);
        data.worker_checks = true;
        if (worker.task_key == data.key) worker.task_key.clear();
    }
    return data;
}

}  // namespace tessel::internal
