// The last step of the C++ GEMM tutorial (cpu_gemm.cpp), which the gemm_cpu benchmark measures.
#pragma once

#include <cstdint>
#include <string>

#include "tessel/runtime/Module.h"
#include "tessel/schedule/Schedule.h"

/// Applies the tutorial's final GEMM schedule to `s`, a fresh schedule of C = A · B (C computed by
/// stage `c`, B the placeholder `B`); see gemm_schedule.cpp.
void schedule_gemm(tessel::Schedule& s, const tessel::Tensor& B, const tessel::Tensor& C);

/// Checks `samples` entries of c = a · b (n×n, row-major), chosen at random, against
/// double-precision dot products; returns an empty string when all match, else a message naming
/// the first mismatch.
std::string check_gemm_sampled(int64_t n, const float* a, const float* b, const float* c,
                               int samples);

/// Defines C = A · B for n×n float32 row-major matrices, applies schedule_gemm and builds kernel
/// `name` for the host CPU.
tessel::Module build_gemm(int64_t n, const std::string& name);
