// Schedules: ts.create_schedule, the index-based primitives that Schedule::to_python() prints
// (s.split(2, 0, factor=32)) and the TVM-style stage view (s[C].split(C.op.axis[0], factor=32)).
//
// The primitives are not listed here: one method per step kind is made from the step's field
// description (schedule/Step.h, `fields()`), each argument converted by its field's role — a
// stage is an index, a tensor, an operation or s[...]; a loop is a leaf position, a loop a
// primitive returned, or an axis of the operation; a choice is its name. The references
// themselves and what they resolve to are C++ (schedule/References.h); this file only converts.
// Sugar over the step kinds: vectorize, unroll, parallel and bind (annotate), and tile.
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <type_traits>

#include "PyCommon.h"

#include "tessel/ir/IRPrinter.h"
#include "tessel/schedule/References.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/schedule/TensorIntrin.h"
#include "tessel/te/Operation.h"

namespace tessel::python {

namespace {

using SchedulePtr = std::shared_ptr<Schedule>;

// s[...]: a stage of a particular schedule.
struct PyStage {
    SchedulePtr s;
    StageRef ref;
    int index() const { return resolve_stage(*s, ref, "stage"); }
    const Stage& stage() const { return s->stage(index()); }
};

// A loop of a particular schedule (what split, fuse and tile return).
struct PyIter {
    SchedulePtr s;
    IterRef ref;
    const Iterator& iter() const { return iterator_of(*s, ref); }
};

// te.thread_axis("threadIdx.x"): a GPU thread axis to bind loops to (TVM's thread IterVar). The
// extent comes from the loop bound to it; `extent` (from dom) is kept for repr and checks.
struct ThreadAxis {
    std::string tag, name;
    std::optional<int64_t> extent;
};

std::string type_name(py::handle h) {
    return py::str(py::type::of(h)).cast<std::string>();
}

// An argument of a primitive as T (an int, a float or a str), or a TypeError naming the primitive,
// the parameter and what it accepts: no pybind11 cast message reaches the user.
bool is_int_like(py::handle o) {
    return !py::isinstance<py::bool_>(o) &&
           (py::isinstance<py::int_>(o) || py::hasattr(o, "__index__"));
}

template <typename T>
T arg_as(py::handle o, const char* prim, const char* name) {
    if constexpr (std::is_same_v<T, std::string>) {
        if (py::isinstance<py::str>(o)) return o.cast<std::string>();
        throw py::type_error(std::string(prim) + "(): '" + name + "' must be a str, not " +
                             type_name(o));
    } else if constexpr (std::is_floating_point_v<T>) {
        if (is_int_like(o) || py::isinstance<py::float_>(o)) return o.cast<T>();
        throw py::type_error(std::string(prim) + "(): '" + name + "' must be a number, not " +
                             type_name(o));
    } else {
        if (is_int_like(o)) {
            try {
                return py::int_(o.attr("__index__")()).cast<T>();
            } catch (const py::cast_error&) {
                throw py::value_error(std::string(prim) + "(): '" + name + "' is out of range");
            }
        }
        throw py::type_error(std::string(prim) + "(): '" + name + "' must be an int, not " +
                             type_name(o));
    }
}

PyIter py_leaf(const SchedulePtr& s, int stage, int pos) {
    return PyIter{s, leaf_ref(*s, stage, pos)};
}

int to_stage(const SchedulePtr& s, py::handle h, const char* prim) {
    if (is_int_like(h)) {
        int index = arg_as<int>(h, prim, "stage");
        s->stage(index);  // checks the range
        return index;
    }
    if (py::isinstance<Tensor>(h)) return s->stage_of(h.cast<Tensor>());
    if (py::isinstance<Operation>(h)) return resolve_stage(*s, StageRef{h.cast<Operation>()}, prim);
    if (py::isinstance<PyStage>(h)) {
        const PyStage& r = h.cast<const PyStage&>();
        if (r.s != s)
            TESSEL_THROW(ScheduleError)
                << prim << ": stage '" << r.ref.op->name << "' belongs to another schedule";
        return r.index();
    }
    throw py::type_error(std::string(prim) +
                         "(): a stage is an index, a tensor, an operation or s[tensor], not " +
                         type_name(h));
}

// The stable id of the loop `h` names in stage `stage` (a loop reference or an axis).
int to_iter_id(const SchedulePtr& s, int stage, py::handle h, const char* prim) {
    if (py::isinstance<PyIter>(h)) {
        const PyIter& r = h.cast<const PyIter&>();
        if (r.s != s)
            TESSEL_THROW(ScheduleError) << prim << " on stage '" << s->stage(stage).name()
                                        << "': the loop belongs to another schedule";
        return resolve_iter_id(*s, stage, r.ref, prim);
    }
    if (py::isinstance<IterVar>(h)) return resolve_iter_id(*s, stage, h.cast<IterVar>(), prim);
    throw py::type_error(std::string(prim) + "() on stage '" + s->stage(stage).name() +
                         "': a loop is a leaf position (int), an axis (IterVar) or a loop a "
                         "primitive returned (Iterator), not " +
                         type_name(h));
}

int to_leaf(const SchedulePtr& s, int stage, py::handle h, const char* prim) {
    if (is_int_like(h)) return arg_as<int>(h, prim, "iter");
    return leaf_position(*s, stage, to_iter_id(s, stage, h, prim), prim);
}

int to_dim(const SchedulePtr& s, int stage, py::handle h, const char* prim) {
    if (is_int_like(h)) return arg_as<int>(h, prim, "dim");
    return storage_dim_of(*s, stage, to_iter_id(s, stage, h, prim), prim);
}

bool is_sequence(py::handle h) {
    return py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h);
}

// Reads a step's fields from a Python call's arguments, each by its role (Step.h): positional
// arguments in field order, then keywords by field name; `preset` fields are fixed by the method
// (vectorize presets the annotation) and `aliases` maps other keyword names onto fields.
struct StepArgs {
    const SchedulePtr& s;
    const char* prim;
    py::tuple args;
    py::dict kwargs;
    py::dict preset;
    size_t next = 0;

