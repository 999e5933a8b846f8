// The CUDA driver as the runtime sees it: opened with dlopen("libcuda.so.1") on first use, so
// tessel loads and runs CPU work on machines without a driver; there every GPU use throws a
// RuntimeError that says why (no driver library, no device, a driver too old ...).
//
// The runtime works in each device's primary context (the one the CUDA runtime API and PyTorch
// use), so device pointers from PyTorch are valid in tessel's launches and vice versa. Launches
// are asynchronous on the caller's stream (Kernel::launch; null = the legacy default stream);
// NDArray copies to and from the host synchronise.
#pragma once

#include <cstdint>
#include <string>

namespace tessel {

/// True when the driver loaded and reports at least one device. Never throws.
bool cuda_available();
/// Why cuda_available() is false ("libcuda.so.1 not found: ..."); empty when it is true.
std::string cuda_unavailable_reason();
/// Number of CUDA devices; 0 when the driver is unavailable. Never throws.
int cuda_device_count();

/// Properties of one device, read from the driver.
struct CudaDeviceInfo {
    std::string name;
    int compute_major = 0, compute_minor = 0;
    int multiprocessors = 0;
    int max_threads_per_block = 0;
    int warp_size = 0;
    int max_block_dim[3] = {0, 0, 0};
    int max_grid_dim[3] = {0, 0, 0};
    int registers_per_block = 0;
    int64_t shared_bytes_per_block = 0;        ///< without opting in (48 KB)
    int64_t shared_bytes_per_block_optin = 0;  ///< the most a kernel may request dynamically
    int64_t total_memory_bytes = 0;
    int64_t l2_bytes = 0;
    /// "sm_90"
    std::string arch() const;
};

/// The properties of device `id`; RuntimeError when the driver is unavailable or there is no
/// such device.
CudaDeviceInfo cuda_device_info(int id);

/// Waits for all work on device `id`'s primary context; RuntimeError (decoded, e.g.
/// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered") when a kernel failed.
void cuda_synchronize(int id);

}  // namespace tessel
