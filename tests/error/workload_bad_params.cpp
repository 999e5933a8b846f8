// make_workload with the wrong number of parameters, or a parameter of the wrong kind, or values
// the builder refuses: each names the workload and the parameter.
#include "error/ExpectDSLError.h"
#include "tessel/auto_schedule/task/Workload.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorWorkloadBadParams, Throws) {
    expect_dsl_error(
        [] {
            make_workload("matmul", {int64_t(4), int64_t(4)});
        },
        {"make_workload('matmul')", "expects 4 parameter(s)",
         "matmul(M: int, N: int, K: int, dtype: dtype)", "got 2"});
    expect_dsl_error(
        [] {
            make_workload("matmul", {int64_t(4), std::string("4"), int64_t(4), Float(32)});
        },
        {"make_workload('matmul')", "parameter 1 'N' must be a int", "got string \"4\""});
    expect_dsl_error(
        [] {
            make_workload("matmul", {int64_t(4), int64_t(4), int64_t(4), std::string("f32")});
        },
        {"parameter 3 'dtype' must be a dtype", "\"f32\""});
    expect_dsl_error(
        [] {
            make_workload("matmul", {int64_t(4), int64_t(-4), int64_t(4), Float(32)});
        },
        {"make_workload([\"matmul\",4,-4,4,{\"dtype\":\"float32\"}])", "extents must be positive"});
    expect_dsl_error(
        [] {
            make_workload("softmax", {int64_t(1) << 40, int64_t(4), Float(32)});
        },
        {"softmax", "does not fit int32"});
}