    py::object take(const char* name, bool required = true) {
        if (preset.contains(name)) return preset[name];
        if (kwargs.contains(name)) {
            if (next < args.size())
                throw py::type_error(std::string(prim) + "() got multiple values for '" + name +
                                     "'");
            return kwargs[name];
        }
        if (next < args.size()) return args[next++];
        if (required)
            throw py::type_error(std::string(prim) + "() missing argument '" + name + "'");
        return py::none();
    }
    template <typename F>
    std::vector<int> list(py::handle h, F convert) {
        std::vector<int> out;
        if (!is_sequence(h)) return {convert(h)};
        for (py::handle e : h) out.push_back(convert(e));
        return out;
    }
    void stage(const char* name, int& v) { v = to_stage(s, take(name), prim); }
    void stages(const char* name, std::vector<int>& v) {
        v = list(take(name), [&](py::handle h) { return to_stage(s, h, prim); });
    }
    void leaf(const char* name, int& v, int st) { v = to_leaf(s, st, take(name), prim); }
    void leaves(const char* name, std::vector<int>& v, int st) {
        v = list(take(name), [&](py::handle h) { return to_leaf(s, st, h, prim); });
    }
    void leaf_order(const char* name, std::vector<int>& v, int st) { leaves(name, v, st); }
    void dim(const char* name, int& v, int st) { v = to_dim(s, st, take(name), prim); }
    void dim_order(const char* name, std::vector<int>& v, int st) {
        v = list(take(name), [&](py::handle h) { return to_dim(s, st, h, prim); });
    }
    template <typename T>
    void number(const char* name, T& v) {
        v = arg_as<T>(take(name), prim, name);
    }
    template <typename T>
    void number(const char* name, T& v, T dflt) {
        py::object o = take(name, false);
        v = o.is_none() ? dflt : arg_as<T>(o, prim, name);
    }
    void text(const char* name, std::string& v) { v = arg_as<std::string>(take(name), prim, name); }
    template <typename E>
    void choice(const char* name, E& v, std::type_identity_t<std::optional<E>> dflt = {}) {
        py::object o = take(name, !dflt.has_value());
        if (o.is_none()) {
            v = *dflt;
            return;
        }
        std::string text, legal;
        if (py::isinstance<ThreadAxis>(o))
            text = o.cast<const ThreadAxis&>().tag;
        else if (py::isinstance<py::str>(o))
            text = o.cast<std::string>();
        else
            throw py::type_error(
                std::string(prim) + "(): '" + name + "' must be a str naming the " +
                choice_kind(E{}) +
                (std::is_same_v<E, IterAnnotation> ? " (or a te.thread_axis())" : "") + ", not " +
                type_name(o));
        for (E e : choice_values(E{})) {
            if (text == choice_name(e)) {
                v = e;
                return;
            }
            legal += (legal.empty() ? "" : ", ") + std::string(choice_name(e));
        }
        TESSEL_THROW(ScheduleError) << prim << ": unknown " << choice_kind(E{}) << " '" << text
                                    << "' (one of: " << legal << ")";
    }
    void step_index(const char* name, int& v) { v = arg_as<int>(take(name), prim, name); }
    void step_indices(const char* name, std::vector<int>& v) {
        v = list(take(name), [&](py::handle h) { return arg_as<int>(h, prim, name); });
    }
    void numbers(const char* name, std::vector<int>& v) {
        v = list(take(name), [&](py::handle h) { return arg_as<int>(h, prim, name); });
    }
    void split_factor(const char* factor, const char* nparts, int64_t& f, bool& by_nparts) {
        py::object fo = take(factor, false), no = py::none();
        if (kwargs.contains(nparts)) no = kwargs[nparts];
        if (fo.is_none() == no.is_none())
            TESSEL_THROW(ScheduleError)
                << prim << ": give exactly one of " << factor << "= and " << nparts << "=";
        by_nparts = !no.is_none();
        f = arg_as<int64_t>(by_nparts ? no : fo, prim, by_nparts ? nparts : factor);
    }
    void check_all_used() const {
        if (next < args.size())
            throw py::type_error(std::string(prim) + "() takes at most " + std::to_string(next) +
                                 " positional arguments but " + std::to_string(args.size()) +
                                 " were given");
    }
};

// The tensor of new stage `index` a user indexes s[...] with: the output `like` names (the same
// output of a multi-output stage) or the first one.
Tensor new_stage_tensor(const SchedulePtr& s, int index, py::handle like) {
    const Operation& op = s->stage(index).dag_op;
    int v = py::isinstance<Tensor>(like) ? like.cast<Tensor>().value_index() : 0;
    return op_output(op, v < op_num_outputs(op) ? v : 0);
}

// Applies a step of kind T read from the call's arguments; returns what it made: the new stage's
// tensor (cache_read, cache_write, rfactor), the new loops (split: (outer, inner); fuse), or None.
template <typename T>
const std::set<std::string>& field_names();

template <typename T>
py::object apply_step(const SchedulePtr& s, const char* prim, py::args args, py::kwargs kwargs,
                      py::dict preset = {}) {
    // An unknown keyword is Python's TypeError before any field is read.
    for (auto item : kwargs)
        if (!field_names<T>().count(item.first.cast<std::string>()))
            throw py::type_error(std::string(prim) + "() got an unexpected keyword argument '" +
                                 item.first.cast<std::string>() + "'");
    StepArgs in{s, prim, args, kwargs, preset, 0};
    T step;
    T::fields(step, in);
    in.check_all_used();
    StepResult r = s->apply(step);
    if (r.new_stage >= 0) {
        py::object like = !args.empty()              ? py::object(args[0])
                          : kwargs.contains("stage") ? py::object(kwargs["stage"])
                                                     : py::object(py::none());
        return py::cast(new_stage_tensor(s, r.new_stage, like));
    }
    if (r.leaves.size() == 1) return py::cast(py_leaf(s, step.stage, r.leaves[0]));
    if (r.leaves.size() == 2)
        return py::make_tuple(py_leaf(s, step.stage, r.leaves[0]),
                              py_leaf(s, step.stage, r.leaves[1]));
    return py::none();
}

// The argument list of a step kind's method, for its docstring: "split(stage, iter, ...)".
struct Signature {
    std::string params;
    void add(const char* name, const std::string& suffix = "") {
        params += (params.empty() ? "" : ", ") + std::string(name) + suffix;
    }
    void stage(const char* n, int) { add(n); }
    void stages(const char* n, const std::vector<int>&) { add(n); }
    void leaf(const char* n, int, int) { add(n); }
    void leaves(const char* n, const std::vector<int>&, int) { add(n); }
    void leaf_order(const char* n, const std::vector<int>&, int) { add(n); }
    void dim(const char* n, int, int) { add(n); }
    void dim_order(const char* n, const std::vector<int>&, int) { add(n); }
    template <typename T>
    void number(const char* n, T, std::type_identity_t<std::optional<T>> dflt = {}) {
        add(n, dflt ? "=" + std::to_string(*dflt) : "");
    }
    void text(const char* n, const std::string&) { add(n); }
    template <typename E>
    void choice(const char* n, E, std::type_identity_t<std::optional<E>> dflt = {}) {
        add(n, dflt ? std::string("=\"") + choice_name(*dflt) + "\"" : "");
    }
    void step_index(const char* n, int) { add(n); }
    void step_indices(const char* n, const std::vector<int>&) { add(n); }
    void numbers(const char* n, const std::vector<int>&) { add(n); }
    void split_factor(const char* f, const char* n, int64_t, bool) {
        add(f, "=None");
        add(n, "=None");
    }
};

// A method's docstring; pybind11 keeps the pointer, so the text lives as long as the module.
const char* doc(std::string text) {
    static std::deque<std::string> docs;
    return docs.emplace_back(std::move(text)).c_str();
}

template <typename T>
const std::set<std::string>& field_names() {
    static const std::set<std::string> names = [] {
        std::vector<std::string> listed = step_field_names<T>();
        return std::set<std::string>(listed.begin(), listed.end());
    }();
    return names;
}

template <typename T>
const char* step_doc() {
    Signature sig;
    const T step{};
    T::fields(step, sig);
    std::string text = "Applies a '" + std::string(T::kind) +
                       "' step (docs/schedule.md): " + T::kind + "(" + sig.params + ")";
    if constexpr (requires { T::summary; }) text += ".\n\n" + std::string(T::summary);
    return doc(text);
}

// One method per step kind, and the annotation sugar (vectorize, unroll, parallel, bind).
void def_step_methods(py::class_<Schedule, SchedulePtr>& cls) {
    for_each_step_kind([&cls](auto kind) {
        using T = decltype(kind);
        cls.def(
            T::kind,
            [](const SchedulePtr& s, py::args args, py::kwargs kw) {
                return apply_step<T>(s, T::kind, args, kw);
            },
            step_doc<T>());
    });
    for (IterAnnotation a :
         {IterAnnotation::Vectorize, IterAnnotation::Unroll, IterAnnotation::Parallel}) {
        const char* name = annotation_name(a);
        cls.def(
            name,
            [name](const SchedulePtr& s, py::args args, py::kwargs kw) {
                py::dict preset;
                preset["annotation"] = name;
                return apply_step<AnnotateStep>(s, name, args, kw, preset);
            },
            doc(std::string(name) + "(stage, iter): annotates a loop"));
    }
    cls.def(
        "bind",
        [](const SchedulePtr& s, py::args args, py::kwargs kw) {
            if (kw.contains("thread")) kw["annotation"] = kw.attr("pop")("thread");
            return apply_step<AnnotateStep>(s, "bind", args, kw);
        },
        "bind(stage, iter, thread): binds a loop to a GPU thread axis (\"threadIdx.x\", "
        "\"blockIdx.y\", \"vthread\").");
    cls.def(
        "tile",
        [](const SchedulePtr& s, py::object stage, py::object x, py::object y, py::object fx,
           py::object fy) {
            int st = to_stage(s, stage, "tile");
            int p = s->tile(st, to_leaf(s, st, x, "tile"), to_leaf(s, st, y, "tile"),
                            arg_as<int64_t>(fx, "tile", "x_factor"),
                            arg_as<int64_t>(fy, "tile", "y_factor"));
            return py::make_tuple(py_leaf(s, st, p), py_leaf(s, st, p + 1), py_leaf(s, st, p + 2),
                                  py_leaf(s, st, p + 3));
        },
        py::arg("stage"), py::arg("x"), py::arg("y"), py::arg("x_factor"), py::arg("y_factor"),
        "Tiles two loops; returns (x_outer, y_outer, x_inner, y_inner).");
}

// Whether a step kind's fields after the stage are one list of loops or dimensions (reorder,
// fuse, storage_reorder): the stage view then takes its items as arguments, as TVM's does.
template <typename T>
constexpr bool takes_loop_list() {
    return std::is_same_v<T, FuseStep> || std::is_same_v<T, ReorderStep> ||
           std::is_same_v<T, StorageReorderStep>;
}

// s[C].<method>(...) calls s.<method>(s[C], ...).
py::object forward(const PyStage& r, const char* method, py::tuple args, py::kwargs kw) {
    py::list all;
    all.append(py::cast(r));
    for (py::handle a : args) all.append(a);
    return py::cast(r.s).attr(method)(*py::tuple(all), **kw);
}

// TVM's per-loop form s[C].pragma(loop, "auto_unroll_max_step", 16): tessel's pragmas are the
// stage's (the loop only says where TVM would put it); "unroll_explicit" is what tessel always
// does. The stage form s[C].pragma("auto_unroll_max_step", 16) is the step's own.
py::object stage_pragma(const PyStage& r, py::args args, py::kwargs kw) {
    bool loop_form = !args.empty() && (py::isinstance<PyIter>(args[0]) ||
                                       py::isinstance<IterVar>(args[0]) || is_int_like(args[0]));
    if (!loop_form) return forward(r, "pragma", args, kw);
    if (args.size() > 3)
        throw py::type_error("pragma() takes (loop, pragma_type, pragma_value=None)");
    py::object key = args.size() > 1              ? py::object(args[1])
                     : kw.contains("pragma_type") ? py::object(kw["pragma_type"])
                                                  : py::object(py::none());
    py::object value = args.size() > 2               ? py::object(args[2])
                       : kw.contains("pragma_value") ? py::object(kw["pragma_value"])
                                                     : py::object(py::none());
    for (auto item : kw) {
        std::string k = item.first.cast<std::string>();
        if (k != "pragma_type" && k != "pragma_value")
            throw py::type_error("pragma() got an unexpected keyword argument '" + k + "'");
    }
    to_leaf(r.s, r.index(), args[0], "pragma");  // the loop must be one of the stage's
    std::string type = arg_as<std::string>(key, "pragma", "pragma_type");
    if (type == "unroll_explicit") {
        if (!value.is_none()) arg_as<int64_t>(value, "pragma", "pragma_value");
        return py::none();
    }
    if (value.is_none()) throw py::type_error("pragma(): '" + type + "' needs a pragma_value");
    return forward(r, "pragma", py::make_tuple(key, value), py::kwargs());
}

void def_stage_view_methods(py::class_<PyStage>& cls) {
    for_each_step_kind([&cls](auto kind) {
        using T = decltype(kind);
        if constexpr (std::is_same_v<T, PragmaStep>) {
            cls.def(T::kind, &stage_pragma,
                    "pragma(loop, pragma_type, pragma_value) (TVM's form) or pragma(key, value): "
                    "'auto_unroll_max_step' for the stage; 'unroll_explicit' is always on.");
        } else {
            cls.def(
                T::kind,
                [](const PyStage& r, py::args args, py::kwargs kw) {
                    if (takes_loop_list<T>() && !(args.size() == 1 && is_sequence(args[0])))
                        return forward(r, T::kind, py::make_tuple(py::list(args)), kw);
                    return forward(r, T::kind, args, kw);
                },
                step_doc<T>());
        }
    });
    for (const char* name : {"vectorize", "unroll", "parallel", "bind"})
        cls.def(name, [name](const PyStage& r, py::args args, py::kwargs kw) {
            return forward(r, name, args, kw);
        });
    cls.def(
        "tile",
        [](const PyStage& r, py::object x, py::object y, py::object fx, py::object fy) {
            return py::cast(r.s).attr("tile")(r, x, y, fx, fy);
        },
        py::arg("x_parent"), py::arg("y_parent"), py::arg("x_factor"), py::arg("y_factor"));
}

void def_stage(py::module_& m) {
    py::class_<PyStage> cls(m, "Stage", "One stage of a schedule (s[tensor]).");
    cls.def_property_readonly(
           "op", [](const PyStage& r) { return r.stage().op; },
           "The operation the stage computes now (rebuilt by cache_read, cache_write, rfactor).")
        .def_property_readonly(
            "origin_op", [](const PyStage& r) { return r.stage().dag_op; },
            "The DAG operation the stage computes (as the user's tensors name it).")
        .def_property_readonly("name", [](const PyStage& r) { return r.stage().name(); })
        .def_property_readonly("index", &PyStage::index)
        .def_property_readonly(
            "leaf_iter_vars",
            [](const PyStage& r) {
                std::vector<PyIter> out;
                for (size_t pos = 0; pos < r.stage().leaf.size(); ++pos)
                    out.push_back(py_leaf(r.s, r.index(), static_cast<int>(pos)));
                return out;
            },
            "The current loops, outermost first.")
        .def_property_readonly(
            "all_iter_vars",
            [](const PyStage& r) {
                std::vector<PyIter> out;
                for (size_t id = 0; id < r.stage().iters.size(); ++id)
                    out.push_back(PyIter{r.s, iter_ref(*r.s, r.index(), static_cast<int>(id))});
                return out;
            })
        .def_property_readonly(
            "attach",
            [](const PyStage& r) {
                AttachKind k = r.stage().attach;
                return k == AttachKind::Root ? "root" : k == AttachKind::Inlined ? "inline" : "at";
            })
        .def("loop_nest", [](const PyStage& r) { return r.s->loop_nest_string(r.index()); })
        .def("__eq__",
             [](const PyStage& a, py::object b) {
                 return py::isinstance<PyStage>(b) && a.s == b.cast<PyStage>().s &&
                        a.ref.op.same_as(b.cast<PyStage>().ref.op);
             })
        .def("__hash__", [](const PyStage& r) { return std::hash<const void*>()(r.ref.op.get()); })
        .def("__repr__", [](const PyStage& r) { return "Stage(" + r.ref.op->name + ")"; });
    def_stage_view_methods(cls);

    py::class_<PyIter>(m, "Iterator", "A loop of a stage (what split, fuse and tile return).")
        .def_property_readonly("name", [](const PyIter& r) { return r.iter().name; })
        .def_property_readonly("extent",
                               [](const PyIter& r) -> py::object {
                                   if (auto v = r.iter().const_extent()) return py::int_(*v);
                                   return py::cast(r.iter().extent);
                               })
        .def_property_readonly("kind",
                               [](const PyIter& r) {
                                   return r.iter().kind == IterKind::Reduction ? "reduction"
                                                                               : "spatial";
                               })
        .def_property_readonly("annotation",
                               [](const PyIter& r) { return annotation_name(r.iter().annotation); })
        .def_property_readonly("stage",
                               [](const PyIter& r) {
                                   return PyStage{r.s, r.ref.stage};
                               })
        .def_property_readonly("id", [](const PyIter& r) { return r.ref.id; })
        .def("__repr__", [](const PyIter& r) {
            return "Iterator(" + r.ref.stage.op->name + "." + r.iter().name + ")";
        });
}

// Outputs: a tensor, an operation (all its outputs, TVM's create_schedule(C.op)) or a list of
// them; TypeError naming `what` otherwise.
std::vector<Tensor> to_tensors(py::handle outputs, const char* what) {
    std::vector<Tensor> out;
    auto add = [&](py::handle h) {
        if (py::isinstance<Tensor>(h)) {
            out.push_back(h.cast<Tensor>());
        } else if (py::isinstance<Operation>(h)) {
            Operation op = h.cast<Operation>();
            for (int i = 0; i < op_num_outputs(op); ++i) out.push_back(op_output(op, i));
        } else {
            throw py::type_error(std::string(what) +
                                 ": outputs are a Tensor, an Operation or a list of them, not " +
                                 type_name(h));
        }
    };
    if (is_sequence(outputs)) {
        for (py::handle h : outputs) add(h);
    } else {
        add(outputs);
    }
    return out;
}

void def_schedule_queries(py::class_<Schedule, SchedulePtr>& cls) {
    cls.def("__getitem__",
            [](const SchedulePtr& s, py::object key) {
                return PyStage{s, stage_ref(*s, to_stage(s, key, "schedule[]"))};
            })
        .def_property_readonly("stages",
                               [](const SchedulePtr& s) {
                                   std::vector<PyStage> out;
                                   for (const Stage& st : s->stages())
                                       out.push_back(PyStage{s, StageRef{st.dag_op}});
                                   return out;
                               })
        .def_property_readonly("outputs", &Schedule::outputs)
        .def_property_readonly("num_steps", [](const Schedule& s) { return s.steps().size(); })
        .def_property_readonly("workload_key",
                               [](const Schedule& s) {
                                   char buf[17];
                                   std::snprintf(buf, sizeof buf, "%016llx",
                                                 (unsigned long long)s.workload_key());
                                   return std::string(buf);
                               })
        .def(
            "loop_nest",
            [](const SchedulePtr& s, py::object stage) {
                return s->loop_nest_string(to_stage(s, stage, "loop_nest"));
            },
            py::arg("stage"))
        .def_property_readonly(
            "stage_map",
            [](const SchedulePtr& s) {
                py::dict d;
                for (const Stage& st : s->stages())
                    d[py::cast(st.dag_op)] = PyStage{s, StageRef{st.dag_op}};
                return d;
            },
            "{operation: stage} (TVM's stage_map), keyed by the DAG's operations.")
        .def(
            "normalize", [](const SchedulePtr& s) { return s; },
            "TVM's normalize: tessel's loops always start at 0, so the schedule itself.")
        .def("to_python", &Schedule::to_python, "The steps as a runnable Python script.")
        .def("to_json", &Schedule::to_json, "The steps as JSON (what a tuning record stores).")
        .def(
            "copy", [](const Schedule& s) { return std::make_shared<Schedule>(s); },
            "An independent copy (same steps).");
}

// The keyword limits of create_schedule and schedule_from_json.
ScheduleLimits limits_of(int max_vector_lanes, int64_t max_unroll) {
    ScheduleLimits limits;
    limits.max_vector_lanes = max_vector_lanes;
    limits.max_unroll = max_unroll;
    return limits;
}

}  // namespace

