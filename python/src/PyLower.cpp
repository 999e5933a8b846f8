// ts.lower(s, args): the lowered loop IR, printable (str() is the readable loop nest).
#include "PyCommon.h"
#include "tessel/lower/Lower.h"

namespace tessel::python {

void init_lower(py::module_& m) {
    py::class_<LoweredFunc>(m, "LoweredFunc", "A lowered kernel: its arguments and loop IR.")
        .def_readonly("name", &LoweredFunc::name)
        .def_property_readonly(
            "args",
            [](const LoweredFunc& f) {
                std::vector<std::string> names;
                for (const Buffer& b : f.args) names.push_back(b.name());
                return names;
            },
            "The argument buffers' names, in call order.")
        .def("__str__", [](const LoweredFunc& f) { return to_string(f); })
        .def("__repr__", [](const LoweredFunc& f) { return to_string(f); });
    m.def(
        "lower",
        [](const Schedule& s, std::vector<Tensor> args, const std::string& name,
           py::object bounds_check) {
            LowerOptions options = LowerOptions::from_env();
            if (!bounds_check.is_none()) options.bounds_check = bounds_check.cast<bool>();
            // Runs without the GIL; Ctrl-C interrupts the wait (see run_interruptible).
            return run_interruptible<LoweredFunc>(
                [s, args, name, options] { return lower(s, args, name, options); });
        },
        py::arg("schedule"), py::arg("args"), py::arg("name") = "main", py::kw_only(),
        py::arg("bounds_check") = py::none(),
        "Lowers the schedule to loop IR over `args` (placeholders and outputs, in call order). "
        "bounds_check=True inserts a run-time check before every access (default: "
        "TESSEL_BOUNDS_CHECK).");
}

}  // namespace tessel::python
