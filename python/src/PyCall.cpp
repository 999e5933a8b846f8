// The cached call path of compiled kernels (PyCall.h).
#include "PyCall.h"

#include <pybind11/numpy.h>

#include <array>
#include <cstring>

#include "PyNDArray.h"
#include "tessel/runtime/DLPack.h"

namespace tessel::python {

namespace {

constexpr int kMaxDims = 8;        // more: the general path
constexpr size_t kMaxArgs = 32;    // more: the general path
constexpr size_t kMaxEntries = 8;  // distinct argument sets cached per kernel

// DLPack's C exchange API (dlpack.h >= 1.2), the parts tessel calls. Declared here rather than
// in the runtime's DLPack.h: only the Python binding meets Python objects.
struct ExchangeVersion {
    uint32_t major, minor;
};
struct ExchangeHeader {
    ExchangeVersion version;
    ExchangeHeader* prev_api;
};
struct ExchangeAPI {
    ExchangeHeader header;
    void* managed_tensor_allocator;
    void* managed_tensor_from_py_object_no_sync;
    void* managed_tensor_to_py_object_no_sync;
    int (*dltensor_from_py_object_no_sync)(void* py_object, dlpack::DLTensor* out);
    int (*current_work_stream)(int device_type, int32_t device_id, void** out_stream);
};

// What the signature check read of one argument.
struct ArgKey {
    uint8_t kind = 0;  // 1 NDArray, 2 numpy, 3 DLPack exchange
    uint8_t bits = 0, writeable = 0;
    int32_t code = 0;  // numpy's: the type number, 256 and up for a user dtype (ml_dtypes')
    uint16_t lanes = 0;
    int8_t ndim = 0;
    int8_t dev_type = 0;
    int32_t dev_id = 0;
    std::array<int64_t, kMaxDims> shape{}, strides{};