// te.thread_axis(dom=None, tag="", name=""): TVM's signature, a str first argument is the tag.
ThreadAxis thread_axis(py::object dom, py::object tag, py::object name) {
    if (py::isinstance<py::str>(dom) && (tag.is_none() || tag.cast<std::string>().empty())) {
        tag = dom;
        dom = py::none();
    }
    ThreadAxis t;
    t.tag = tag.is_none() ? "" : arg_as<std::string>(tag, "thread_axis", "tag");
    t.name = name.is_none() ? "" : arg_as<std::string>(name, "thread_axis", "name");
    bool known = false;
    for (IterAnnotation a : choice_values(IterAnnotation{}))
        known = known || (a >= IterAnnotation::VThread && t.tag == annotation_name(a));
    if (!known)
        throw py::value_error(
            "thread_axis(): 'tag' is one of vthread, blockIdx.x/y/z, "
            "threadIdx.x/y/z, not '" +
            t.tag + "'");
    if (t.name.empty()) t.name = t.tag;
    if (!dom.is_none()) {
        if (!is_sequence(dom) || py::len(dom) != 2)
            throw py::type_error("thread_axis(): 'dom' is (begin, end) or None, not " +
                                 type_name(dom));
        py::tuple d(dom);
        int64_t b = arg_as<int64_t>(d[0], "thread_axis", "dom"),
                e = arg_as<int64_t>(d[1], "thread_axis", "dom");
        if (b != 0 || e <= 0)
            throw py::value_error("thread_axis(): 'dom' must be (0, extent) with extent > 0");
        t.extent = e;
    }
    return t;
}

