// DAGAnalysis asked about an operation that is not in its DAG, or an index out of range.
#include "error/ExpectDSLError.h"
#include "tessel/te/DAGAnalysis.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorDagAnalysisUnknownOperation, Throws) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor B = compute(
        {4}, [&](Var i) { return A(i) * 2.0f; }, "B");
    DAGAnalysis a({B});
    Tensor other = placeholder({4}, Float(32), "other");
    expect_dsl_error([&] { a.index_of(other.op()); },
                     {"DAGAnalysis", "operation 'other' is not part of the DAG"});
    expect_dsl_error([&] { a.needs_multi_level_tiling(2); },
                     {"DAGAnalysis", "operation index 2 out of range", "2 operations"});
    expect_dsl_error([] { DAGAnalysis({}); }, {"DAGAnalysis", "no output"});
}
