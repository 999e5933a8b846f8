// ts.lower(s, args): the lowered loop IR, printable (str() is the readable loop nest).
#include <cstring>
#include <optional>

#include <pybind11/numpy.h>

#include "PyCommon.h"
#include "tessel/HostArray.h"
#include "tessel/ir/IRVisitor.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/VerifySchedule.h"

namespace tessel::python {

namespace {

// Runs `f` in the loop-IR interpreter on numpy arrays (one per argument, C-contiguous, of the
// argument's dtype and shape): inputs are copied in, every array is copied back afterwards.
void run_in_interpreter(const LoweredFunc& f, const py::args& arrays) {
    if (arrays.size() != f.args.size()) {
        TESSEL_THROW(RuntimeError) << "LoweredFunc.run: '" << f.name << "' takes " << f.args.size()
                                   << " arrays, got " << arrays.size();
    }
    std::vector<py::array> numpy;
    std::vector<HostArray> hosts;
    for (size_t i = 0; i < arrays.size(); ++i) {
        py::array a = py::array::ensure(arrays[i], py::array::c_style);
        if (!a || to_type(a.dtype()) != f.args[i].dtype()) {
            TESSEL_THROW(RuntimeError) << "LoweredFunc.run: argument " << i << " ('"
                                       << f.args[i].name() << "') must be a C-contiguous numpy "
                                       << "array of " << f.args[i].dtype();
        }
        std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
        hosts.emplace_back(f.args[i].dtype(), shape);
        if (static_cast<size_t>(a.nbytes()) != hosts.back().nbytes()) {
            TESSEL_THROW(RuntimeError) << "LoweredFunc.run: argument " << i << " ('"
                                       << f.args[i].name() << "') has the wrong size";
        }
        std::memcpy(hosts.back().data(), a.data(), a.nbytes());
        numpy.push_back(a);
    }
    std::vector<HostArray*> ptrs;
    for (HostArray& h : hosts) ptrs.push_back(&h);
    {
        py::gil_scoped_release release;
        run_lowered(f, ptrs);
    }
    for (size_t i = 0; i < numpy.size(); ++i)
        std::memcpy(numpy[i].mutable_data(), hosts[i].data(), hosts[i].nbytes());
}

}  // namespace

std::string py_type_name(py::handle h) {
    return py::str(py::type::of(h)).cast<std::string>();
}

std::vector<Tensor> to_arg_tensors(py::handle args, const char* what) {
    if (!py::isinstance<py::list>(args) && !py::isinstance<py::tuple>(args))
        throw py::type_error(std::string(what) +
                             "(): 'args' is a list of tensors (placeholders and outputs, in call "
                             "order), not " +
                             py_type_name(args));
    std::vector<Tensor> tensors;
    std::vector<Var> vars;
    for (py::handle h : args) {
        if (py::isinstance<Tensor>(h))
            tensors.push_back(h.cast<Tensor>());
        else if (py::isinstance<Var>(h))
            vars.push_back(h.cast<Var>());
        else
            throw py::type_error(std::string(what) +
                                 "(): 'args' holds tensors (and the Vars of their symbolic "
                                 "shapes), not " +
                                 py_type_name(h));
    }
    for (const Var& v : vars) {
        bool in_shape = false;
        for (const Tensor& t : tensors)
            for (const Expr& e : t.shape()) in_shape = in_shape || uses_var(e, v);
        if (!in_shape)
            throw py::type_error(std::string(what) + "(): the Var '" + v.name() +
                                 "' in 'args' is no extent of a tensor argument; tessel kernels "
                                 "take arrays only (a symbolic extent's value comes from the "
                                 "arrays' shapes)");
    }
    return tensors;
}

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
        .def("run", &run_in_interpreter,
             "Runs the lowered IR in tessel's loop-IR interpreter on numpy arrays (one per "
             "argument; outputs are written into theirs): every access bounds-checked, GPU "
             "kernels as SPMD programs with the race detector. Slow; for checking schedules "
             "without compiling them (e.g. GPU schedules on a machine without a GPU).")
        .def("__str__", [](const LoweredFunc& f) { return to_string(f); })
        .def("__repr__", [](const LoweredFunc& f) { return to_string(f); });
    m.def(
        "lower",
        [](const Schedule& s, py::object arg_list, const std::string& name, py::object target,
           py::object bounds_check, const std::string& stop_after, bool /*simple_mode*/,
           py::object binds) {
            if (!binds.is_none())
                throw py::type_error(
                    "lower(): 'binds' is not supported: tessel allocates each argument as a "
                    "compact row-major buffer (use storage_split / storage_reorder for layouts)");
            std::vector<Tensor> args = to_arg_tensors(arg_list, "lower");
            LowerOptions options = LowerOptions::from_env();
            if (!bounds_check.is_none()) options.bounds_check = bounds_check.cast<bool>();
            options.stop_after = stop_after;
            std::optional<Target> t;
            if (!target.is_none()) t = to_target(target);
            // Runs without the GIL; Ctrl-C interrupts the wait (see run_interruptible).
            return run_interruptible<LoweredFunc>([s, args, name, options, t] {
                return t ? lower(s, args, *t, name, options) : lower(s, args, name, options);
            });
        },
        py::arg("schedule"), py::arg("args"), py::arg("name") = "main", py::kw_only(),
        py::arg("target") = py::none(), py::arg("bounds_check") = py::none(),
        py::arg("stop_after") = "", py::arg("simple_mode") = false, py::arg("binds") = py::none(),
        "Lowers the schedule to loop IR over `args` (placeholders and outputs, in call order). "
        "target= (a string or a Target) lowers for it: for a GPU target the function is split "
        "into kernels and the target's limits are checked; without one, thread-bound loops stay "
        "in place for the interpreter. bounds_check=True inserts a run-time check before every "
        "access (default: TESSEL_BOUNDS_CHECK). stop_after='partition_loops' returns the IR "
        "after that pass (lower_pass_names() lists them). TVM's simple_mode= is accepted (the "
        "printed IR is always the loop nest alone); binds= is not supported.");
    m.def(
        "verify_schedule",
        [](const Schedule& s, py::object target) { verify_schedule(s, to_target(target)); },
        py::arg("schedule"), py::arg("target"),
        "Checks that the schedule can be lowered and built for `target` without lowering it "
        "(docs/schedule.md): ScheduleError (CompileError for thread bindings on a CPU target).");
    m.def(
        "lower_pass_names", [](py::object target) { return lower_pass_names(to_target(target)); },
        py::arg("target") = "llvm", "The passes of lower() for `target`, in order.");
}

}  // namespace tessel::python
