// ts.build(s, args, target="llvm") -> Module; calling a module or its functions with tessel
// NDArrays or numpy arrays; get_source(), save() / ts.load_module(), time_evaluator().
//
// A CUDA kernel is queued asynchronously on the call's `stream=` (an int CUstream handle; 0, the
// default, is the legacy default stream); arguments with __dlpack__ (torch tensors) are imported
// with the DLPack stream handshake for that stream. The GIL is released while building and while
// kernels run. Builds run on a worker thread so
// that Ctrl-C interrupts the wait at once (run_interruptible); a kernel call cannot be
// interrupted (generated code has no cancellation points).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "PyCall.h"
#include "PyCommon.h"
#include "PyNDArray.h"
#include "tessel/auto_schedule/records/ApplyHistoryBest.h"
#include "tessel/codegen/Export.h"
#include "tessel/driver/Build.h"
#include "tessel/lower/Lower.h"
#include "tessel/runtime/TimeEvaluator.h"

namespace tessel::python {

namespace {

struct Workers {
    std::mutex mu;
    std::condition_variable cv;
    int running = 0;
};
Workers& workers() {
    static Workers* w = new Workers;  // never destroyed: workers may outlive static destructors
    return *w;
}

// A kernel of a module; holds the module, so its code stays loaded as long as the function, and
// the cached argument checks of its calls (PyCall.h).
struct Function {
    Module module;
    Kernel kernel;
    std::shared_ptr<CallCache> cache;
    Function(Module m, Kernel k)
        : module(std::move(m)), kernel(std::move(k)), cache(make_call_cache(kernel)) {}
};

// A single-kernel module's Function, made once per module object (kept in its __dict__) so that
// calls of the module reuse the cached checks.
const Function& module_function(py::handle self);

// Waits for a kernel run on a device with streams (CUDA), so that timings cover its execution.
void wait_for_device(const std::vector<NDArray>& args) {
    if (args.empty() || args[0].device().type == DeviceType::CPU) return;
    device_api(args[0].device())->synchronize(args[0].device(), nullptr);
}

Function only_function(const Module& m);

const Function& module_function(py::handle self) {
    py::dict d = py::reinterpret_borrow<py::dict>(
        py::handle(PyObject_GenericGetDict(self.ptr(), nullptr)).dec_ref());
    if (!d.contains("_function"))
        d["_function"] = py::cast(only_function(self.cast<const Module&>()));
    return d["_function"].cast<const Function&>();
}

Function only_function(const Module& m) {
    std::vector<std::string> names = m.kernel_names();
    // A kernel and its pre_transform (layout rewrite): the module calls the kernel.
    if (names.size() == 2 && names[1] == pre_transform_name(names[0])) names.pop_back();
    if (names.size() != 1) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        TESSEL_THROW(RuntimeError)
            << "the module has kernels [" << list << "]: call one by name, module[\"name\"](...)";
    }
    return Function{m, m.get(names[0])};
}

// Module.pre_transform(*weights): runs the module's `<kernel>_pre_transform` on the weights into
// new arrays of the packed layouts, which the kernel takes in the weights' places.
py::object pre_transform(py::handle self, const py::args& weights) {
    const Module& mod = self.cast<const Module&>();
    const std::string kernel = module_function(self).kernel.signature().name;
    std::vector<std::string> names = mod.kernel_names();
    if (std::find(names.begin(), names.end(), pre_transform_name(kernel)) == names.end())
        TESSEL_THROW(RuntimeError)
            << "pre_transform: kernel '" << kernel
            << "' has no pre_transform (its schedule lays out no constant operand; mark the "
               "weight constant=True)";
    Kernel t = mod.get(pre_transform_name(kernel));
    const std::vector<ArgSpec>& specs = t.signature().args;
    const size_t n = specs.size() / 2;
    if (weights.size() != n)
        throw py::type_error("pre_transform() takes " + std::to_string(n) + " weight(s) (" +
                             specs[0].name + (n > 1 ? ", ..." : "") + "), got " +
                             std::to_string(weights.size()));
    py::list call;
    for (const py::handle w : weights) call.append(w);
    py::list packed;
    for (size_t k = n; k < specs.size(); ++k) {
        std::vector<int64_t> shape;
        for (const Dim& d : specs[k].shape) shape.push_back(d.value);
        NDArray a = NDArray::empty(shape, specs[k].dtype, cpu());
        std::memset(a.data(), 0, a.nbytes());  // the layout's padding reads as zeros
        packed.append(py::cast(a));
        call.append(packed[packed.size() - 1]);
    }
    std::shared_ptr<CallCache> cache = make_call_cache(t);
    call_kernel(t, *cache, py::tuple(call), py::kwargs());
    if (n == 1) return packed[0];
    return py::tuple(packed);
}

py::object time_evaluator(const Function& f, int warmup, int min_repeats, int max_repeats,
                          double min_total_seconds) {
    TimeEvaluatorOptions o;
    o.warmup = warmup;
    o.min_repeats = min_repeats;
    o.max_repeats = max_repeats;
    o.min_total_seconds = min_total_seconds;
    return py::cpp_function([f, o](py::args args) {
        ArgBinding b = bind_arguments(f.kernel.signature(), args);
        TimingResult r;
        {
            py::gil_scoped_release release;
            wait_for_device(b.arrays);
            r = time_evaluate(
                [&](int) {
                    f.kernel(b.arrays);
                    wait_for_device(b.arrays);
                },
                1, o);
        }
        finish_arguments(b);
        return r;
    });
}

// TVM's time_evaluator(func_name, dev, number=10, repeat=1, min_repeat_ms=0): `repeat` samples,
// each the mean of `number` calls; when a sample is shorter than min_repeat_ms, `number` grows
// for the next ones (as TVM's does). Returns the TimingResult of the samples.
TimingResult time_tvm_style(const Function& f, const std::vector<NDArray>& arrays, int number,
                            int repeat, double min_repeat_ms) {
    using clock = std::chrono::steady_clock;
    f.kernel(arrays);  // warm-up (TVM runs one untimed call too)
    wait_for_device(arrays);
    std::vector<double> samples;
    for (int r = 0; r < repeat; ++r) {
        double seconds = 0;
        for (;;) {
            auto t0 = clock::now();
            for (int i = 0; i < number; ++i) f.kernel(arrays);
            wait_for_device(arrays);
            seconds = std::chrono::duration<double>(clock::now() - t0).count();
            if (seconds * 1e3 >= min_repeat_ms || number >= (1 << 30)) break;
            double scale = seconds > 0 ? min_repeat_ms / (seconds * 1e3) * 1.618 : 2.0;
            number = static_cast<int>(
                std::min<double>(std::max(number * scale, number + 1.0), double(1 << 30)));
        }
        samples.push_back(seconds / number);
    }
    return summarize_samples(std::move(samples));
}

// Module/Function.time_evaluator: TVM's positional form (func_name, dev, number, repeat,
// min_repeat_ms) or tessel's keywords (warmup, min_repeats, max_repeats, min_total_seconds).
py::object time_evaluator_any(const Function& f, py::object func_name, py::object dev,
                              py::object number, py::object repeat, py::object min_repeat_ms,
                              int warmup, int min_repeats, int max_repeats,
                              double min_total_seconds) {
    if (!func_name.is_none()) {
        if (!py::isinstance<py::str>(func_name))
            throw py::type_error(
                "time_evaluator(): 'func_name' is the kernel's name (a str, "
                "e.g. f.entry_name), not " +
                py_type_name(func_name));
        std::string n = func_name.cast<std::string>();
        if (n != f.kernel.signature().name)
            TESSEL_THROW(RuntimeError) << "time_evaluator: the module has no kernel '" << n
                                       << "' (it is '" << f.kernel.signature().name << "')";
    }
    if (!dev.is_none()) to_device(dev);  // checked; the arguments' device is where it runs
    bool tvm_style =
        !number.is_none() || !repeat.is_none() || !min_repeat_ms.is_none() || !func_name.is_none();
    if (!tvm_style) return time_evaluator(f, warmup, min_repeats, max_repeats, min_total_seconds);
    auto as_int = [](py::object o, const char* name, int dflt) {
        if (o.is_none()) return dflt;
        if (!py::isinstance<py::int_>(o) || py::isinstance<py::bool_>(o))
            throw py::type_error(std::string("time_evaluator(): '") + name +
                                 "' must be an int, not " + py_type_name(o));
        int v = o.cast<int>();
        if (v < 1 && std::string(name) != "min_repeat_ms")
            throw py::value_error(std::string("time_evaluator(): '") + name + "' must be >= 1");
        return v;
    };
    int n = as_int(number, "number", 10), rep = as_int(repeat, "repeat", 1);
    double min_ms = 0;
    if (!min_repeat_ms.is_none()) {
        if (!py::isinstance<py::int_>(min_repeat_ms) && !py::isinstance<py::float_>(min_repeat_ms))
            throw py::type_error("time_evaluator(): 'min_repeat_ms' must be a number, not " +
                                 py_type_name(min_repeat_ms));
        min_ms = min_repeat_ms.cast<double>();
    }
    return py::cpp_function([f, n, rep, min_ms](py::args args) {
        ArgBinding b = bind_arguments(f.kernel.signature(), args);
        TimingResult r;
        {
            py::gil_scoped_release release;
            wait_for_device(b.arrays);
            r = time_tvm_style(f, b.arrays, n, rep, min_ms);
        }
        finish_arguments(b);
        return r;
    });
}

}  // namespace

