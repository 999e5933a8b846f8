// NDArray and numpy / DLPack interop: ts.nd.array, ts.nd.empty, ts.nd.from_dlpack, .numpy(),
// __dlpack__ / __dlpack_device__, and the conversion of kernel arguments.
//
// Lifetimes: an NDArray wrapping a numpy array holds a reference to it (released with the GIL
// taken, from whichever thread drops the last view); a numpy view of an NDArray holds the
// NDArray through its `base`; a DLPack capsule owns its tensor until a consumer renames it
// "used_dltensor", so the tensor's deleter runs exactly once: by the consumer, or by the capsule.
//
// Streams (the DLPack Python specification's handshake): importing a CUDA tensor passes the
// consumer's stream to the producer's __dlpack__(stream=...) (1: the legacy default stream), so
// the producer orders its pending work before it; exporting a CUDA array to a consumer that names
// a stream synchronises the device first (tessel does not track which stream wrote an array).
// Copies between the host and a device release the GIL.
//
// bfloat16: numpy has none of its own; tessel's bfloat16 arrays are numpy arrays of ml_dtypes'
// bfloat16 (the dtype JAX uses), an optional import made only when such an array is asked for.
#include <pybind11/numpy.h>

#include "PyCommon.h"
#include "PyNDArray.h"

namespace tessel::python {

namespace {

std::shared_ptr<void> keep_python_alive(py::object o) {
    return std::shared_ptr<void>(new py::object(std::move(o)), [](void* p) {
        if (!Py_IsInitialized()) return;  // interpreter gone: leak rather than crash
        py::gil_scoped_acquire gil;
        delete static_cast<py::object*>(p);
    });
}

// Whether `d` is ml_dtypes' bfloat16. An array of that dtype exists only once ml_dtypes has been
// imported, so this looks in sys.modules and imports nothing. Compared by equality, not by name:
// ml_dtypes' other dtypes (float8_e4m3fn ...) share its kind, 'V'.
bool is_ml_dtypes_bfloat16(const py::dtype& d) {
    py::object ml_dtypes = py::module_::import("sys").attr("modules").attr("get")("ml_dtypes");
    return !ml_dtypes.is_none() && d.equal(py::dtype::from_args(ml_dtypes.attr("bfloat16")));
}

// ml_dtypes' bfloat16, imported on first use.
py::dtype ml_dtypes_bfloat16() {
    try {
        return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
    } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_ImportError)) throw;
        throw py::import_error(
            "a bfloat16 numpy array needs the ml_dtypes package (pip install ml_dtypes): numpy "
            "has no bfloat16 of its own (or exchange the array through DLPack, e.g. with torch)");
    }
}

DataType dtype_of_numpy(const py::dtype& d) {
    char kind = d.kind();
    uint8_t bits = static_cast<uint8_t>(d.itemsize() * 8);
    switch (kind) {
        case 'f': return DataType{DataTypeCode::Float, bits, 1};
        case 'i': return DataType{DataTypeCode::Int, bits, 1};
        case 'u': return DataType{DataTypeCode::UInt, bits, 1};
        case 'b': return DataType{DataTypeCode::Bool, 8, 1};
        case 'V':
            if (is_ml_dtypes_bfloat16(d)) return DataType{DataTypeCode::BFloat, 16, 1};
            break;
        default: break;
    }
    throw py::type_error("numpy dtype " + py::str(py::handle(d)).cast<std::string>() +
                         " has no tessel equivalent (float, int, uint, bool or ml_dtypes' "
                         "bfloat16)");
}

py::dtype numpy_dtype_of(DataType t) {
    if (t.lanes == 1) {
        switch (t.code) {
            case DataTypeCode::Float: return py::dtype("float" + std::to_string(t.bits));
            case DataTypeCode::Int: return py::dtype("int" + std::to_string(t.bits));
            case DataTypeCode::UInt: return py::dtype("uint" + std::to_string(t.bits));
            case DataTypeCode::Bool: return py::dtype("bool");
            case DataTypeCode::BFloat:
                if (t.bits == 16) return ml_dtypes_bfloat16();
                break;
            default: break;
        }
    }
    throw py::type_error("tessel dtype " + t.str() +
                         " has no numpy equivalent (exchange it through DLPack, e.g. with torch)");
}

