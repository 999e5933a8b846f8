// NDArray: the runtime's n-dimensional array, the argument type of compiled kernels.
//
//   NDArray A = NDArray::empty({64, 32}, float32());          // tessel-owned, 64-byte aligned
//   NDArray B = NDArray::from_external(ptr, {64}, float32(), cpu(), keep_alive);  // wraps memory
//   dlpack::DLManagedTensor* t = A.to_dlpack();                // hand to numpy / PyTorch
//
// An NDArray is a cheap, shared handle: copies view the same memory, which is released (or the
// external deleter run) when the last view dies. Strides count elements; empty strides mean
// compact row-major. Memory tessel allocates is aligned to 64 bytes; external memory is assumed
// aligned only to its element size (alignment() reports what the address actually gives).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tessel/runtime/DLPack.h"
#include "tessel/runtime/DataType.h"
#include "tessel/runtime/Device.h"

namespace tessel {

/// An n-dimensional array on a device (see the file comment).
class NDArray {
public:
    /// Alignment of memory tessel allocates (at least).
    static constexpr int64_t kAllocAlignment = 64;
    /// Host arrays of at least this many bytes start on a page boundary.
    static constexpr int64_t kPageBytes = 4096;

    /// A null array: no data, no shape (defined() is false).
    NDArray() = default;

    /// A new compact array; contents uninitialised. Throws RuntimeError on a negative extent, a
    /// zero-bit dtype, or a device that is unusable (CUDA without a driver or device: the
    /// message says why).
    static NDArray empty(std::vector<int64_t> shape, DataType dtype, Device device = cpu());
    /// Wraps external memory without copying. `keep_alive` is released (its deleter run) when
    /// the last view of the array dies; it may be null when the caller guarantees the memory
    /// outlives every view. Strides in elements (empty = compact); the first element is at
    /// `data + byte_offset`.
    static NDArray from_external(void* data, std::vector<int64_t> shape, DataType dtype,
                                 Device device, std::shared_ptr<void> keep_alive,
                                 std::vector<int64_t> strides = {}, int64_t byte_offset = 0);
    /// Takes ownership of a DLPack tensor: its deleter runs exactly once, when the last view of
    /// the returned array dies (or at once, if the tensor is rejected with RuntimeError).
    static NDArray from_dlpack(dlpack::DLManagedTensor* tensor);

    /// Exports a view as DLPack. The array's memory stays alive until the consumer calls the
    /// returned tensor's deleter (exactly once).
    dlpack::DLManagedTensor* to_dlpack() const;

    bool defined() const { return state_ != nullptr; }
    const std::vector<int64_t>& shape() const;
    /// Strides in elements; empty when the array was made compact.
    const std::vector<int64_t>& strides() const;
    DataType dtype() const;
    Device device() const;
    int64_t ndim() const { return static_cast<int64_t>(shape().size()); }
    /// Offset in bytes of the first element from the base pointer.
    int64_t byte_offset() const;
    /// Address of the first element (base pointer + byte offset); null for a null array.
    void* data() const;
    /// Number of elements (product of the shape; 1 for a 0-d array).
    int64_t num_elements() const;
    /// Bytes of a compact array of this shape and dtype.
    int64_t nbytes() const { return num_elements() * dtype().bytes(); }
    /// True when the elements are compact row-major (empty strides, or strides equal to the
    /// compact ones; extents of 1 may have any stride).
    bool is_contiguous() const;
    /// The largest power of two dividing data()'s address, capped at 64 (0 for null data).
    int64_t alignment() const;

    /// Copies `bytes` from host memory into the array; needs a contiguous array and `bytes` ==
    /// nbytes() (RuntimeError otherwise). For a CUDA array the copy is ordered after the work on
    /// the legacy default stream and `host_src` may be reused when the call returns.
    void copy_from(const void* host_src, int64_t bytes);
    /// Copies the array into `bytes` of host memory; same requirements as copy_from. For a CUDA
    /// array the copy waits for the work on the legacy default stream (kernels launched there,
    /// e.g. by Kernel::operator()) and is complete when the call returns.
    void copy_to(void* host_dst, int64_t bytes) const;
    /// A view of this contiguous array with another shape of the same number of elements (the
    /// memory shared: writes through either show in both). RuntimeError otherwise.
    NDArray reshape(std::vector<int64_t> shape) const;
    /// A new array of the same shape and dtype on `device`, holding a copy of the contents of
    /// this contiguous array: any direction between the host and devices, device to device
    /// included (on the legacy default stream when both are CUDA).
    NDArray copy_to_device(Device device) const;

    /// Typed pointer to the first element of a contiguous CPU array, for tests and tools.
    /// Throws RuntimeError when T's size is not the element size or the array is not on the CPU.
    template <typename T>
    T* data_as() const {
        check_host_access(static_cast<int64_t>(sizeof(T)));
        return static_cast<T*>(data());
    }
    /// The element at row-major position `flat` of a contiguous CPU array.
    template <typename T>
    T& at(int64_t flat) const {
        return data_as<T>()[flat];
    }

private:
    struct State;
    void check_host_access(int64_t element_bytes) const;
    const State& state() const;
    std::shared_ptr<State> state_;
};

}  // namespace tessel
