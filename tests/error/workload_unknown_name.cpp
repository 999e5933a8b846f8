// make_workload of a name nobody registered names it and lists the registered workloads.
#include "error/ExpectDSLError.h"
#include "tessel/auto_schedule/task/Workload.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorWorkloadUnknownName, Throws) {
    expect_dsl_error(
        [] { make_workload("matmull", {}); },
        {"make_workload", "unknown workload 'matmull'", "registered:", "matmul", "softmax"});
    expect_dsl_error([] { workload_param_specs("no_such"); }, {"unknown workload 'no_such'"});
}
