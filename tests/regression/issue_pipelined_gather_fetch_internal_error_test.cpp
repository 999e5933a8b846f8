// Regression test: a GPU state the tuner's pipelining rule proposed (a 48 x 35 x 27 GEMM, the
// search suite's odd matmul on sm_90: A's shared tile fetched 2 floats a thread, pipelined with 4
// copies) threw InternalError "cp_async: argument 3 must be a scalar integer" in
// lower_async_copies: the fetch's source index was a vector of division and remainder (the pair
// crosses a row of the tile), no Ramp, and was passed whole as the copy's index. Such gathers are
// now copied lane by lane (4-byte cp.async each); the state computes the GEMM in the SPMD
// interpreter (cp.async landing, race detector) and compiles.
#include <gtest/gtest.h>

#include <sstream>

#include "gpu/GpuCheck.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/driver/Build.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/Lower.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

const char* const kSteps = R"json({"format_version":1,"steps":[
  {"kind":"cache_write","scope":"local","stage":2},
  {"factor":3,"iter":2,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":1,"iter":2,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":1,"iter":1,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":1,"iter":1,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":35,"iter":1,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":1,"iter":1,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":1,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":2,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":12,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"factor":2,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"kind":"reorder","order":[0,5,1,6,2,7,10,11,3,8,12,4,9],"stage":2},
  {"iter":1,"kind":"follow_fused_split","src_steps":[4,3],"stage":3},
  {"iter":1,"kind":"follow_split","src_step":5,"stage":3},
  {"iter":1,"kind":"follow_split","src_step":6,"stage":3},
  {"iter":0,"kind":"follow_fused_split","src_steps":[8,7],"stage":3},
  {"iter":0,"kind":"follow_split","src_step":9,"stage":3},
  {"iter":0,"kind":"follow_split","src_step":10,"stage":3},
  {"kind":"reorder","order":[0,4,1,5,2,6,3,7],"stage":3},
  {"kind":"compute_at","stage":2,"target":3,"target_iter":5},
  {"kind":"cache_read","readers":[2],"scope":"shared","stage":1},
  {"kind":"compute_at","stage":2,"target":3,"target_iter":6},
  {"kind":"cache_read","readers":[3],"scope":"shared","stage":0},
  {"kind":"compute_at","stage":1,"target":4,"target_iter":6},
  {"iters":[0,1],"kind":"fuse","stage":5},
  {"annotation":"blockIdx.x","iter":0,"kind":"annotate","stage":5},
  {"iters":[1,2],"kind":"fuse","stage":5},
  {"annotation":"vthread","iter":1,"kind":"annotate","stage":5},
  {"iters":[2,3],"kind":"fuse","stage":5},
  {"annotation":"threadIdx.x","iter":2,"kind":"annotate","stage":5},
  {"iters":[0,1],"kind":"fuse","stage":1},
  {"factor":2,"iter":0,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"iter":0,"kind":"follow_fused_split","src_steps":[5,9],"stage":1},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":1},
  {"annotation":"vectorize","iter":2,"kind":"annotate","stage":1},
  {"iters":[0,1],"kind":"fuse","stage":3},
  {"iter":0,"kind":"follow_fused_split","src_steps":[5,9],"stage":3},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":3},
  {"depth":4,"kind":"pipeline","stage":1},
  {"depth":4,"kind":"pipeline","stage":3},
  {"key":"auto_unroll_max_step","kind":"pragma","stage":4,"value":64}
],"workload_key":"13c990a34534c516"})json";

}  // namespace

TEST(Regression, PipelinedGatherFetchLowersToPerLaneCopies) {
    SearchTask task("op.matmul",
                    {int64_t(48), int64_t(35), int64_t(27), int64_t(0), int64_t(0), Float(32)},
                    Target(kCudaCompileTarget));
    Schedule s = task.apply_record(kSteps);
    std::ostringstream ir;
    ir << lower(s, task.dag().args(), task.target(), "main").body;
    EXPECT_NE(ir.str().find("cp_async("), std::string::npos) << ir.str();
    GpuProgram p = gpu_program("pipelined gather", s, 27);
    EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 5)));
    if (has_cuda_backend()) {
        EXPECT_NO_THROW(compile_for_gpu(p));
    }
}
