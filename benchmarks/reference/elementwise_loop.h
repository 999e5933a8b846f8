// The reference loop of the elementwise_cpu benchmark (a separate file: it is compiled with
// -O3 -march=native).
#pragma once

#include <cstdint>

/// d[i] = max(a[i] * b[i] + c[i], 0) for i in [0, n).
void elementwise_reference(const float* a, const float* b, const float* c, float* d, int64_t n);
