// The last step of the C++ GEMM tutorial (cpu_gemm.cpp), which the gemm_cpu benchmark measures.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/runtime/Module.h"
#include "tessel/schedule/Schedule.h"

/// Applies the tutorial's final GEMM schedule to `s`, a fresh schedule of C = A · B (C computed by
/// stage `c`, B the placeholder `B`); see gemm_schedule.cpp.
void schedule_gemm(tessel::Schedule& s, const tessel::Tensor& B, const tessel::Tensor& C);

/// Defines C = A · B for n×n float32 row-major matrices, applies schedule_gemm and builds kernel
/// `name` for the host CPU.
tessel::Module build_gemm(int64_t n, const std::string& name);
