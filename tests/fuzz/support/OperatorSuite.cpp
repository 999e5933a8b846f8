// The fuzzer's operator suite (see OperatorSuite.h): built-in workloads at small sizes, mostly
// odd or prime extents.
#include "fuzz/support/OperatorSuite.h"

#include <stdexcept>

#include "tessel/auto_schedule/task/Workload.h"

namespace tessel::fuzz {

namespace {

// Each operator is a built-in workload (src/auto_schedule/task/Workloads.cpp) at fixed sizes, with
// the tolerance data of its outputs: the longest reduction and the size of the reduced terms.
struct SuiteEntry {
    std::string name;
    WorkloadParams params;
    int64_t reduction_length;
    double magnitude;
};

const std::vector<SuiteEntry>& suite() {
    using P = WorkloadParams;
    const Type f32 = Float(32);
    static const std::vector<SuiteEntry> entries = {
        {"elementwise_broadcast", P{int64_t(7), int64_t(13), f32}, 1, 2.0},
        {"matmul", P{int64_t(13), int64_t(17), int64_t(11), f32}, 11, 1.0},
        {"batch_matmul", P{int64_t(3), int64_t(7), int64_t(5), int64_t(9), f32}, 9, 1.0},
        // 1x3x11x10 input, 4 filters, 3x3 kernel, stride 2, padding 1
        {"conv2d",
         P{int64_t(1), int64_t(3), int64_t(11), int64_t(10), int64_t(4), int64_t(3), int64_t(2),
           int64_t(1), f32},
         3 * 9, 1.0},
        {"depthwise_conv", P{int64_t(1), int64_t(5), int64_t(9), int64_t(7), int64_t(3), f32}, 9,
         1.0},
        {"max_pool",
         P{int64_t(1), int64_t(3), int64_t(11), int64_t(9), int64_t(3), int64_t(2), f32}, 9, 1.0},
        {"softmax", P{int64_t(5), int64_t(13), f32}, 13, 1.0},
        {"layer_norm", P{int64_t(6), int64_t(11), f32}, 11, 4.0},
        {"reduce_middle_axis", P{int64_t(7), int64_t(9), int64_t(5), f32}, 9, 1.0},
        {"transpose", P{int64_t(7), int64_t(11), int64_t(3), f32}, 1, 3.0},
        {"argmax", P{int64_t(7), int64_t(12), f32}, 12, 1.0},
    };
    return entries;
}

std::vector<int64_t> const_shape(const Tensor& t) {
    std::vector<int64_t> shape;
    for (const Expr& e : t.shape()) shape.push_back(*as_const_int(e));
    return shape;
}

}  // namespace

std::vector<Tensor> FuzzOperator::args() const {
    std::vector<Tensor> a = placeholders;
    a.insert(a.end(), outputs.begin(), outputs.end());
    return a;
}

std::vector<HostArray> FuzzOperator::random_inputs(uint64_t seed) const {
    std::vector<HostArray> inputs;
    for (size_t i = 0; i < placeholders.size(); ++i) {
        const Tensor& p = placeholders[i];
        inputs.push_back(HostArray::random(p.dtype(), const_shape(p), seed * 1000 + i));
    }
    return inputs;
}

Tolerance FuzzOperator::tolerance(size_t i) const {
    return tolerance_for(outputs[i].dtype(), reduction_length, magnitude);
}

const std::vector<std::string>& operator_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const SuiteEntry& e : suite()) n.push_back(e.name);
        return n;
    }();
    return names;
}

FuzzOperator make_operator(const std::string& name) {
    for (const SuiteEntry& e : suite()) {
        if (e.name != name) continue;
        TensorDAG dag = make_workload(e.name, e.params);
        return {e.name, dag.inputs, dag.outputs, e.reduction_length, e.magnitude};
    }
    throw std::invalid_argument("fuzz: unknown operator '" + name + "'");
}

}  // namespace tessel::fuzz
