// Registering a workload under a taken name, an empty name, or with no builder.
#include "error/ExpectDSLError.h"
#include "tessel/auto_schedule/task/Workload.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorWorkloadRegisteredTwice, Throws) {
    auto builder = [](const WorkloadParams&) { return TensorDAG{}; };
    expect_dsl_error([&] { register_workload("matmul", {}, builder); },
                     {"register_workload", "'matmul' is already registered", "replace"});
    expect_dsl_error([&] { register_workload("", {}, builder); }, {"the name is empty"});
    expect_dsl_error([] { register_workload("x", {}, WorkloadBuilder()); },
                     {"register_workload('x')", "the builder is empty"});
}
