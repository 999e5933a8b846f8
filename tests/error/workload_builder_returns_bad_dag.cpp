// A workload builder whose DAG leaves out an input, or has no output.
#include "error/ExpectDSLError.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorWorkloadBuilderReturnsBadDag, Throws) {
    register_workload("test_missing_input", {}, [](const WorkloadParams&) {
        Tensor A = placeholder({4}, Float(32), "A");
        Tensor B = compute(
            {4}, [&](Var i) { return A(i) * 2.0f; }, "B");
        return TensorDAG{{}, {B}};
    });
    register_workload("test_no_output", {}, [](const WorkloadParams&) { return TensorDAG{}; });
    expect_dsl_error(
        [] { make_workload("test_missing_input", {}); },
        {"make_workload([\"test_missing_input\"])", "placeholder 'A'", "missing from the inputs"});
    expect_dsl_error([] { make_workload("test_no_output", {}); },
                     {"test_no_output", "the DAG has no output"});
    unregister_workload("test_missing_input");
    unregister_workload("test_no_output");
}
