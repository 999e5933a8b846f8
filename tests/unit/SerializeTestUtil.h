// A helper for the DAG serialisation tests: write a DAG as JSON, read it back, and check that the
// copy is the same computation (te/Serialize.h).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/PrintDAG.h"
#include "tessel/te/ReferenceInterpreter.h"
#include "tessel/te/Serialize.h"

namespace tessel::testing {

/// The extents of a tensor of constant shape.
inline std::vector<int64_t> constant_shape(const Tensor& t) {
    std::vector<int64_t> shape;
    for (const Expr& e : t.shape()) shape.push_back(*as_const_int(e));
    return shape;
}

/// The reference results of `dag` on random inputs from `seed` (shapes as given, or the
/// placeholders' constant shapes).
inline std::vector<HostArray> reference_results(const TensorDAG& dag, uint64_t seed,
                                                std::vector<std::vector<int64_t>> shapes = {}) {
    std::vector<std::pair<Tensor, HostArray>> inputs;
    for (size_t i = 0; i < dag.inputs.size(); ++i) {
        const Tensor& t = dag.inputs[i];
        std::vector<int64_t> shape = i < shapes.size() ? shapes[i] : constant_shape(t);
        inputs.emplace_back(t, HostArray::random(t.dtype(), shape, seed * 100 + i));
    }
    return evaluate_reference(dag.outputs, inputs);
}

/// Writes `dag`, reads it back, and checks the copy: the same DAG hash, printed DAG and JSON; the
/// same reference results, bit for bit, on random inputs (shaped by `shapes` where the DAG has
/// symbolic extents); and, when `schedule` is given, the same lowered IR under the same steps.
/// Returns the copy.
inline TensorDAG expect_round_trip(const TensorDAG& dag,
                                   const std::function<void(Schedule&)>& schedule = {},
                                   const std::vector<std::vector<int64_t>>& shapes = {}) {
    std::string text = dag_to_json(dag);
    TensorDAG copy = dag_from_json(text);
    EXPECT_EQ(dag_hash(copy.outputs), dag_hash(dag.outputs));
    EXPECT_EQ(dag_to_string(copy.outputs), dag_to_string(dag.outputs));
    EXPECT_EQ(dag_to_json(copy), text);
    EXPECT_EQ(copy.inputs.size(), dag.inputs.size());
    EXPECT_EQ(copy.outputs.size(), dag.outputs.size());
    std::vector<HostArray> want = reference_results(dag, 7, shapes);
    std::vector<HostArray> got = reference_results(copy, 7, shapes);
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].nbytes(), want[i].nbytes());
        if (got[i].nbytes() != want[i].nbytes()) continue;
        EXPECT_EQ(std::memcmp(got[i].data(), want[i].data(), want[i].nbytes()), 0)
            << "output " << i << " differs";
    }
    if (schedule) {
        Schedule s = create_schedule(dag.outputs);
        schedule(s);
        Schedule replayed = schedule_from_json(copy.outputs, s.to_json());
        EXPECT_EQ(to_string(lower(replayed, copy.args())), to_string(lower(s, dag.args())));
    }
    return copy;
}

}  // namespace tessel::testing
