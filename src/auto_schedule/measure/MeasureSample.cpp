// The reference interpreter at sampled output points (MeasureInternal.h): for each output, a
// compute over S points whose body is the output's body with every data-parallel axis replaced by
// a read of an index table (the sampled coordinates). Reduce axes, intermediate stages and inputs
// stay as they are, so the interpreter does the work of S output points plus the intermediates.
#include <random>

#include "auto_schedule/measure/MeasureInternal.h"
#include "tessel/Error.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/te/ReferenceInterpreter.h"

namespace tessel::internal {

namespace {

struct Sampled {
    Tensor values;              // [S]: the output at the sampled points
    std::vector<int64_t> flat;  // the points' row-major positions in the output
    std::vector<std::pair<Tensor, HostArray>> tables;  // the index tables and their contents
};

Sampled sample_output(const Tensor& out, int samples, std::mt19937_64& rng) {
    const ComputeOpNode* c = as_compute(out->op);
    TESSEL_CHECK(c) << "an output that is not a compute";
    Sampled s;
    std::vector<int64_t> shape;
    for (const IterVar& a : c->axis) {
        const IntImm* e = a.dom().extent.as<IntImm>();
        TESSEL_CHECK(e) << "sampled output with a symbolic extent";
        shape.push_back(e->value);
    }
    std::vector<std::vector<double>> coords(shape.size());
    for (int k = 0; k < samples; ++k) {
        int64_t flat = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
            int64_t v = std::uniform_int_distribution<int64_t>(0, shape[d] - 1)(rng);
            coords[d].push_back(static_cast<double>(v));
            flat = flat * shape[d] + v;
        }
        s.flat.push_back(flat);
    }
    VarMap replace;
    for (size_t d = 0; d < shape.size(); ++d) {
        Type index = c->axis[d].var().type();
        Tensor table = placeholder({static_cast<int64_t>(samples)}, index, "sample_index");
        s.tables.emplace_back(table, HostArray::from_values(index, {samples}, coords[d]));
    }
    std::vector<Tensor> outs = compute_multi(
        {static_cast<int64_t>(samples)},
        [&](const std::vector<Var>& v) {
            for (size_t d = 0; d < shape.size(); ++d)
                replace[c->axis[d].var().get()] = s.tables[d].first({Expr(v[0])});
            std::vector<Expr> bodies;
            for (const Expr& b : c->body) bodies.push_back(substitute(b, replace));
            return bodies;
        },
        out->op->name + ".sampled");
    s.values = outs.at(static_cast<size_t>(out->value_index));
    return s;
}

}  // namespace

std::vector<CompareResult> check_at_samples(const TensorDAG& dag,
                                            const std::vector<std::pair<Tensor, HostArray>>& inputs,
                                            const std::vector<HostArray>& outputs,
                                            const std::vector<Tolerance>& tolerance, int samples,
                                            uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<CompareResult> results;
    for (size_t o = 0; o < dag.outputs.size(); ++o) {
        Sampled s = sample_output(dag.outputs[o], samples, rng);
        std::vector<std::pair<Tensor, HostArray>> all = inputs;
        all.insert(all.end(), s.tables.begin(), s.tables.end());
        HostArray expected = evaluate_reference({s.values}, all).at(0);
        HostArray actual(outputs[o].dtype(), {samples});
        for (int k = 0; k < samples; ++k) actual.set(k, outputs[o].get(s.flat[k]));
        results.push_back(compare_to_reference(actual, expected, tolerance[o]));
    }
    return results;
}

}  // namespace tessel::internal
