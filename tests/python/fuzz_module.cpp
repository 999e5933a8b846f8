// `_tessel_fuzz`: the schedule fuzzer's operator suite and step generator (tests/fuzz/support),
// exposed to pytest so tests/python/test_to_python_fuzz.py can check that executing
// Schedule.to_python() on a fresh schedule reproduces the same lowered IR. Test-only: built with
// the tests, never installed.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "fuzz/support/OperatorSuite.h"
#include "fuzz/support/StepGenerator.h"

namespace py = pybind11;
using namespace tessel;

PYBIND11_MODULE(_tessel_fuzz, m) {
    py::module_::import("tessel");  // registers Tensor and Schedule
    m.def("operator_names", &fuzz::operator_names);
    m.def(
        "fuzz_case",
        [](const std::string& name, uint64_t seed, int attempts) {
            fuzz::FuzzOperator op = fuzz::make_operator(name);
            auto s = std::make_shared<Schedule>(op.outputs);
            fuzz::StepStats stats;
            fuzz::StepGenerator gen(seed, &stats);
            gen.apply_random(*s, attempts);
            py::dict d;
            d["args"] = op.args();
            d["outputs"] = op.outputs;
            d["schedule"] = s;
            return d;
        },
        py::arg("name"), py::arg("seed"), py::arg("attempts") = 16,
        "A fresh DAG of the named suite operator and a schedule of it with random steps.");
}
