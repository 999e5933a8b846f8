// CUDA C generation (placeholder until the generator lands on this branch).
#include "codegen/cuda/CodeGenCUDA.h"

#include "tessel/Error.h"

namespace tessel::internal {

CudaCode codegen_cuda(const LoweredFunc& f, const std::vector<Var>&, const CudaCodegenOptions&) {
    TESSEL_THROW(CompileError) << "cuda: code generation for '" << f.name << "' is not built yet";
}

}  // namespace tessel::internal
