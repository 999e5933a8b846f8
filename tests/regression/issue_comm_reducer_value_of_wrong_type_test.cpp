// A user reducer whose combine returned a non-constant value of the wrong type (an int32 for a
// float32 reduction) crashed while building the error message (found by the DAG JSON fuzzer:
// fuzz/dag_json_mutation_fuzz_test.cpp). It is a DSLError naming the reducer and both types.
#include "error/ExpectDSLError.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(IssueCommReducerValueOfWrongType, IsADSLError) {
    Tensor A = placeholder({4, 5}, Float(32), "A");
    Reducer r = comm_reducer(
        "to_int",
        [](const std::vector<Expr>& l, const std::vector<Expr>&) {
            return std::vector<Expr>{cast(Int(32), l[0])};
        },
        [](const std::vector<Type>& t) { return std::vector<Expr>{make_zero(t[0])}; });
    IterVar k = reduce_axis({0, 5}, "k");
    expect_dsl_error(
        [&] {
            compute(
                {4}, [&](Var i) { return r(A(i, k), {k}); }, "B");
        },
        {"reducer 'to_int'", "combine value 0 has type int32", "float32"});
}
