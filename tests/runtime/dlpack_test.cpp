// DLPack export and import, with every deleter counted.
#include <gtest/gtest.h>

#include "tessel/Error.h"
#include "tessel/runtime/NDArray.h"

namespace tessel {
namespace {

TEST(DLPack, ExportKeepsArrayAliveUntilDeleter) {
    int released = 0;
    std::vector<int32_t> storage{1, 2, 3, 4, 5, 6};
    dlpack::DLManagedTensor* t = nullptr;
    {
        std::shared_ptr<void> keep(nullptr, [&](void*) { ++released; });
        NDArray a = NDArray::from_external(storage.data(), {2, 3}, int32(), cpu(), keep);
        t = a.to_dlpack();
    }
    EXPECT_EQ(released, 0);  // the exported tensor still holds a view
    EXPECT_EQ(t->dl_tensor.data, storage.data());
    EXPECT_EQ(t->dl_tensor.ndim, 2);
    EXPECT_EQ(t->dl_tensor.shape[0], 2);
    EXPECT_EQ(t->dl_tensor.shape[1], 3);
    EXPECT_EQ(t->dl_tensor.strides, nullptr);
    EXPECT_EQ(t->dl_tensor.device.device_type, dlpack::kDLCPU);
    EXPECT_EQ(t->dl_tensor.dtype.code, dlpack::kDLInt);
    EXPECT_EQ(t->dl_tensor.dtype.bits, 32);
    t->deleter(t);
    EXPECT_EQ(released, 1);
}

struct Producer {
    static inline int deleted = 0;
    int64_t shape[2] = {2, 2};
    int64_t strides[2] = {1, 2};
    float data[4] = {1, 2, 3, 4};
    dlpack::DLManagedTensor managed{};

    static dlpack::DLManagedTensor* make(bool with_strides, uint8_t code = dlpack::kDLFloat) {
        auto* p = new Producer;
        p->managed.dl_tensor = {p->data,  {dlpack::kDLCPU, 0},
                                2,        {code, 32, 1},
                                p->shape, with_strides ? p->strides : nullptr,
                                0};
        p->managed.manager_ctx = p;
        p->managed.deleter = [](dlpack::DLManagedTensor* self) {
            ++deleted;
            delete static_cast<Producer*>(self->manager_ctx);
        };
        return &p->managed;
    }
};

TEST(DLPack, ImportRunsDeleterOnceWhenLastViewDies) {
    Producer::deleted = 0;
    {
        NDArray a = NDArray::from_dlpack(Producer::make(false));
        NDArray b = a;
        EXPECT_EQ(a.dtype(), float32());
        EXPECT_EQ(a.at<float>(3), 4.f);
        a = NDArray();
        EXPECT_EQ(Producer::deleted, 0);
        NDArray strided = NDArray::from_dlpack(Producer::make(true));
        EXPECT_FALSE(strided.is_contiguous());
    }
    EXPECT_EQ(Producer::deleted, 2);
}

TEST(DLPack, RejectedImportStillRunsDeleterOnce) {
    Producer::deleted = 0;
    EXPECT_THROW(NDArray::from_dlpack(Producer::make(false, dlpack::kDLComplex)), RuntimeError);
    EXPECT_EQ(Producer::deleted, 1);
    EXPECT_THROW(NDArray::from_dlpack(nullptr), RuntimeError);
}

TEST(DLPack, RoundTripSharesMemoryAndReleasesOnce) {
    int released = 0;
    std::vector<double> storage(6, 1.5);
    {
        std::shared_ptr<void> keep(nullptr, [&](void*) { ++released; });
        NDArray a = NDArray::from_external(storage.data(), {6}, float64(), cpu(), keep);
        keep.reset();
        NDArray b = NDArray::from_dlpack(a.to_dlpack());
        a = NDArray();
        EXPECT_EQ(released, 0);
        EXPECT_EQ(b.data(), storage.data());
        EXPECT_EQ(b.at<double>(5), 1.5);
    }
    EXPECT_EQ(released, 1);
}

}  // namespace
}  // namespace tessel