void run_interruptible(std::function<void()> work) {
    struct Shared {
        std::mutex mu;
        std::condition_variable cv;
        bool done = false;
        std::exception_ptr error;
    };
    auto shared = std::make_shared<Shared>();
    {
        std::lock_guard<std::mutex> lock(workers().mu);
        ++workers().running;
    }
    std::thread([shared, work = std::move(work)]() mutable {
        try {
            work();
        } catch (...) {
            shared->error = std::current_exception();
        }
        work = nullptr;  // drop the captured schedule here, not in whoever is waiting
        {
            std::lock_guard<std::mutex> lock(shared->mu);
            shared->done = true;
        }
        shared->cv.notify_all();
        std::lock_guard<std::mutex> lock(workers().mu);
        --workers().running;
        workers().cv.notify_all();
    }).detach();
    for (;;) {
        bool done;
        {
            py::gil_scoped_release release;
            std::unique_lock<std::mutex> lock(shared->mu);
            done = shared->cv.wait_for(lock, std::chrono::milliseconds(20),
                                       [&] { return shared->done; });
        }
        if (done) break;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // KeyboardInterrupt
    }
    if (shared->error) std::rethrow_exception(shared->error);
}

int wait_for_abandoned_workers(double seconds) {
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(workers().mu);
    workers().cv.wait_for(lock, std::chrono::duration<double>(seconds),
                          [] { return workers().running == 0; });
    return workers().running;
}

