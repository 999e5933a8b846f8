// Regression test from the GPU schedule fuzzer (tests/cuda_fuzz, seed 7): NVRTC rejected kernels
// that declared one local array or LetStmt variable twice in one C scope, e.g.
//   error: "square" has already been declared in the current scope
// A vthread (or unroll) loop becomes an unrolled loop whose copies each hold the same Allocate /
// LetStmt of the same Var, printed one after another. The CUDA printer gives every Allocate and
// LetStmt a C scope of its own, so the generated source is valid for any such lowered IR.
// Each case must pass the SPMD interpreter (race detector on) and compile with NVRTC for sm_90.
#include <gtest/gtest.h>

#include "codegen/cuda/NVRTC.h"
#include "gpu/GpuFuzz.h"

using namespace tessel::testing;

namespace {

void expect_compiles(const char* op, const char* steps) {
    if (!tessel::internal::has_nvrtc())
        GTEST_SKIP() << "tessel built without the CUDA backend (NVRTC)";
    std::string message;
    GpuVerdict v = check_gpu_steps_json(op, steps, 7, &message);
    EXPECT_TRUE(v == GpuVerdict::CompiledOnly || v == GpuVerdict::PassedOnGpu)
        << op << ": " << gpu_verdict_name(v) << ": " << message;
}

}  // namespace

// A local array ('square', computed at the vthread loop) in every copy of the unrolled vthread.
TEST(Regression, CudaDuplicateDeclarationVthreadLocalArray) {
    expect_compiles("reduce_middle_axis", R"json([
  {"annotation":"vthread","iter":1,"kind":"annotate","stage":2},
  {"kind":"reorder","order":[1,2,0],"stage":1},
  {"factor":5,"iter":1,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"factor":10,"iter":3,"kind":"split","nparts":false,"stage":1,"tail":"guard"},
  {"kind":"reorder","order":[0,1,3,2,4],"stage":1},
  {"annotation":"vectorize","iter":4,"kind":"annotate","stage":1},
  {"kind":"compute_at","stage":1,"target":2,"target_iter":1},
  {"factor":64,"iter":0,"kind":"split","nparts":false,"stage":2,"tail":"guard"},
  {"annotation":"blockIdx.x","iter":0,"kind":"annotate","stage":2},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":2}
])json");
}

// The same with an element-wise producer ('add_bias') and three kernels.
TEST(Regression, CudaDuplicateDeclarationVthreadElementwise) {
    expect_compiles("elementwise_broadcast", R"json([
  {"annotation":"vthread","iter":1,"kind":"annotate","stage":4},
  {"kind":"compute_at","stage":2,"target":4,"target_iter":1},
  {"factor":256,"iter":0,"kind":"split","nparts":false,"stage":4,"tail":"guard"},
  {"annotation":"blockIdx.x","iter":0,"kind":"annotate","stage":4},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":4},
  {"iters":[0,1],"kind":"fuse","stage":5},
  {"factor":256,"iter":0,"kind":"split","nparts":false,"stage":5,"tail":"guard"},
  {"annotation":"blockIdx.x","iter":0,"kind":"annotate","stage":5},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":5},
  {"iters":[0,1],"kind":"fuse","stage":6},
  {"factor":256,"iter":0,"kind":"split","nparts":false,"stage":6,"tail":"guard"},
  {"annotation":"blockIdx.x","iter":0,"kind":"annotate","stage":6},
  {"annotation":"threadIdx.x","iter":1,"kind":"annotate","stage":6}
])json");
}