void def_thread_axis(py::module_& m) {
    py::class_<ThreadAxis>(m, "ThreadAxis", "A GPU thread axis (te.thread_axis) to bind a loop to.")
        .def_readonly("tag", &ThreadAxis::tag)
        .def_readonly("thread_tag", &ThreadAxis::tag)
        .def_readonly("name", &ThreadAxis::name)
        .def_readonly("extent", &ThreadAxis::extent)
        .def("__repr__", [](const ThreadAxis& t) {
            return "ThreadAxis(" + t.tag +
                   (t.extent ? ", extent=" + std::to_string(*t.extent) : std::string()) + ")";
        });
    m.def("thread_axis", &thread_axis, py::arg("dom") = py::none(), py::arg("tag") = "",
          py::arg("name") = "",
          "A GPU thread axis, TVM's te.thread_axis: thread_axis(\"threadIdx.x\"), "
          "thread_axis((0, 4), \"vthread\", name=\"vx\"); s[C].bind(loop, axis) binds a loop to it "
          "(the loop's extent is the number of threads).");
}

void init_schedule(py::module_& m) {
    def_stage(m);
    def_thread_axis(m);
    py::class_<Schedule, SchedulePtr> cls(m, "Schedule",
                                          "How to compute a DAG: its stages and recorded steps.");
    def_step_methods(cls);
    def_schedule_queries(cls);
    m.def(
        "create_schedule",
        [](py::object outputs, int max_vector_lanes, int64_t max_unroll) {
            return std::make_shared<Schedule>(to_tensors(outputs, "create_schedule"),
                                              limits_of(max_vector_lanes, max_unroll));
        },
        py::arg("outputs"), py::kw_only(), py::arg("max_vector_lanes") = 64,
        py::arg("max_unroll") = 512, "A schedule of the DAG of `outputs` (a tensor or a list).");
    m.def(
        "schedule_from_json",
        [](py::object outputs, const std::string& json, int max_vector_lanes, int64_t max_unroll) {
            return std::make_shared<Schedule>(
                schedule_from_json(to_tensors(outputs, "schedule_from_json"), json,
                                   limits_of(max_vector_lanes, max_unroll)));
        },
        py::arg("outputs"), py::arg("json"), py::kw_only(), py::arg("max_vector_lanes") = 64,
        py::arg("max_unroll") = 512,
        "Replays Schedule.to_json() on a schedule of `outputs` with these limits (a GPU record "
        "may need max_unroll=1024; ScheduleError for another DAG or a refused step).");
    m.def(
        "tensor_intrins",
        [] {
            py::dict out;
            for (const TensorIntrin& in : tensor_intrins())
                out[py::str(in.name)] = to_string(as_compute(in.pattern.op())->body[0]);
            return out;
        },
        "The tensor intrinsics Stage.tensorize knows: name -> compute pattern (the body of a "
        "compute whose axes are the loops it replaces; schedule/TensorIntrin.h).");
    m.def(
        "dag_hash", [](py::object outputs) { return dag_hash(to_tensors(outputs, "dag_hash")); },
        py::arg("outputs"));
}

}  // namespace tessel::python