bool native_byte_order(const py::array& a) {
    char order = a.dtype().attr("byteorder").cast<std::string>()[0];
    return order == '=' || order == '|';
}

std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size());
    int64_t acc = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        s[i] = acc;
        acc *= shape[i];
    }
    return s;
}

}  // namespace

NDArray wrap_numpy(const py::array& a, std::string* why_not) {
    auto fail = [&](const std::string& reason) {
        if (why_not) *why_not = reason;
        return NDArray();
    };
    if (!native_byte_order(a)) return fail("its byte order is not the machine's");
    DataType dt = dtype_of_numpy(a.dtype());
    int64_t item = a.itemsize();
    std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim()), strides;
    for (py::ssize_t i = 0; i < a.ndim(); ++i) {
        if (a.strides(i) % item != 0) return fail("a stride is not a multiple of the element size");
        if (a.strides(i) < 0 && a.shape(i) > 1) return fail("it has a negative stride");
        strides.push_back(a.strides(i) < 0 ? 1 : a.strides(i) / item);
    }
    void* data = const_cast<void*>(a.data());
    return NDArray::from_external(data, shape, dt, cpu(), keep_python_alive(a), strides, 0);
}

py::array numpy_view(const NDArray& x) {
    if (x.device().type != DeviceType::CPU)
        throw py::value_error("numpy_view: the array is on " + x.device().str() + ", not the CPU");
    py::dtype dt = numpy_dtype_of(x.dtype());
    std::vector<int64_t> strides = x.strides().empty() ? compact_strides(x.shape()) : x.strides();
    std::vector<py::ssize_t> shape(x.shape().begin(), x.shape().end()), bytes;
    for (int64_t s : strides) bytes.push_back(s * x.dtype().bytes());
    py::capsule base(new NDArray(x), [](void* p) { delete static_cast<NDArray*>(p); });
    return py::array(dt, shape, bytes, x.data(), base);
}

NDArray copy_numpy(const py::array& a, Device device) {
    py::array native =
        native_byte_order(a) ? a : py::array(a.attr("astype")(a.dtype().attr("newbyteorder")("=")));
    DataType dt = dtype_of_numpy(native.dtype());
    std::vector<int64_t> shape(native.shape(), native.shape() + native.ndim());
    NDArray out = NDArray::empty(shape, dt, device);
    if (device.type == DeviceType::CPU) {
        py::module_::import("numpy").attr("copyto")(numpy_view(out), native);
    } else {
        py::array c = py::module_::import("numpy").attr("ascontiguousarray")(native);
        py::gil_scoped_release release;
        out.copy_from(c.data(), out.nbytes());
    }
    return out;
}

