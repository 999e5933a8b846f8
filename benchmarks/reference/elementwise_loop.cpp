// The reference of the elementwise_cpu benchmark: d = relu(a * b + c) as a plain C++ loop,
// compiled with -O3 -march=native (benchmarks/CMakeLists.txt).
#include "reference/elementwise_loop.h"

#include <algorithm>

void elementwise_reference(const float* a, const float* b, const float* c, float* d, int64_t n) {
    for (int64_t i = 0; i < n; ++i) d[i] = std::max(a[i] * b[i] + c[i], 0.0f);
}
