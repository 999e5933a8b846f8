// Devices: ts.cpu(), ts.cuda(1), ts.device("cuda:1"); the CUDA driver's queries:
// ts.cuda_available(), ts.cuda_device_info(0), ts.cuda_synchronize(0).
#include "PyCommon.h"
#include "tessel/runtime/CUDA.h"

namespace tessel::python {

Device to_device(py::handle device) {
    if (device.is_none()) return cpu();
    if (py::isinstance<Device>(device)) return device.cast<Device>();
    if (!py::isinstance<py::str>(device))
        throw py::type_error(
            "device: expected a device (parameter 'dev_type' or 'device'): \"cpu\", \"cuda:1\" "
            "or ts.cpu() / ts.cuda(), not " +
            std::string(py::str(py::type::of(device))));
    std::string s = device.cast<std::string>();
    s = s.substr(0, s.find(' '));  // a target string: "llvm -mcpu=...", "cuda -arch=sm_90"
    std::string kind = s.substr(0, s.find(':'));
    int id = 0;
    if (s.find(':') != std::string::npos) {
        try {
            size_t used = 0;
            id = std::stoi(s.substr(s.find(':') + 1), &used);
            if (used != s.size() - s.find(':') - 1) throw std::invalid_argument(s);
        } catch (const std::exception&) {
            throw py::value_error("bad device string '" + s + "': expected e.g. \"cuda:1\"");
        }
    }
    if (id < 0) throw py::value_error("bad device string '" + s + "': negative index");
    if (kind == "cpu" || kind == "llvm") return Device{DeviceType::CPU, id};
    if (kind == "cuda" || kind == "gpu") return Device{DeviceType::CUDA, id};
    throw py::value_error("unknown device '" + s + "': expected \"cpu\" or \"cuda[:id]\"");
}

namespace {

py::dict device_info_dict(const CudaDeviceInfo& info) {
    py::dict d;
    d["name"] = info.name;
    d["compute_capability"] = py::make_tuple(info.compute_major, info.compute_minor);
    d["arch"] = info.arch();
    d["multiprocessors"] = info.multiprocessors;
    d["max_threads_per_block"] = info.max_threads_per_block;
    d["warp_size"] = info.warp_size;
    d["max_block_dim"] =
        py::make_tuple(info.max_block_dim[0], info.max_block_dim[1], info.max_block_dim[2]);
    d["max_grid_dim"] =
        py::make_tuple(info.max_grid_dim[0], info.max_grid_dim[1], info.max_grid_dim[2]);
    d["registers_per_block"] = info.registers_per_block;
    d["shared_bytes_per_block"] = info.shared_bytes_per_block;
    d["shared_bytes_per_block_optin"] = info.shared_bytes_per_block_optin;
    d["total_memory_bytes"] = info.total_memory_bytes;
    d["l2_bytes"] = info.l2_bytes;
    return d;
}

void init_cuda_queries(py::module_& m) {
    m.def("cuda_available", &cuda_available,
          "True when the CUDA driver loaded and reports at least one device.");
    m.def("cuda_unavailable_reason", &cuda_unavailable_reason,
          "Why cuda_available() is False; empty when it is True.");
    m.def("cuda_device_count", &cuda_device_count,
          "The number of CUDA devices (0 without a driver).");
    m.def(
        "cuda_device_info",
        [](int id) {
            CudaDeviceInfo info;
            {
                py::gil_scoped_release release;
                info = cuda_device_info(id);
            }
            return device_info_dict(info);
        },
        py::arg("id") = 0,
        "Device `id`'s properties as a dict (name, compute_capability, arch, multiprocessors, "
        "max_threads_per_block, ..., shared_bytes_per_block_optin, total_memory_bytes, l2_bytes).");
    m.def(
        "cuda_synchronize",
        [](int id) {
            py::gil_scoped_release release;
            cuda_synchronize(id);
        },
        py::arg("id") = 0,
        "Waits for all work on device `id`; raises the error of a kernel that failed.");
}

}  // namespace

void init_device(py::module_& m) {
    init_cuda_queries(m);
    py::class_<Device>(m, "Device", "A device: its type (\"cpu\", \"cuda\") and index.")
        .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
        .def_property_readonly("id", [](const Device& d) { return d.id; })
        .def_property_readonly(
            "device_id", [](const Device& d) { return d.id; }, "TVM's name of `id`.")
        .def_property_readonly(
            "device_type", [](const Device& d) { return static_cast<int>(d.type); },
            "The DLPack device type code (1: CPU, 2: CUDA), as TVM's.")
        .def_property_readonly(
            "exist",
            [](const Device& d) {
                return d.type == DeviceType::CPU ||
                       (cuda_available() && d.id < cuda_device_count());
            },
            "Whether the device is present (TVM's Device.exist).")
        .def(
            "sync",
            [](const Device& d) {
                if (d.type == DeviceType::CPU) return;
                py::gil_scoped_release release;
                cuda_synchronize(d.id);
            },
            "Waits for the device's work (TVM's Device.sync).")
        .def("__str__", &Device::str)
        .def("__repr__", [](const Device& d) { return "ts.device(\"" + d.str() + "\")"; })
        .def("__eq__",
             [](const Device& a, py::object b) {
                 return py::isinstance<Device>(b) && a == b.cast<Device>();
             })
        .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000003 + d.id; });
    auto device_index = [](py::handle id, const char* what) {
        if (!py::isinstance<py::int_>(id) || py::isinstance<py::bool_>(id))
            throw py::type_error(std::string(what) + "(): 'dev_id' is an int, not " +
                                 py_type_name(id));
        int v = id.cast<int>();
        if (v < 0) throw py::value_error(std::string(what) + "(): 'dev_id' must be >= 0");
        return v;
    };
    m.def(
        "cpu",
        [device_index](py::object id) {
            return Device{DeviceType::CPU, device_index(id, "cpu")};
        },
        py::arg("dev_id") = 0, "The host CPU.");
    m.def(
        "cuda", [device_index](py::object id) { return cuda(device_index(id, "cuda")); },
        py::arg("dev_id") = 0, "CUDA device `dev_id`.");
    m.def(
        "device",
        [](py::object d, py::object id) {
            Device dev = to_device(d);
            if (id.is_none()) return dev;
            if (!py::isinstance<py::int_>(id) || py::isinstance<py::bool_>(id))
                throw py::type_error("device(): 'dev_id' is an int, not " + py_type_name(id));
            int v = id.cast<int>();
            if (v < 0) throw py::value_error("device(): 'dev_id' must be >= 0");
            return Device{dev.type, v};
        },
        py::arg("dev_type"), py::arg("dev_id") = py::none(),
        "A device from \"cpu\", \"cuda\", \"cuda:1\", a target string (\"llvm\", \"cuda "
        "-arch=sm_90\"), or TVM's device(\"cuda\", 1).");
}

}  // namespace tessel::python
