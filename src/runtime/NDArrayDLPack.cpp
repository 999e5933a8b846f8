// DLPack export and import of NDArrays.
#include "tessel/Error.h"
#include "tessel/runtime/NDArray.h"

namespace tessel {
namespace internal {
namespace {

/// The manager_ctx of an exported tensor: a view that keeps the memory (and the shape and
/// strides arrays the DLTensor points into) alive until the consumer calls the deleter.
struct ExportedTensor {
    NDArray array;
    dlpack::DLManagedTensor managed{};
};

void delete_exported(dlpack::DLManagedTensor* self) {
    delete static_cast<ExportedTensor*>(self->manager_ctx);
}

Device device_from_dlpack(dlpack::DLDevice device) {
    switch (device.device_type) {
        case dlpack::kDLCPU: return {DeviceType::CPU, device.device_id};
        case dlpack::kDLCUDA: return {DeviceType::CUDA, device.device_id};
        default:
            TESSEL_THROW(RuntimeError) << "NDArray::from_dlpack: DLPack device type "
                                       << int(device.device_type) << " is not supported by tessel";
    }
}

}  // namespace
}  // namespace internal

dlpack::DLManagedTensor* NDArray::to_dlpack() const {
    auto* exported = new internal::ExportedTensor{*this, {}};
    const NDArray& a = exported->array;
    dlpack::DLTensor& t = exported->managed.dl_tensor;
    // The first element's address with a zero byte offset: the base pointer is private.
    t.data = a.data();
    t.device = {static_cast<dlpack::DLDeviceType>(a.device().type), a.device().id};
    t.ndim = static_cast<int32_t>(a.ndim());
    t.dtype = a.dtype().to_dlpack();
    t.shape = const_cast<int64_t*>(a.shape().data());
    t.strides = a.strides().empty() ? nullptr : const_cast<int64_t*>(a.strides().data());
    t.byte_offset = 0;
    exported->managed.manager_ctx = exported;
    exported->managed.deleter = internal::delete_exported;
    return &exported->managed;
}

NDArray NDArray::from_dlpack(dlpack::DLManagedTensor* tensor) {
    if (!tensor) TESSEL_THROW(RuntimeError) << "NDArray::from_dlpack: null tensor";
    // Take ownership first, so that a rejected tensor is released too.
    std::shared_ptr<void> owner(tensor, [](void* p) {
        auto* m = static_cast<dlpack::DLManagedTensor*>(p);
        if (m->deleter) m->deleter(m);
    });
    const dlpack::DLTensor& t = tensor->dl_tensor;
    if (t.ndim < 0 || (t.ndim > 0 && !t.shape)) {
        TESSEL_THROW(RuntimeError) << "NDArray::from_dlpack: malformed tensor (ndim " << t.ndim
                                   << (t.shape ? ")" : ", null shape)");
    }
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    std::vector<int64_t> strides;
    if (t.strides) strides.assign(t.strides, t.strides + t.ndim);
    Device device = internal::device_from_dlpack(t.device);
    DataType dtype = DataType::from_dlpack(t.dtype);
    return from_external(t.data, std::move(shape), dtype, device, std::move(owner),
                         std::move(strides), static_cast<int64_t>(t.byte_offset));
}

}  // namespace tessel
