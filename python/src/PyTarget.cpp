// ts.Target("llvm -mcpu=skylake-avx512"): a parsed target with its canonical string and the
// queries of the search; every `target=` of the API takes a string or a Target (to_target).
#include "PyCommon.h"
#include "tessel/Target.h"

namespace tessel::python {

Target to_target(py::handle target) {
    if (py::isinstance<Target>(target)) return target.cast<Target>();
    if (py::isinstance<py::str>(target)) return Target(target.cast<std::string>());
    throw py::type_error("target must be a string or a tessel.Target, not " +
                         std::string(py::str(py::type::of(target).attr("__name__"))));
}

namespace {

const char* float_mode_name(TargetFloatMode m) {
    switch (m) {
        case TargetFloatMode::Contract: return "contract";
        case TargetFloatMode::Strict: return "strict";
        case TargetFloatMode::Fast: return "fast";
    }
    return "contract";
}

// The GPU queries, each a read-only property (CompileError on a CPU target).
void add_gpu_queries(py::class_<Target>& cls) {
    cls.def_property_readonly("max_threads_per_block", &Target::max_threads_per_block,
                              "GPU: at most this many threads in a block.")
        .def_property_readonly("max_shared_memory_per_block", &Target::max_shared_memory_per_block,
                               "GPU: shared memory bytes a block may use without opting in.")
        .def_property_readonly("max_shared_memory_per_block_optin",
                               &Target::max_shared_memory_per_block_optin,
                               "GPU: shared memory bytes a block may use once it opts in.")
        .def_property_readonly("max_registers_per_block", &Target::max_registers_per_block,
                               "GPU: 32-bit registers of one block.")
        .def_property_readonly("warp_size", &Target::warp_size, "GPU: threads per warp.")
        .def_property_readonly("max_vthread_extent", &Target::max_vthread_extent,
                               "GPU: the largest vthread extent the search proposes.")
        .def_property_readonly(
            "sm_count", &Target::sm_count,
            "GPU: streaming multiprocessors (-num-cores, else the driver's or the table's).")
        .def_property_readonly(
            "gpu_limits_from_driver", [](const Target& t) { return t.gpu_limits().from_driver; },
            "GPU: True when the limits were read from device 0 (it has the target's arch).");
}

}  // namespace

std::vector<Target>& target_scope() {
    static std::vector<Target>* scope = new std::vector<Target>;  // never destroyed (exit order)
    return *scope;
}

void init_target(py::module_& m) {
    py::class_<Target> cls(
        m, "Target",
        "A target parsed once from a string ('llvm', 'llvm -mcpu=skylake-avx512',"
        " 'cuda -arch=sm_90', ...): its canonical str() and the queries of the "
        "search. Any `target=` argument takes a string or a Target.");
    cls.def(py::init([](py::object spec) {
                if (py::isinstance<Target>(spec)) return spec.cast<Target>();
                if (!py::isinstance<py::str>(spec))
                    throw py::type_error(
                        "Target(): 'spec' is a target string (\"llvm\", \"cuda "
                        "-arch=sm_90\") or a Target, not " +
                        py_type_name(spec));
                return Target(spec.cast<std::string>());
            }),
            py::arg("spec"))
        .def_static("host", &Target::host, "This machine's CPU: Target('llvm').")
        // TVM's `with Target("cuda"):` scope: build(s, args) without a target uses the innermost.
        .def("__enter__",
             [](const Target& t) {
                 target_scope().push_back(t);
                 return t;
             })
        .def("__exit__",
             [](const Target&, py::args) {
                 if (!target_scope().empty()) target_scope().pop_back();
                 return false;
             })
        .def_static(
            "current",
            [](bool allow_none) -> py::object {
                if (!target_scope().empty()) return py::cast(target_scope().back());
                if (allow_none) return py::none();
                throw py::value_error("Target.current(): no target scope is active");
            },
            py::arg("allow_none") = true, "The target of the innermost `with Target(...)`.")
        .def_static("known_cuda_archs", &Target::known_cuda_archs,
                    "The GPU architectures of tessel's table.")
        .def_property_readonly("kind", &Target::kind_name, "'llvm' or 'cuda'.")
        .def_property_readonly("is_gpu", &Target::is_gpu)
        .def_property_readonly("cpu", &Target::cpu, "llvm: LLVM's CPU name.")
        .def_property_readonly("features", &Target::features,
                               "llvm: the features that differ from the CPU's, sorted.")
        .def("has_feature", &Target::has_feature, py::arg("name"),
             "llvm: whether the CPU has the feature (LLVM's name: 'avx512vnni', 'avx512bf16', "
             "'amx-int8', ...), as its CPU name implies and -mattr adjusts.")
        .def_property_readonly("arch", &Target::arch, "cuda: the architecture, e.g. 'sm_90'.")
        .def_property_readonly(
            "float_mode", [](const Target& t) { return float_mode_name(t.float_mode()); },
            "'contract' (the default), 'strict' (-strict-float) or 'fast' (-fast-math).")
        .def("str", &Target::str, "The canonical string (what tuning records key on).")
        .def(
            "vector_lanes",
            [](const Target& t, py::object dtype) { return t.vector_lanes(to_type(dtype)); },
            py::arg("dtype"), "Lanes of the widest vector register for elements of `dtype`.")
        .def_property_readonly("cache_line_bytes", &Target::cache_line_bytes)
        .def_property_readonly("num_cores", &Target::num_cores,
                               "CPU: cores for parallel loops; GPU: the SM count.")
        .def_property_readonly("l1d_cache_bytes", &Target::l1d_cache_bytes,
                               "CPU: one core's L1 data cache in bytes (-l1d; default the host's).")
        .def_property_readonly("l2_cache_bytes", &Target::l2_cache_bytes,
                               "CPU: one core's L2 cache in bytes (-l2; default the host's).")
        .def_property_readonly("l3_cache_bytes", &Target::l3_cache_bytes,
                               "CPU: the last-level cache in bytes (-l3; default the host's).")
        .def(
            "describe", &Target::describe,
            "A line for people: cores, vector width and caches (CPU), SMs and shared memory (GPU).")
        .def("__str__", &Target::str)
        // The canonical string, then what the default schedules size their tiles by.
        .def("__repr__",
             [](const Target& t) { return "tessel.Target('" + t.str() + "')  # " + t.describe(); })
        .def("__eq__",
             [](const Target& a, py::object b) {
                 return py::isinstance<Target>(b) && a == b.cast<Target>();
             })
        .def("__hash__", [](const Target& t) { return py::hash(py::str(t.str())); })
        .def(py::pickle([](const Target& t) { return t.str(); },
                        [](const std::string& s) { return Target(s); }));
    add_gpu_queries(cls);
}

}  // namespace tessel::python
