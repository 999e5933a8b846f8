// A valid JSON DAG for the dag_from_json error tests to break (te/Serialize.h).
#pragma once

#include <nlohmann/json.hpp>

#include "tessel/te/Operation.h"
#include "tessel/te/Serialize.h"

namespace tessel::testing {

/// The JSON of B[i] = sum(A[i, k] * 2, k) + 1: ops[0] is A, ops[1] is B.
inline nlohmann::json valid_dag_json() {
    Tensor A = placeholder({4, 3}, Float(32), "A");
    IterVar k = reduce_axis({0, 3}, "k");
    Tensor S = compute(
        {4}, [&](Var i) { return sum(A(i, k) * 2.0f, {k}); }, "S");
    Tensor B = compute(
        {4}, [&](Var i) { return S(i) + 1.0f; }, "B");
    return nlohmann::json::parse(dag_to_json(std::vector<Tensor>{B}));
}

}  // namespace tessel::testing
