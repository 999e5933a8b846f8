// Options described once (tessel/Options.h) as Python keywords: keyword arguments applied to an
// options struct, and the (name, default, doc) of each keyword for the Python functions'
// signatures and docstrings (ts.auto_schedule.tune, ts.Measurer).
#pragma once

#include <pybind11/pybind11.h>

#include <set>
#include <string>
#include <type_traits>

#include "tessel/Options.h"

namespace tessel::python {

namespace py = pybind11;

namespace options_detail {

inline bool shown(unsigned where, unsigned mask) {
    return (where & mask) != 0;
}

inline std::string type_error(const char* who, const char* name, const char* what,
                              py::handle value) {
    return std::string(who) + "(): '" + name + "' must be " + what + ", not " +
           std::string(py::str(py::type::handle_of(value).attr("__name__")));
}

// Sets each field shown by `mask` that `kwargs` names, converting the Python value by the
// field's kind (TypeError naming the keyword for a value of another type).
struct Setter {
    const py::dict& kwargs;
    unsigned mask;
    const char* who;
    std::set<std::string>& used;

    py::object take(const char* name, unsigned where) {
        if (!shown(where, mask) || !kwargs.contains(name)) return py::object();
        used.insert(name);
        return kwargs[name];
    }
    template <typename T>
    void integer(const char* n, T& m, int64_t, int64_t, unsigned w, const char*) {
        py::object v = take(n, w);
        if (!v) return;
        if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
            throw py::type_error(type_error(who, n, "an int", v));
        if constexpr (std::is_unsigned_v<T>)  // a negative value: a clear error, not a cast's
            if (v.cast<py::int_>() < py::int_(0))
                throw py::value_error(std::string(who) + "(): '" + n +
                                      "' must be at least 0, got " + std::string(py::str(v)));
        m = v.cast<T>();
    }
    void number(const char* n, double& m, double, double, unsigned w, const char*) {
        py::object v = take(n, w);
        if (!v) return;
        if (!(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) ||
            py::isinstance<py::bool_>(v))
            throw py::type_error(type_error(who, n, "a number", v));
        m = v.cast<double>();
    }
    void flag(const char* n, bool& m, unsigned w, const char*) {
        py::object v = take(n, w);
        if (!v) return;
        if (!py::isinstance<py::bool_>(v)) throw py::type_error(type_error(who, n, "a bool", v));
        m = v.cast<bool>();
    }
    void text(const char* n, std::string& m, unsigned w, const char*) {
        py::object v = take(n, w);
        if (!v) return;
        if (!py::isinstance<py::str>(v)) throw py::type_error(type_error(who, n, "a str", v));
        m = v.cast<std::string>();
    }
};

// Appends (name, default, doc) of each field shown by `mask`.
struct Lister {
    py::list& out;
    unsigned mask;
    template <typename T>
    void integer(const char* n, const T& m, int64_t, int64_t, unsigned w, const char* doc) {
        add(n, py::int_(m), w, doc);
    }
    void number(const char* n, const double& m, double, double, unsigned w, const char* doc) {
        add(n, py::float_(m), w, doc);
    }
    void flag(const char* n, const bool& m, unsigned w, const char* doc) {
        add(n, py::bool_(m), w, doc);
    }
    void text(const char* n, const std::string& m, unsigned w, const char* doc) {
        add(n, py::str(m), w, doc);
    }
    void add(const char* n, py::object value, unsigned w, const char* doc) {
        if (shown(w, mask)) out.append(py::make_tuple(n, value, doc));
    }
};

// Sets d[name] = the field's value, for every field.
struct Dicter {
    py::dict& d;
    template <typename T>
    void integer(const char* n, const T& m, int64_t, int64_t, unsigned, const char*) {
        d[n] = m;
    }
    void number(const char* n, const double& m, double, double, unsigned, const char*) {
        d[n] = m;
    }
    void flag(const char* n, const bool& m, unsigned, const char*) { d[n] = m; }
    void text(const char* n, const std::string& m, unsigned, const char*) { d[n] = m; }
};

}  // namespace options_detail

/// Every field of `options` as a dict, in the order described.
template <typename T>
py::dict options_dict(const T& options) {
    py::dict d;
    options_detail::Dicter v{d};
    T::fields(options, v);
    return d;
}

/// Applies the keywords of `kwargs` that name fields of `options` shown by `mask`; each one
/// applied is added to `used`. `who` names the function in TypeErrors.
template <typename T>
void apply_keywords(T& options, const py::dict& kwargs, unsigned mask, const char* who,
                    std::set<std::string>& used) {
    options_detail::Setter s{kwargs, mask, who, used};
    T::fields(options, s);
}

/// TypeError for the first keyword of `kwargs` not in `used`, as Python words it.
inline void refuse_unknown_keywords(const py::dict& kwargs, const std::set<std::string>& used,
                                    const char* who) {
    for (auto item : kwargs) {
        std::string name = py::str(item.first);
        if (!used.count(name))
            throw py::type_error(std::string(who) + "() got an unexpected keyword argument '" +
                                 name + "'");
    }
}

/// [(name, default, doc), ...] of the fields of T shown by `mask`, with T's defaults.
template <typename T>
void list_keywords(py::list& out, unsigned mask, const T& defaults = T{}) {
    options_detail::Lister l{out, mask};
    T::fields(defaults, l);
}

}  // namespace tessel::python