    bool operator==(const ArgKey& o) const {
        if (kind != o.kind || code != o.code || bits != o.bits || writeable != o.writeable ||
            lanes != o.lanes || ndim != o.ndim || dev_type != o.dev_type || dev_id != o.dev_id)
            return false;
        size_t n = static_cast<size_t>(ndim) * sizeof(int64_t);
        return std::memcmp(shape.data(), o.shape.data(), n) == 0 &&
               std::memcmp(strides.data(), o.strides.data(), n) == 0;
    }
};

struct Entry {
    std::vector<ArgKey> keys;
    std::vector<int64_t> shape_vars;  // what check_arguments gave
    std::vector<int64_t> nbytes;      // per argument, for the overlap check
};

// One argument read for the cached path: its key and data pointer.
bool read_ndarray(py::handle h, ArgKey& k, void*& data) {
    const NDArray& x = h.cast<const NDArray&>();
    if (x.ndim() > kMaxDims) return false;
    k.kind = 1;
    k.code = static_cast<uint8_t>(x.dtype().code);
    k.bits = x.dtype().bits;
    k.lanes = x.dtype().lanes;
    k.ndim = static_cast<int8_t>(x.ndim());
    k.dev_type = static_cast<int8_t>(x.device().type);
    k.dev_id = x.device().id;
    k.writeable = 1;
    for (int d = 0; d < k.ndim; ++d) {
        k.shape[d] = x.shape()[d];
        k.strides[d] = x.strides().empty() ? 0 : x.strides()[d];
    }
    data = x.data();
    return true;
}

bool read_numpy(py::handle h, ArgKey& k, void*& data) {
    auto* a = py::detail::array_proxy(h.ptr());
    auto* d = py::detail::array_descriptor_proxy(a->descr);
    if (a->nd > kMaxDims) return false;
    k.kind = 2;
    k.dev_type = static_cast<int8_t>(DeviceType::CPU);
    k.code = d->type_num;
    k.bits = static_cast<uint8_t>(d->byteorder);
    k.lanes = static_cast<uint16_t>(d->kind);
    k.ndim = static_cast<int8_t>(a->nd);
    k.writeable = (a->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) ? 1 : 0;
    for (int i = 0; i < a->nd; ++i) {
        k.shape[i] = a->dimensions[i];
        k.strides[i] = a->strides[i];
    }
    data = a->data;
    return true;
}

// The exchange API of `type`, or null; looked up once per type (types live as long as Python).
const ExchangeAPI* exchange_api(PyTypeObject* type) {
    static std::vector<std::pair<PyTypeObject*, const ExchangeAPI*>> seen;
    for (const auto& [t, api] : seen)
        if (t == type) return api;
    const ExchangeAPI* api = nullptr;
    for (const char* name : {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"}) {
        PyObject* o = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), name);
        if (!o) {
            PyErr_Clear();
            continue;
        }
        void* p = nullptr;
        if (PyCapsule_CheckExact(o))
            p = PyCapsule_GetPointer(o, PyCapsule_GetName(o));
        else if (PyLong_Check(o))
            p = PyLong_AsVoidPtr(o);
        if (!p) PyErr_Clear();
        Py_DECREF(o);
        auto* candidate = static_cast<const ExchangeAPI*>(p);
        if (candidate && candidate->header.version.major == 1 &&
            candidate->dltensor_from_py_object_no_sync && candidate->current_work_stream) {
            api = candidate;
            break;
        }
    }
    seen.emplace_back(type, api);
    return api;
}

bool read_exchange(py::handle h, const ExchangeAPI* api, ArgKey& k, void*& data) {
    dlpack::DLTensor t{};
    if (api->dltensor_from_py_object_no_sync(h.ptr(), &t) != 0) {
        PyErr_Clear();
        return false;
    }
    if (t.ndim > kMaxDims || t.ndim < 0) return false;
    k.kind = 3;
    k.code = t.dtype.code;
    k.bits = t.dtype.bits;
    k.lanes = t.dtype.lanes;
    k.ndim = static_cast<int8_t>(t.ndim);
    k.dev_type = static_cast<int8_t>(t.device.device_type);
    k.dev_id = t.device.device_id;
    k.writeable = 1;
    for (int i = 0; i < t.ndim; ++i) {
        k.shape[i] = t.shape[i];
        k.strides[i] = t.strides ? t.strides[i] : 0;
    }
    data = static_cast<char*>(t.data) + t.byte_offset;
    return true;
}

uintptr_t stream_keyword(const py::kwargs& kwargs, bool* given) {
    uintptr_t stream = 0;
    *given = false;
    for (const auto& [key, value] : kwargs) {
        std::string k = py::str(key);
        if (k != "stream")
            throw py::type_error("a kernel call takes arrays and the keyword 'stream', not '" + k +
                                 "'");
        if (value.is_none()) continue;
        if (!py::isinstance<py::int_>(value))
            throw py::type_error(
                "a kernel call's 'stream' is an int CUstream handle (0: the "
                "legacy default stream), not " +
                py_type_name(value));
        stream = value.cast<uintptr_t>();
        *given = true;
    }
    return stream;
}

}  // namespace

class CallCache {
public:
    explicit CallCache(const Kernel& k) {
        const KernelSignature& sig = k.signature();
        for (size_t i = 0; i < sig.args.size(); ++i) {
            const ArgSpec& a = sig.args[i];
            align.push_back(a.alignment > 0 ? a.alignment : a.dtype.bytes());
            written.push_back(a.is_written());
            for (size_t j = i + 1; j < sig.args.size(); ++j) {
                const ArgSpec& b = sig.args[j];
                if ((a.is_written() || b.is_written()) && !a.in_place && !b.in_place)
                    overlap_pairs.emplace_back(i, j);
            }
        }
    }
    const Entry* find(const ArgKey* keys, size_t n) const {
        for (const Entry& e : entries) {
            bool same = e.keys.size() == n;
            for (size_t i = 0; same && i < n; ++i) same = e.keys[i] == keys[i];
            if (same) return &e;
        }
        return nullptr;
    }
    // Whether the pointers pass what the cached check does not cover.
    bool pointers_ok(const Entry& e, void* const* data) const {
        for (size_t i = 0; i < e.keys.size(); ++i) {
            auto p = reinterpret_cast<uintptr_t>(data[i]);
            if (!p || (align[i] > 1 && p % static_cast<uintptr_t>(align[i]) != 0)) return false;
            if (written[i] && !e.keys[i].writeable) return false;
        }
        for (auto [i, j] : overlap_pairs) {
            auto a = reinterpret_cast<uintptr_t>(data[i]), b = reinterpret_cast<uintptr_t>(data[j]);
            if (e.nbytes[i] && e.nbytes[j] && a < b + e.nbytes[j] && b < a + e.nbytes[i])
                return false;
        }
        return true;
    }

