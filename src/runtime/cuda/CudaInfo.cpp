// Placeholder until the dlopen'd driver lands on this branch: no GPU.
#include "tessel/Error.h"
#include "tessel/runtime/CUDA.h"

namespace tessel {

bool cuda_available() {
    return false;
}
std::string cuda_unavailable_reason() {
    return "the CUDA driver is not wired up yet";
}
int cuda_device_count() {
    return 0;
}
std::string CudaDeviceInfo::arch() const {
    return "sm_" + std::to_string(compute_major) + std::to_string(compute_minor);
}
CudaDeviceInfo cuda_device_info(int) {
    TESSEL_THROW(RuntimeError) << cuda_unavailable_reason();
}
void cuda_synchronize(int) {
    TESSEL_THROW(RuntimeError) << cuda_unavailable_reason();
}

}  // namespace tessel