constexpr const char* kTimeEvaluatorDoc =
    "A callable taking the kernel's arguments and returning a TimingResult. TVM's form: "
    "time_evaluator(f.entry_name, dev, number=10, repeat=1, min_repeat_ms=0): `repeat` samples, "
    "each the mean of `number` calls (.mean, .results). tessel's form: keywords warmup, "
    "min_repeats, max_repeats, min_total_seconds (one call per sample).";

void init_build(py::module_& m) {
    py::class_<TimingResult>(m, "TimingResult", "Samples of a measurement, in seconds.")
        .def_readonly("samples", &TimingResult::samples)
        .def_property_readonly(
            "results", [](const TimingResult& r) { return py::tuple(py::cast(r.samples)); },
            "The samples as a tuple (TVM's ProfileResult.results).")
        .def_readonly("median", &TimingResult::median)
        .def_readonly("mean", &TimingResult::mean)
        .def_readonly("min", &TimingResult::min)
        .def_readonly("max", &TimingResult::max)
        .def_readonly("stddev", &TimingResult::stddev)
        .def("__repr__", [](const TimingResult& r) {
            return "TimingResult(median=" + std::to_string(r.median) + " s, " +
                   std::to_string(r.samples.size()) + " samples)";
        });

    py::class_<Function>(m, "Function", "A compiled kernel; call it with arrays.")
        .def_property_readonly("name", [](const Function& f) { return f.kernel.signature().name; })
        .def_property_readonly("arg_names",
                               [](const Function& f) {
                                   std::vector<std::string> names;
                                   for (const ArgSpec& a : f.kernel.signature().args)
                                       names.push_back(a.name);
                                   return names;
                               })
        .def_property_readonly("module", [](const Function& f) { return f.module; })
        .def(
            "__call__",
            [](const Function& f, py::args args, py::kwargs kwargs) {
                call_kernel(f.kernel, *f.cache, args, kwargs);
            },
            "Runs the kernel on the arrays (a CUDA kernel: queued on `stream=`, an int CUstream "
            "handle, default 0: the legacy default stream).")
        .def_property_readonly(
            "entry_name", [](const Function& f) { return f.kernel.signature().name; },
            "The kernel's name (TVM's entry_name, for time_evaluator).")
        .def("time_evaluator", &time_evaluator_any, py::arg("func_name") = py::none(),
             py::arg("dev") = py::none(), py::arg("number") = py::none(),
             py::arg("repeat") = py::none(), py::arg("min_repeat_ms") = py::none(), py::kw_only(),
             py::arg("warmup") = 1, py::arg("min_repeats") = 3, py::arg("max_repeats") = 1000,
             py::arg("min_total_seconds") = 0.05, kTimeEvaluatorDoc);

    py::class_<Module>(m, "Module", "Compiled kernels; a single-kernel module is callable.",
                       py::dynamic_attr())
        .def("__call__",
             [](py::handle self, py::args args, py::kwargs kwargs) {
                 const Function& f = module_function(self);
                 call_kernel(f.kernel, *f.cache, args, kwargs);
             })
        .def("__getitem__",
             [](const Module& mod, const std::string& name) {
                 return Function{mod, mod.get(name)};
             })
        .def("pre_transform", &pre_transform,
             "Layout rewrite: runs the kernel's one-time pre_transform on its constant operands "
             "(the weights, in argument order) and returns the transformed array (a tuple for "
             "several), which the kernel takes in the weight's place. RuntimeError when the "
             "schedule transforms no weight.")
        .def(
            "get_function",
            [](const Module& mod, const std::string& name) {
                return Function{mod, mod.get(name)};
            },
            py::arg("name"))
        .def_property_readonly("kernel_names", &Module::kernel_names)
        .def_property_readonly("source_kinds",
                               [](const Module& mod) {
                                   std::vector<std::string> kinds;
                                   for (const auto& [k, v] : mod.sources()) kinds.push_back(k);
                                   return kinds;
                               })
        .def(
            "get_source",
            [](const Module& mod, const std::string& kind) { return mod.get_source(kind); },
            py::arg("kind") = "ll", "The module's source of `kind` (\"ll\": optimised LLVM IR).")
        .def(
            "export_library",
            [](const Module& mod, const std::string& path) {
                run_interruptible<int>([mod, path] {
                    export_library(mod, path);
                    return 0;
                });
            },
            py::arg("path"),
            "Writes the kernels as a shared library (the system C compiler links it); the "
            "program that loads it links tessel's runtime library (docs/export.md).")
        .def(
            "export_object",
            [](const Module& mod, const std::string& path) {
                run_interruptible<int>([mod, path] {
                    export_object(mod, path);
                    return 0;
                });
            },
            py::arg("path"), "Writes the kernels as a relocatable object file.")
        .def(
            "export_header",
            [](const Module& mod, const std::string& path) { export_header(mod, path); },
            py::arg("path"), "Writes the C header declaring the kernels (see c_header).")
        .def(
            "c_header", [](const Module& mod) { return c_header(mod); },
            "The C header declaring each kernel's entry point and a typed call function.")
        .def(
            "save",
            [](const Module& mod) {
                std::vector<uint8_t> bytes = mod.save();
                return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
            },
            "The module as bytes (ts.load_module reads them in any process).")
        .def_property_readonly(
            "entry_name",
            [](const Module& mod) { return only_function(mod).kernel.signature().name; },
            "The name of the module's only kernel (TVM's entry_name).")
        .def(
            "time_evaluator",
            [](const Module& mod, py::object func_name, py::object dev, py::object number,
               py::object repeat, py::object min_repeat_ms, int warmup, int min_repeats,
               int max_repeats, double min_total_seconds) {
                Function f = func_name.is_none() || !py::isinstance<py::str>(func_name)
                                 ? only_function(mod)
                                 : Function{mod, mod.get(func_name.cast<std::string>())};
                return time_evaluator_any(f, func_name, dev, number, repeat, min_repeat_ms, warmup,
                                          min_repeats, max_repeats, min_total_seconds);
            },
            py::arg("func_name") = py::none(), py::arg("dev") = py::none(),
            py::arg("number") = py::none(), py::arg("repeat") = py::none(),
            py::arg("min_repeat_ms") = py::none(), py::kw_only(), py::arg("warmup") = 1,
            py::arg("min_repeats") = 3, py::arg("max_repeats") = 1000,
            py::arg("min_total_seconds") = 0.05, kTimeEvaluatorDoc);

    m.def(
        "load_module",
        [](py::bytes data) {
            std::string s = data;
            std::vector<uint8_t> bytes(s.begin(), s.end());
            register_llvm_payload_loader();
            return run_interruptible<Module>([bytes] { return Module::load(bytes); });
        },
        py::arg("data"), "A module from Module.save()'s bytes.");
    m.def(
        "build",
        [](const Schedule& s, py::object arg_list, py::object target, py::object target_host,
           const std::string& name, std::vector<std::string> in_place, py::object binds,
           bool tuning_logs) {
            if (!binds.is_none())
                throw py::type_error(
                    "build(): 'binds' is not supported: tessel allocates each "
                    "argument as a compact row-major buffer");
            std::vector<Tensor> args = to_arg_tensors(arg_list, "build");
            // parsed once; no target: the innermost `with Target(...)`, else llvm (as TVM)
            Target t = !target.is_none()         ? to_target(target)
                       : !target_scope().empty() ? target_scope().back()
                                                 : Target("llvm");
            if (!target_host.is_none() && to_target(target_host).is_gpu())
                throw py::value_error(
                    "build(): 'target_host' must be a CPU target (the host "
                    "code of a CUDA module is tessel's launch plan)");
            BuildOptions options;
            options.in_place = std::move(in_place);
            options.tuning_logs = tuning_logs;
            // The apply-best context is this thread's: resolve the schedule before the build
            // moves to a worker thread.
            Schedule chosen = schedule_for_build(s, t, tuning_logs);
            return run_interruptible<Module>(
                [chosen, args, t, name, options] { return build(chosen, args, t, name, options); });
        },
        py::arg("schedule"), py::arg("args"), py::arg("target") = py::none(),
        py::arg("target_host") = py::none(), py::arg("name") = "main", py::kw_only(),
        py::arg("in_place") = std::vector<std::string>{}, py::arg("binds") = py::none(),
        py::arg("tuning_logs") = true,
        "Lowers and compiles the schedule for `target` (a string or a Target) into a module with "
        "one kernel `name`. `in_place` names arguments that may share memory with others (exempt "
        "from the overlap check). A schedule without steps is replaced by the shipped tuning "
        "logs' record for its computation when they hold one, unless tuning_logs=False. TVM's "
        "target_host= is accepted when it is a CPU target; binds= is not supported.");
    m.def(
        "build",
        [](const LoweredFunc& f, py::object target) {
            Target t = to_target(target);
            return run_interruptible<Module>([f, t] { return build(f, t); });
        },
        py::arg("func"), py::arg("target") = "llvm",
        "Compiles an already lowered function for `target` (a string or a Target).");
    m.def("_wait_for_abandoned_workers", &wait_for_abandoned_workers, py::arg("seconds"));
}

}  // namespace tessel::python