    std::deque<Entry> entries;  // never erased: a running call may hold an entry
    std::vector<int64_t> align;
    std::vector<bool> written;
    std::vector<std::pair<size_t, size_t>> overlap_pairs;
};

std::shared_ptr<CallCache> make_call_cache(const Kernel& kernel) {
    return std::make_shared<CallCache>(kernel);
}

void call_kernel(const Kernel& kernel, CallCache& cache, const py::args& args,
                 const py::kwargs& kwargs) {
    bool stream_given = false;
    uintptr_t stream = kwargs.empty() ? 0 : stream_keyword(kwargs, &stream_given);
    size_t n = args.size();
    std::array<ArgKey, kMaxArgs> keys;
    std::array<void*, kMaxArgs> data;
    const ExchangeAPI* producer = nullptr;
    bool cacheable = n <= kMaxArgs && n == kernel.signature().args.size();
    for (size_t i = 0; cacheable && i < n; ++i) {
        py::handle h = args[i];
        keys[i] = ArgKey{};
        if (py::isinstance<py::array>(h)) {
            cacheable = read_numpy(h, keys[i], data[i]);
        } else if (py::isinstance<NDArray>(h)) {
            cacheable = read_ndarray(h, keys[i], data[i]);
        } else if (const ExchangeAPI* api = exchange_api(Py_TYPE(h.ptr()))) {
            cacheable = read_exchange(h, api, keys[i], data[i]);
            producer = api;
        } else {
            cacheable = false;
        }
    }
    // A CUDA tensor of a producer with the exchange API: the kernel runs on the producer's
    // current stream (torch.cuda.current_stream()) unless the call names one, on either path.
    for (size_t i = 0; producer && !stream_given && cacheable && i < n; ++i) {
        if (keys[i].kind != 3 || keys[i].dev_type != static_cast<int8_t>(DeviceType::CUDA))
            continue;
        void* s = nullptr;
        if (producer->current_work_stream(keys[i].dev_type, keys[i].dev_id, &s) != 0)
            throw py::error_already_set();
        stream = reinterpret_cast<uintptr_t>(s);
        break;
    }
    const Entry* hit = cacheable ? cache.find(keys.data(), n) : nullptr;
    if (hit && cache.pointers_ok(*hit, data.data())) {
        Device device =
            n == 0 ? cpu()
                   : Device{static_cast<DeviceType>(hit->keys[0].dev_type), hit->keys[0].dev_id};
        py::gil_scoped_release release;
        kernel.launch_checked(data.data(), device, hit->shape_vars,
                              reinterpret_cast<void*>(stream));
        return;
    }
    // The general path: converts (copies where needed) and checks everything.
    ArgBinding b = bind_arguments(kernel.signature(), args, stream);
    std::vector<int64_t> shape_vars = check_arguments(kernel.signature(), b.arrays);
    if (cacheable && b.copy_back.empty() && cache.entries.size() < kMaxEntries) {
        Entry e;
        e.keys.assign(keys.begin(), keys.begin() + static_cast<long>(n));
        e.shape_vars = shape_vars;
        for (const NDArray& a : b.arrays) e.nbytes.push_back(a.nbytes());
        bool direct = true;  // the arrays the kernel saw are the arguments' own memory
        for (size_t i = 0; i < n; ++i) direct = direct && b.arrays[i].data() == data[i];
        if (direct) cache.entries.push_back(std::move(e));
    }
    {
        py::gil_scoped_release release;
        kernel.launch(b.arrays, reinterpret_cast<void*>(stream));
    }
    finish_arguments(b);
}

}  // namespace tessel::python
