#include "tessel/runtime/NDArray.h"

#include "tessel/Error.h"

namespace tessel {

/// What every view of one array shares. Immutable after construction.
struct NDArray::State {
    std::shared_ptr<void> storage;  // owns the memory, or keeps external memory alive
    void* base = nullptr;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    DataType dtype;
    Device device;
    int64_t byte_offset = 0;
};

namespace internal {
namespace {

void check_shape(const std::vector<int64_t>& shape, DataType dtype, const char* caller) {
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] < 0) {
            TESSEL_THROW(RuntimeError)
                << caller << ": extent " << shape[i] << " of dimension " << i << " is negative";
        }
    }
    if (dtype.bits == 0 || dtype.lanes == 0) {
        TESSEL_THROW(RuntimeError) << caller << ": dtype " << dtype.str() << " has no bytes";
    }
}

}  // namespace
}  // namespace internal

NDArray NDArray::empty(std::vector<int64_t> shape, DataType dtype, Device device) {
    internal::check_shape(shape, dtype, "NDArray::empty");
    auto api = device_api(device);
    auto state = std::make_shared<State>();
    state->shape = std::move(shape);
    state->dtype = dtype;
    state->device = device;
    NDArray result;
    result.state_ = state;
    // Arrays of a page or more start on a page: a kernel's speed depends on where its buffers
    // lie relative to each other (one 1024^3 GEMM ran at 310 GFLOP/s on 64-byte aligned arrays and
    // at 459 on page-aligned ones). (The tuner's worker places its arrays 16 bytes past a page
    // by default, where NumPy's large arrays lie: MeasureOptions::array_offset.)
    int64_t align = device.type == DeviceType::CPU && result.nbytes() >= kPageBytes
                        ? kPageBytes
                        : kAllocAlignment;
    void* ptr = api->allocate(device, static_cast<size_t>(result.nbytes()), align);
    state->base = ptr;
    state->storage = std::shared_ptr<void>(ptr, [api, device](void* p) { api->free(device, p); });
    return result;
}

NDArray NDArray::from_external(void* data, std::vector<int64_t> shape, DataType dtype,
                               Device device, std::shared_ptr<void> keep_alive,
                               std::vector<int64_t> strides, int64_t byte_offset) {
    internal::check_shape(shape, dtype, "NDArray::from_external");
    if (!strides.empty() && strides.size() != shape.size()) {
        TESSEL_THROW(RuntimeError) << "NDArray::from_external: " << strides.size()
                                   << " strides for " << shape.size() << " dimensions";
    }
    if (byte_offset < 0) {
        TESSEL_THROW(RuntimeError) << "NDArray::from_external: negative byte offset";
    }
    auto state = std::make_shared<State>();
    state->storage = std::move(keep_alive);
    state->base = data;
    state->shape = std::move(shape);
    state->strides = std::move(strides);
    state->dtype = dtype;
    state->device = device;
    state->byte_offset = byte_offset;
    NDArray result;
    result.state_ = std::move(state);
    return result;
}

NDArray NDArray::reshape(std::vector<int64_t> shape) const {
    const State& s = state();
    internal::check_shape(shape, s.dtype, "NDArray::reshape");
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    if (n != num_elements() || !is_contiguous()) {
        TESSEL_THROW(RuntimeError) << "NDArray::reshape: " << (is_contiguous() ? "" : "a strided ")
                                   << "array of " << num_elements() << " elements viewed as "
                                   << n << " elements";
    }
    auto view = std::make_shared<State>(s);
    view->shape = std::move(shape);
    view->strides.clear();
    NDArray result;
    result.state_ = std::move(view);
    return result;
}

const NDArray::State& NDArray::state() const {
    if (!state_) TESSEL_THROW(RuntimeError) << "use of a null NDArray";
    return *state_;
}

const std::vector<int64_t>& NDArray::shape() const {
    return state().shape;
}
const std::vector<int64_t>& NDArray::strides() const {
    return state().strides;
}
DataType NDArray::dtype() const {
    return state().dtype;
}
Device NDArray::device() const {
    return state().device;
}
int64_t NDArray::byte_offset() const {
    return state().byte_offset;
}

void* NDArray::data() const {
    if (!state_ || !state_->base) return nullptr;
    return static_cast<char*>(state_->base) + state_->byte_offset;
}

int64_t NDArray::num_elements() const {
    int64_t n = 1;
    for (int64_t extent : shape()) n *= extent;
    return n;
}

bool NDArray::is_contiguous() const {
    const auto& s = state();
    if (s.strides.empty()) return true;
    int64_t expected = 1;
    for (size_t i = s.shape.size(); i-- > 0;) {
        if (s.shape[i] != 1 && s.strides[i] != expected) return false;
        expected *= s.shape[i];
    }
    return true;
}

int64_t NDArray::alignment() const {
    auto address = reinterpret_cast<uintptr_t>(data());
    if (address == 0) return 0;
    int64_t align = 1;
    while (align < kAllocAlignment && address % (2 * align) == 0) align *= 2;
    return align;
}

void NDArray::check_host_access(int64_t element_bytes) const {
    if (element_bytes != dtype().bytes()) {
        TESSEL_THROW(RuntimeError) << "NDArray::data_as: element size " << element_bytes
                                   << " does not match dtype " << dtype().str();
    }
    if (device().type != DeviceType::CPU || !is_contiguous()) {
        TESSEL_THROW(RuntimeError)
            << "NDArray::data_as needs a contiguous CPU array, not one on " << device().str();
    }
}

void NDArray::copy_from(const void* host_src, int64_t bytes) {
    if (!is_contiguous() || bytes != nbytes()) {
        TESSEL_THROW(RuntimeError)
            << "NDArray::copy_from: " << bytes << " bytes into a "
            << (is_contiguous() ? "" : "non-contiguous ") << "array of " << nbytes() << " bytes";
    }
    device_api(device())->copy_to_device(device(), data(), host_src, static_cast<size_t>(bytes));
}

void NDArray::copy_to(void* host_dst, int64_t bytes) const {
    if (!is_contiguous() || bytes != nbytes()) {
        TESSEL_THROW(RuntimeError)
            << "NDArray::copy_to: " << bytes << " bytes from a "
            << (is_contiguous() ? "" : "non-contiguous ") << "array of " << nbytes() << " bytes";
    }
    device_api(device())->copy_to_host(device(), host_dst, data(), static_cast<size_t>(bytes));
}

NDArray NDArray::copy_to_device(Device target) const {
    if (!is_contiguous()) {
        TESSEL_THROW(RuntimeError) << "NDArray::copy_to_device: the array is not contiguous";
    }
    NDArray result = empty(shape(), dtype(), target);
    if (device().type == DeviceType::CPU) {
        result.copy_from(data(), nbytes());
    } else if (target.type == DeviceType::CPU) {
        copy_to(result.data(), nbytes());
    } else if (target.type == device().type) {
        device_api(target)->copy_between(target, result.data(), device(), data(),
                                         static_cast<size_t>(nbytes()));
    } else {
        std::vector<char> staging(static_cast<size_t>(nbytes()));
        copy_to(staging.data(), nbytes());
        result.copy_from(staging.data(), nbytes());
    }
    return result;
}

}  // namespace tessel
