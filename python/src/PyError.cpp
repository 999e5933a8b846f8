// tessel's C++ error types as Python exceptions (docs/design.md, decision 5). Each is a subclass of
// `tessel.TesselError` and of the matching built-in exception, and carries the full message:
//   DSLError      -> TypeError      (misuse of the tensor-expression language)
//   ScheduleError -> ValueError     (misuse of a schedule primitive)
//   CompileError, RuntimeError, InternalError -> RuntimeError
#include "PyCommon.h"

namespace tessel::python {

namespace {

PyObject* new_exception(py::module_& m, const char* name, PyObject* base, PyObject* builtin,
                        const char* doc) {
    std::string qualified = std::string("tessel.") + name;
    py::tuple bases = builtin ? py::tuple(py::make_tuple(py::handle(base), py::handle(builtin)))
                              : py::tuple(py::make_tuple(py::handle(base)));
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
    if (!type) throw py::error_already_set();
    m.add_object(name, py::handle(type));
    return type;
}

}  // namespace

void init_error(py::module_& m) {
    static PyObject* base =
        new_exception(m, "TesselError", PyExc_Exception, nullptr, "Base of every tessel error.");
    static PyObject* dsl = new_exception(m, "DSLError", base, PyExc_TypeError,
                                         "Misuse of the tensor-expression DSL (a TypeError).");
    static PyObject* schedule = new_exception(m, "ScheduleError", base, PyExc_ValueError,
                                              "Misuse of a schedule primitive (a ValueError).");
    static PyObject* compile = new_exception(m, "CompileError", base, PyExc_RuntimeError,
                                             "A program tessel cannot compile (a RuntimeError).");
    static PyObject* runtime =
        new_exception(m, "TesselRuntimeError", base, PyExc_RuntimeError,
                      "A failure while running a kernel or evaluating a program (a RuntimeError).");
    static PyObject* internal =
        new_exception(m, "InternalError", base, PyExc_RuntimeError,
                      "A bug in tessel (a RuntimeError); please report it.");
    // For tests/python/test_errors.py: throws the named C++ error type with `message`, so the
    // mapping of every type is tested (an InternalError has no legitimate trigger).
    m.def("_throw_for_testing", [](const std::string& kind, const std::string& message) {
        if (kind == "DSLError") throw DSLError(message);
        if (kind == "ScheduleError") throw ScheduleError(message);
        if (kind == "CompileError") throw CompileError(message);
        if (kind == "RuntimeError") throw RuntimeError(message);
        if (kind == "InternalError") throw InternalError(message);
        if (kind == "Error") throw Error(message);
        throw py::value_error("unknown error kind " + kind);
    });
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const DSLError& e) {
            PyErr_SetString(dsl, e.what());
        } catch (const ScheduleError& e) {
            PyErr_SetString(schedule, e.what());
        } catch (const CompileError& e) {
            PyErr_SetString(compile, e.what());
        } catch (const RuntimeError& e) {
            PyErr_SetString(runtime, e.what());
        } catch (const InternalError& e) {
            PyErr_SetString(internal, e.what());
        } catch (const Error& e) {
            PyErr_SetString(base, e.what());
        }
    });
}

}  // namespace tessel::python
