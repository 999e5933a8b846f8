// Devices: ts.cpu(), ts.cuda(1), ts.device("cuda:1").
#include "PyCommon.h"

namespace tessel::python {

Device to_device(py::handle device) {
    if (device.is_none()) return cpu();
    if (py::isinstance<Device>(device)) return device.cast<Device>();
    if (!py::isinstance<py::str>(device))
        throw py::type_error("a device is \"cpu\", \"cuda:1\" or ts.cpu() / ts.cuda(), not " +
                             std::string(py::str(py::type::of(device))));
    std::string s = device.cast<std::string>();
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

void init_device(py::module_& m) {
    py::class_<Device>(m, "Device", "A device: its type (\"cpu\", \"cuda\") and index.")
        .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
        .def_property_readonly("id", [](const Device& d) { return d.id; })
        .def("__str__", &Device::str)
        .def("__repr__", [](const Device& d) { return "ts.device(\"" + d.str() + "\")"; })
        .def("__eq__",
             [](const Device& a, py::object b) {
                 return py::isinstance<Device>(b) && a == b.cast<Device>();
             })
        .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000003 + d.id; });
    m.def(
        "cpu",
        [](int id) {
            return Device{DeviceType::CPU, id};
        },
        py::arg("id") = 0, "The host CPU.");
    m.def(
        "cuda", [](int id) { return cuda(id); }, py::arg("id") = 0, "CUDA device `id`.");
    m.def(
        "device", [](py::object d) { return to_device(d); }, py::arg("name"),
        "A device from \"cpu\", \"cuda\", \"cuda:1\".");
}

}  // namespace tessel::python