namespace {

// The DLPack device type of `obj` (its __dlpack_device__), or kDLCPU when it does not say.
int dlpack_device_type(const py::object& obj) {
    if (!py::hasattr(obj, "__dlpack_device__")) return dlpack::kDLCPU;
    py::tuple d = obj.attr("__dlpack_device__")();
    return d[0].cast<int>();
}

NDArray nd_array(py::object obj, py::object dtype, py::object device, py::object copy) {
    Device dev = to_device(device);
    if (!py::isinstance<NDArray>(obj) && !py::isinstance<py::array>(obj) &&
        py::hasattr(obj, "__dlpack__") && dlpack_device_type(obj) == dlpack::kDLCPU) {
        // A host tensor other than numpy's (torch, JAX ...): viewed through DLPack, then taken as
        // a tessel NDArray. Its __array__ would fail on a dtype numpy lacks (torch.bfloat16).
        obj = py::cast(from_dlpack(obj, py::none()));
    }
    if (py::isinstance<NDArray>(obj) && dtype.is_none()) {
        NDArray x = obj.cast<NDArray>();
        if (x.device() == dev && (copy.is_none() || !copy.cast<bool>())) return x;
        if (x.device().type == DeviceType::CPU) {
            obj = numpy_view(x);
        } else {
            py::gil_scoped_release release;
            return x.copy_to_device(dev);
        }
    }
    if (!py::isinstance<NDArray>(obj) && dtype.is_none() && py::hasattr(obj, "__dlpack__") &&
        dlpack_device_type(obj) != dlpack::kDLCPU) {
        // A device tensor (e.g. torch on CUDA): viewed through DLPack, copied when asked or
        // when it lives elsewhere.
        NDArray x = from_dlpack(obj, dlpack_stream_of(0));
        if (x.device() == dev && (copy.is_none() || !copy.cast<bool>())) return x;
        if (!copy.is_none() && !copy.cast<bool>())
            throw py::value_error("ts.nd.array(copy=False): the tensor is on " + x.device().str() +
                                  ", not " + dev.str());
        py::gil_scoped_release release;
        return x.copy_to_device(dev);
    }
    py::object np = py::module_::import("numpy");
    py::array a =
        dtype.is_none()
            ? py::array(np.attr("asarray")(obj))
            : py::array(np.attr("asarray")(obj, numpy_dtype_of(to_data_type(to_type(dtype)))));
    bool must_copy = !copy.is_none() && copy.cast<bool>();
    bool may_copy = copy.is_none() || copy.cast<bool>();
    std::string why = "it lives on " + dev.str();
    if (!must_copy && dev.type == DeviceType::CPU) {
        NDArray x = wrap_numpy(a, &why);
        if (x.defined()) return x;
    }
    if (!may_copy)
        throw py::value_error("ts.nd.array(copy=False): cannot wrap this array without copying: " +
                              why);
    return copy_numpy(a, dev);
}

py::capsule to_capsule(const NDArray& x) {
    dlpack::DLManagedTensor* t = x.to_dlpack();
    PyObject* cap = PyCapsule_New(t, "dltensor", [](PyObject* c) {
        // Still named "dltensor": nobody consumed it, so its deleter is ours to run.
        if (PyCapsule_IsValid(c, "dltensor")) {
            auto* t = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
            if (t && t->deleter) t->deleter(t);
        } else {
            PyErr_Clear();
        }
    });
    if (!cap) {
        t->deleter(t);
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::capsule>(cap);
}

}  // namespace

NDArray from_dlpack(py::object obj, py::object stream) {
    py::object cap = obj;
    if (!PyCapsule_CheckExact(obj.ptr())) {
        if (!py::hasattr(obj, "__dlpack__"))
            throw py::type_error(
                "ts.nd.from_dlpack: expected an object with __dlpack__ or a "
                "DLPack capsule, not " +
                py::str(py::type::of(obj)).cast<std::string>());
        // The stream handshake applies to CUDA producers only (a CPU producer takes None).
        if (!stream.is_none() && dlpack_device_type(obj) == dlpack::kDLCUDA)
            cap = obj.attr("__dlpack__")(py::arg("stream") = stream);
        else
            cap = obj.attr("__dlpack__")();
    }
    if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
        throw py::value_error(
            "ts.nd.from_dlpack: not an unconsumed \"dltensor\" capsule (a capsule "
            "can be consumed once)");
    auto* t = static_cast<dlpack::DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
    // We own it now: the capsule must not run the deleter too.
    if (PyCapsule_SetName(cap.ptr(), "used_dltensor") != 0) throw py::error_already_set();
    return NDArray::from_dlpack(t);  // runs the deleter at once if it rejects the tensor
}

py::object dlpack_stream_of(uintptr_t stream) {
    // DLPack: 0 is ambiguous and disallowed; the legacy default stream is 1.
    return py::int_(stream == 0 ? uintptr_t(1) : stream);
}

namespace {

py::tuple shape_tuple(const std::vector<int64_t>& v) {
    py::tuple t(v.size());
    for (size_t i = 0; i < v.size(); ++i) t[i] = v[i];
    return t;
}

}  // namespace

ArgBinding bind_arguments(const KernelSignature& sig, const py::args& args, uintptr_t stream) {
    ArgBinding b;
    py::object np = py::module_::import("numpy");
    for (size_t i = 0; i < args.size(); ++i) {
        py::handle h = args[i];
        const ArgSpec* spec = i < sig.args.size() ? &sig.args[i] : nullptr;
        if (py::isinstance<NDArray>(h)) {
            b.arrays.push_back(h.cast<NDArray>());
        } else if (py::isinstance<py::array>(h)) {
            py::array a = py::reinterpret_borrow<py::array>(h);
            if (spec && spec->is_written() && !a.writeable())
                TESSEL_THROW(RuntimeError) << "kernel '" << sig.name << "': argument " << i << " ('"
                                           << spec->name << "') is written, but the numpy array "
                                           << "is read-only";
            NDArray x = wrap_numpy(a, nullptr);
            if (!x.defined() || !x.is_contiguous()) {
                // The kernel needs compact memory: an explicit copy, written back afterwards.
                NDArray tmp = copy_numpy(a, cpu());
                if (spec && spec->is_written()) b.copy_back.emplace_back(a, tmp);
                x = tmp;
            }
            b.arrays.push_back(x);
        } else if (py::hasattr(h, "__dlpack__")) {
            b.arrays.push_back(
                from_dlpack(py::reinterpret_borrow<py::object>(h), dlpack_stream_of(stream)));
        } else {
            throw py::type_error("kernel '" + sig.name + "': argument " + std::to_string(i) +
                                 " must be a tessel NDArray, a numpy array or an object with "
                                 "__dlpack__, not " +
                                 py::str(py::type::of(h)).cast<std::string>());
        }
    }
    return b;
}

void finish_arguments(ArgBinding& b) {
    py::object copyto = py::module_::import("numpy").attr("copyto");
    for (auto& [original, tmp] : b.copy_back) copyto(original, numpy_view(tmp));
}

void init_ndarray(py::module_& m) {
    py::class_<NDArray>(m, "NDArray", "An n-dimensional array on a device (tessel's runtime).")
        .def_property_readonly("shape", [](const NDArray& x) { return shape_tuple(x.shape()); })
        .def_property_readonly(
            "strides",
            [](const NDArray& x) {
                return shape_tuple(x.strides().empty() ? compact_strides(x.shape()) : x.strides());
            },
            "Strides in elements.")
        .def_property_readonly("dtype", [](const NDArray& x) { return x.dtype().str(); })
        .def_property_readonly("device", &NDArray::device)
        .def_property_readonly("ndim", &NDArray::ndim)
        .def_property_readonly("size", &NDArray::num_elements)
        .def_property_readonly("byte_offset", &NDArray::byte_offset)
        .def_property_readonly("is_contiguous", &NDArray::is_contiguous)
        .def_property_readonly(
            "data_ptr", [](const NDArray& x) { return reinterpret_cast<uintptr_t>(x.data()); },
            "The address of the first element.")
        .def(
            "reshape",
            [](const NDArray& x, std::vector<int64_t> shape) { return x.reshape(std::move(shape)); },
            py::arg("shape"),
            "A view of this contiguous array with another shape of as many elements (the memory "
            "shared).")
        .def(
            "numpy",
            [](const NDArray& x) {
                if (x.device().type == DeviceType::CPU)
                    return py::array(numpy_view(x).attr("copy")());
                NDArray host;
                {
                    py::gil_scoped_release release;
                    host = x.copy_to_device(cpu());  // waits for the legacy default stream
                }
                return numpy_view(host);
            },
            "A copy of the contents as a numpy array.")
        .def(
            "copyfrom",
            [](NDArray& x, py::object src) {
                py::array a;
                try {
                    a = py::module_::import("numpy").attr("asarray")(src,
                                                                     numpy_dtype_of(x.dtype()));
                } catch (py::error_already_set& e) {
                    throw py::type_error(
                        "copyfrom: parameter 'source' expected an array-like of numbers (a numpy "
                        "array, a list, a tensor): " +
                        std::string(e.what()));
                }
                if (x.device().type == DeviceType::CPU) {
                    py::module_::import("numpy").attr("copyto")(numpy_view(x), a);
                } else {
                    py::array c = py::module_::import("numpy").attr("ascontiguousarray")(a);
                    if (c.size() != x.num_elements())
                        throw py::value_error("copyfrom: shape mismatch");
                    py::gil_scoped_release release;
                    x.copy_from(c.data(), x.nbytes());
                }
                return x;
            },
            py::arg("source"), "Copies `source` (numpy-convertible, same shape) into the array.")
        .def(
            "copyto",
            [](const NDArray& x, py::object device) {
                Device d = to_device(device);
                py::gil_scoped_release release;
                return x.copy_to_device(d);
            },
            py::arg("device"))
        .def(
            "__dlpack__",
            [](const NDArray& x, py::kwargs kwargs) {
                if (x.device().type == DeviceType::CUDA && kwargs.contains("stream") &&
                    !kwargs["stream"].is_none() && kwargs["stream"].cast<int64_t>() != -1) {
                    py::gil_scoped_release release;
                    device_api(x.device())->synchronize(x.device(), nullptr);
                }
                if (kwargs.contains("copy") && !kwargs["copy"].is_none() &&
                    kwargs["copy"].cast<bool>()) {
                    if (x.device().type != DeviceType::CPU)
                        return to_capsule(x.copy_to_device(x.device()));
                    return to_capsule(copy_numpy(numpy_view(x), cpu()));
                }
                return to_capsule(x);
            },
            "A DLPack capsule viewing the array (the array's memory lives until it is consumed "
            "and released). `stream` (a CUDA consumer's stream, -1: no synchronisation): a CUDA "
            "array's device is synchronised first.")
        .def("__dlpack_device__",
             [](const NDArray& x) {
                 return py::make_tuple(static_cast<int>(x.device().type), x.device().id);
             })
        .def(
            "__array__",
            [](const NDArray& x, py::object dtype, py::object copy) {
                py::object a = numpy_view(x);
                if (!dtype.is_none())
                    a = a.attr("astype")(dtype);
                else if (copy.is_none() || copy.cast<bool>())
                    a = a.attr("copy")();
                return a;
            },
            py::arg("dtype") = py::none(), py::arg("copy") = py::none())
        .def("__repr__", [](const NDArray& x) {
            std::string s = "<tessel.NDArray shape=(";
            for (size_t i = 0; i < x.shape().size(); ++i)
                s += (i ? ", " : "") + std::to_string(x.shape()[i]);
            return s + ") dtype=" + x.dtype().str() + " device=" + x.device().str() + ">";
        });
    m.def(
        "nd_array",
        [](py::object data, py::object device, py::object dtype, py::object copy) {
            if (!copy.is_none() && !py::isinstance<py::bool_>(copy))
                throw py::type_error("nd.array(): 'copy' is True, False or None, not " +
                                     py_type_name(copy));
            return nd_array(data, dtype, device, copy);
        },
        py::arg("data"), py::arg("device") = py::none(), py::arg("dtype") = py::none(),
        py::arg("copy") = py::none(),
        "An NDArray of `data` on `device` (TVM's order: nd.array(x, dev)); see docs/python.md "
        "for when it views and when it copies.");
    m.def(
        "nd_empty",
        [](py::object shape, py::object dtype, py::object device) {
            std::vector<int64_t> sh;
            auto dim = [](py::handle d) {
                if (py::isinstance<py::bool_>(d) ||
                    !(py::isinstance<py::int_>(d) || py::hasattr(d, "__index__")))
                    throw py::type_error("nd.empty(): 'shape' is an int or a tuple of ints, not " +
                                         py_type_name(d));
                return py::int_(d.attr("__index__")()).cast<int64_t>();
            };
            if (py::isinstance<py::tuple>(shape) || py::isinstance<py::list>(shape)) {
                for (py::handle d : shape) sh.push_back(dim(d));
            } else {
                sh.push_back(dim(shape));
            }
            return NDArray::empty(sh, to_data_type(to_type(dtype)), to_device(device));
        },
        py::arg("shape"), py::arg("dtype") = "float32", py::arg("device") = py::none());
    m.def("nd_from_dlpack", &from_dlpack, py::arg("tensor"), py::kw_only(),
          py::arg("stream") = py::none(),
          "Imports an object with __dlpack__ (or a capsule) without copying. `stream`: the CUDA "
          "stream the array will be used on (1: legacy default), passed to the producer.");
}

}  // namespace tessel::python
