// The GEMM schedule the gemm_cpu benchmark measures (the C++ GEMM tutorial's last step).
#pragma once

#include <cstdint>
#include <string>

#include "tessel/runtime/Module.h"

/// Builds C = A · B for n×n float32 row-major matrices, kernel `name`, for the host CPU.
tessel::Module build_gemm(int64_t n, const std::string& name);
