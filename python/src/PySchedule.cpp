// Schedules: ts.create_schedule, the TVM-style stage view (s[C].split(C.op.axis[0], factor=32))
// and the index-based primitives that Schedule::to_python() prints (s.split(2, 0, factor=32)).
//
// Both forms call the same C++ primitive. Stages are addressed by index, tensor, operation or
// Stage view; iterators by leaf position, by an Iterator handle a primitive returned, or by an
// IterVar of the operation (C.op.axis[i], C.op.reduce_axis[j]: its root iterator). Handles name
// the stage by its DAG operation (Stage::dag_op) and the iterator by its stable id, so they stay
// valid when later steps insert stages (cache_read, cache_write, rfactor) or rebuild the stage's
// operation to read through a cache. cache_write and rfactor give the stage a fresh loop nest:
// iterator handles of the old one are refused. Adding a primitive: one resolving lambda in
// def_primitives below (and a forwarding one in def_stage for the stage view).
#include <memory>

#include <algorithm>
#include "PyCommon.h"

#include "tessel/ir/IRPrinter.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

namespace tessel::python {

namespace {

using SchedulePtr = std::shared_ptr<Schedule>;

// A stage of a schedule, by the DAG operation it computes (Stage::dag_op): stable while steps
// insert stages or rebuild the stage's operation.
struct StageRef {
    SchedulePtr s;
    Operation op;
    int index() const {
        const auto& stages = s->stages();
        for (size_t i = 0; i < stages.size(); ++i)
            if (stages[i].dag_op.same_as(op)) return static_cast<int>(i);
        for (size_t i = 0; i < stages.size(); ++i)
            if (stages[i].op.same_as(op)) return static_cast<int>(i);
        TESSEL_THROW(ScheduleError)
            << "operation '" << op->name << "' has no stage in this schedule";
    }
    const Stage& stage() const { return s->stage(index()); }
};

StageRef stage_ref(const SchedulePtr& s, int index) {
    return StageRef{s, s->stage(index).dag_op};
}

// Whether two operations have the same loop variables: a stage whose operation was rebuilt to
// read through a cache keeps its loops; cache_write and rfactor give it new ones.
bool same_loops(const Operation& a, const Operation& b) {
    if (a.same_as(b)) return true;
    const ComputeOpNode *ca = as_compute(a), *cb = as_compute(b);
    if (!ca || !cb || ca->axis.size() != cb->axis.size() ||
        ca->reduce_axis.size() != cb->reduce_axis.size())
        return false;
    for (size_t i = 0; i < ca->axis.size(); ++i)
        if (!ca->axis[i].same_as(cb->axis[i])) return false;
    for (size_t i = 0; i < ca->reduce_axis.size(); ++i)
        if (!ca->reduce_axis[i].same_as(cb->reduce_axis[i])) return false;
    return true;
}

// One iterator of a stage, by stable id (Stage::iters) of the loop nest of operation `loops`.
struct IterRef {
    StageRef stage;
    int id;
    Operation loops;  // the stage's operation when the handle was made
    bool valid() const { return same_loops(loops, stage.stage().op); }
    const Iterator& iter() const {
        if (!valid())
            TESSEL_THROW(ScheduleError)
                << "iterator handle of stage '" << stage.op->name
                << "' is from before cache_write or rfactor gave the stage a new loop nest; take "
                   "the loops from s[...].leaf_iter_vars or s[...].op.axis";
        return stage.stage().iters.at(id);
    }
};

std::string leaf_list(const Stage& st) {
    std::string out;
    for (size_t i = 0; i < st.leaf.size(); ++i)
        out += (i ? ", " : "") + std::to_string(i) + "=" + st.iters[st.leaf[i]].name;
    return out;
}

std::string type_name(py::handle h) {
    return py::str(py::type::of(h)).cast<std::string>();
}

int resolve_stage(const SchedulePtr& s, py::handle h, const char* primitive) {
    if (py::isinstance<py::int_>(h)) {
        int index = h.cast<int>();
        s->stage(index);  // checks the range
        return index;
    }
    if (py::isinstance<Tensor>(h)) return s->stage_of(h.cast<Tensor>());
    if (py::isinstance<Operation>(h)) return StageRef{s, h.cast<Operation>()}.index();
    if (py::isinstance<StageRef>(h)) {
        const StageRef& r = h.cast<const StageRef&>();
        if (r.s != s)
            TESSEL_THROW(ScheduleError)
                << primitive << ": stage '" << r.op->name << "' belongs to another schedule";
        return r.index();
    }
    TESSEL_THROW(ScheduleError) << primitive << ": a stage is an index, a tensor or s[tensor], not "
                                << type_name(h);
}

// The position among the root axes (data-parallel, then reduction) of IterVar `v` in stage `st`,
// or -1. The axes of the stage's operation; after cache_write or rfactor rebuilt the stage, also
// the data-parallel axes of the user's operation (C.op.axis[i] stays axis i of C's stage).
int root_axis(const Stage& st, const IterVar& v) {
    if (const ComputeOpNode* c = as_compute(st.op)) {
        for (size_t i = 0; i < c->axis.size(); ++i)
            if (c->axis[i].same_as(v)) return static_cast<int>(i);
        for (size_t j = 0; j < c->reduce_axis.size(); ++j)
            if (c->reduce_axis[j].same_as(v)) return static_cast<int>(c->axis.size() + j);
        const ComputeOpNode* d = as_compute(st.dag_op);
        if (d && d->axis.size() == c->axis.size())
            for (size_t i = 0; i < d->axis.size(); ++i)
                if (d->axis[i].same_as(v)) return static_cast<int>(i);
    }
    return -1;
}

// The stable id of the iterator `h` names in stage `stage` (a handle or an axis).
int resolve_iter_id(const SchedulePtr& s, int stage, py::handle h, const char* primitive) {
    const Stage& st = s->stage(stage);
    if (py::isinstance<IterRef>(h)) {
        const IterRef& r = h.cast<const IterRef&>();
        if (r.stage.s != s || !r.stage.op.same_as(st.dag_op))
            TESSEL_THROW(ScheduleError)
                << primitive << " on stage '" << st.name() << "': iterator '"
                << (r.valid() ? r.iter().name : std::string("?")) << "' belongs to stage '"
                << r.stage.op->name << "'" << (r.stage.s != s ? " of another schedule" : "");
        if (!r.valid())
            TESSEL_THROW(ScheduleError)
                << primitive << " on stage '" << st.name()
                << "': the iterator handle is from before cache_write or rfactor gave the stage "
                   "a new loop nest; the loops are: "
                << leaf_list(st);
        return r.id;
    }
    if (py::isinstance<IterVar>(h)) {
        IterVar v = h.cast<IterVar>();
        int axis = root_axis(st, v);
        if (axis < 0)
            TESSEL_THROW(ScheduleError) << primitive << " on stage '" << st.name() << "': axis '"
                                        << v.var().name() << "' is not an axis of '" << st.name()
                                        << "' (use s[" << st.name() << "].op.axis / .reduce_axis)";
        return st.root.at(axis);
    }
    TESSEL_THROW(ScheduleError) << primitive << " on stage '" << st.name()
                                << "': an iterator is a leaf position, an axis or an iterator "
                                   "a primitive returned, not "
                                << type_name(h);
}

// The leaf position of `h` in stage `stage`.
int resolve_iter(const SchedulePtr& s, int stage, py::handle h, const char* primitive) {
    if (py::isinstance<py::int_>(h)) return h.cast<int>();
    int id = resolve_iter_id(s, stage, h, primitive);
    const Stage& st = s->stage(stage);
    for (size_t i = 0; i < st.leaf.size(); ++i)
        if (st.leaf[i] == id) return static_cast<int>(i);
    TESSEL_THROW(ScheduleError) << primitive << " on stage '" << st.name() << "': iterator '"
                                << st.iters.at(id).name
                                << "' is no longer a loop of the stage (it was split or fused); "
                                   "the loops are: "
                                << leaf_list(st);
}

// A storage dimension of stage `stage` (StorageDim): a position, or a data-parallel axis (an
// IterVar or a root iterator handle) that is still stored whole.
int resolve_dim(const SchedulePtr& s, int stage, py::handle h, const char* primitive) {
    if (py::isinstance<py::int_>(h)) return h.cast<int>();
    const Stage& st = s->stage(stage);
    int id = resolve_iter_id(s, stage, h, primitive);
    auto root = std::find(st.root.begin(), st.root.end(), id);
    const ComputeOpNode* c = as_compute(st.op);
    int axis = static_cast<int>(root - st.root.begin());
    if (root == st.root.end() || !c || axis >= static_cast<int>(c->axis.size()))
        TESSEL_THROW(ScheduleError)
            << primitive << " on stage '" << st.name() << "': iterator '" << st.iters.at(id).name
            << "' is not a data-parallel axis; a storage dimension is a position or an axis";
    std::string dims;
    for (size_t d = 0; d < st.storage.size(); ++d) {
        const StorageDim& sd = st.storage[d];
        if (sd.axis == axis && sd.part == StorageDim::Part::Whole) return static_cast<int>(d);
        dims += (d ? ", " : "") + std::to_string(d) + ": " + c->axis[sd.axis].var().name() +
                (sd.part == StorageDim::Part::Outer   ? ".outer"
                 : sd.part == StorageDim::Part::Inner ? ".inner"
                                                      : "");
    }
    TESSEL_THROW(ScheduleError) << primitive << " on stage '" << st.name() << "': axis '"
                                << c->axis[axis].var().name()
                                << "' is stored split; give a storage dimension position: [" << dims
                                << "]";
}

IterRef leaf_ref(const SchedulePtr& s, int stage, int pos) {
    const Stage& st = s->stage(stage);
    return IterRef{stage_ref(s, stage), st.leaf.at(pos), st.op};
}

TailStrategy parse_tail(const std::string& name) {
    for (TailStrategy t : {TailStrategy::Guard, TailStrategy::ShiftInwards, TailStrategy::RoundUp})
        if (name == tail_strategy_name(t)) return t;
    TESSEL_THROW(ScheduleError) << "split: unknown tail strategy '" << name
                                << "' (guard, shift_inwards or round_up)";
}

IterAnnotation parse_annotation(const std::string& name, const char* primitive) {
    for (int a = 0; a <= static_cast<int>(IterAnnotation::ThreadZ); ++a)
        if (name == annotation_name(static_cast<IterAnnotation>(a)))
            return static_cast<IterAnnotation>(a);
    TESSEL_THROW(ScheduleError) << primitive << ": unknown annotation '" << name
                                << "' (e.g. vectorize, unroll, parallel, threadIdx.x, blockIdx.x)";
}

StorageScope parse_scope(const std::string& name, const char* primitive) {
    for (StorageScope sc : {StorageScope::Global, StorageScope::Shared, StorageScope::Local})
        if (name == scope_name(sc)) return sc;
    TESSEL_THROW(ScheduleError) << primitive << ": unknown storage scope '" << name
                                << "' (global, shared or local)";
}

py::tuple split(const SchedulePtr& s, py::handle stage_h, py::handle iter_h, py::object factor,
                py::object nparts, const std::string& tail) {
    int stage = resolve_stage(s, stage_h, "split");
    int iter = resolve_iter(s, stage, iter_h, "split");
    if (factor.is_none() == nparts.is_none())
        TESSEL_THROW(ScheduleError) << "split on stage '" << s->stage(stage).name()
                                    << "': give exactly one of factor= and nparts=";
    std::pair<int, int> r =
        factor.is_none() ? s->split_nparts(stage, iter, nparts.cast<int64_t>(), parse_tail(tail))
                         : s->split(stage, iter, factor.cast<int64_t>(), parse_tail(tail));
    return py::make_tuple(leaf_ref(s, stage, r.first), leaf_ref(s, stage, r.second));
}

std::vector<int> resolve_iters(const SchedulePtr& s, int stage, py::handle iters,
                               const char* prim) {
    std::vector<int> out;
    for (py::handle h : iters) out.push_back(resolve_iter(s, stage, h, prim));
    return out;
}

// TVM's reorder: the given loops take the positions they held, in the given order; the others
// stay where they are. A full permutation of positions is the C++ primitive's argument.
std::vector<int> full_order(const Stage& st, std::vector<int> given) {
    std::vector<int> order(st.leaf.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::vector<int> slots = given;
    std::sort(slots.begin(), slots.end());
    if (std::adjacent_find(slots.begin(), slots.end()) != slots.end())
        return given;  // a loop given twice: the primitive reports it
    for (size_t i = 0; i < given.size(); ++i)
        if (slots[i] >= 0 && slots[i] < static_cast<int>(order.size()))
            order[slots[i]] = given[i];
        else
            return given;  // out of range: the primitive reports it too
    return order;
}

// The primitives, index-based (as to_python prints them): every one takes `stage` first.
void def_primitives(py::class_<Schedule, SchedulePtr>& cls) {
    using O = py::object;
    cls.def(
        "split",
        [](const SchedulePtr& s, O stage, O iter, O factor, O nparts, std::string tail) {
            return split(s, stage, iter, factor, nparts, tail);
        },
        py::arg("stage"), py::arg("iter"), py::arg("factor") = py::none(),
        py::arg("nparts") = py::none(), py::arg("tail") = "guard",
        "Splits a loop by factor= (inner extent) or nparts= (outer extent); returns (outer, "
        "inner).");
    cls.def(
        "fuse",
        [](const SchedulePtr& s, O stage, py::list iters) {
            int st = resolve_stage(s, stage, "fuse");
            return leaf_ref(s, st, s->fuse(st, resolve_iters(s, st, iters, "fuse")));
        },
        py::arg("stage"), py::arg("iters"), "Fuses adjacent loops (outermost first).");
    cls.def(
        "reorder",
        [](const SchedulePtr& s, O stage, py::list order) {
            int st = resolve_stage(s, stage, "reorder");
            s->reorder(st, full_order(s->stage(st), resolve_iters(s, st, order, "reorder")));
        },
        py::arg("stage"), py::arg("order"), "Puts the given loops in this order (in their slots).");
    cls.def(
        "tile",
        [](const SchedulePtr& s, O stage, O x, O y, int64_t fx, int64_t fy) {
            int st = resolve_stage(s, stage, "tile");
            int xi = resolve_iter(s, st, x, "tile"), yi = resolve_iter(s, st, y, "tile");
            int p = s->tile(st, xi, yi, fx, fy);
            return py::make_tuple(leaf_ref(s, st, p), leaf_ref(s, st, p + 1),
                                  leaf_ref(s, st, p + 2), leaf_ref(s, st, p + 3));
        },
        py::arg("stage"), py::arg("x"), py::arg("y"), py::arg("x_factor"), py::arg("y_factor"),
        "Tiles two loops; returns (x_outer, y_outer, x_inner, y_inner).");
#define TESSEL_PY_ANNOTATION(name)                         \
    cls.def(                                               \
        #name,                                             \
        [](const SchedulePtr& s, O stage, O iter) {        \
            int st = resolve_stage(s, stage, #name);       \
            s->name(st, resolve_iter(s, st, iter, #name)); \
        },                                                 \
        py::arg("stage"), py::arg("iter"));
    TESSEL_PY_ANNOTATION(vectorize)
    TESSEL_PY_ANNOTATION(unroll)
    TESSEL_PY_ANNOTATION(parallel)
#undef TESSEL_PY_ANNOTATION
    cls.def(
        "annotate",
        [](const SchedulePtr& s, O stage, O iter, const std::string& a) {
            int st = resolve_stage(s, stage, "annotate");
            s->annotate(st, resolve_iter(s, st, iter, "annotate"), parse_annotation(a, "annotate"));
        },
        py::arg("stage"), py::arg("iter"), py::arg("annotation"));
    cls.def(
        "bind",
        [](const SchedulePtr& s, O stage, O iter, const std::string& thread) {
            int st = resolve_stage(s, stage, "bind");
            s->bind(st, resolve_iter(s, st, iter, "bind"), parse_annotation(thread, "bind"));
        },
        py::arg("stage"), py::arg("iter"), py::arg("thread"),
        "Binds a loop to a GPU thread axis (\"threadIdx.x\", \"blockIdx.y\", \"vthread\").");
    cls.def(
        "set_scope",
        [](const SchedulePtr& s, O stage, const std::string& scope) {
            s->set_scope(resolve_stage(s, stage, "set_scope"), parse_scope(scope, "set_scope"));
        },
        py::arg("stage"), py::arg("scope"),
        "Where the stage's buffer lives: \"global\", \"shared\" (per thread block) or \"local\" "
        "(per thread).");
    cls.def(
        "pragma",
        [](const SchedulePtr& s, O stage, const std::string& key, int64_t value) {
            s->apply(PragmaStep{resolve_stage(s, stage, "pragma"), key, value});
        },
        py::arg("stage"), py::arg("key"), py::arg("value"),
        "A stage pragma: \"auto_unroll_max_step\".");
    cls.def(
        "compute_at",
        [](const SchedulePtr& s, O stage, O target, O iter) {
            int st = resolve_stage(s, stage, "compute_at");
            int tg = resolve_stage(s, target, "compute_at");
            s->compute_at(st, tg, resolve_iter(s, tg, iter, "compute_at"));
        },
        py::arg("stage"), py::arg("target"), py::arg("target_iter"));
    cls.def(
        "compute_inline",
        [](const SchedulePtr& s, O stage) {
            s->compute_inline(resolve_stage(s, stage, "compute_inline"));
        },
        py::arg("stage"));
    cls.def(
        "compute_root",
        [](const SchedulePtr& s, O stage) {
            s->compute_root(resolve_stage(s, stage, "compute_root"));
        },
        py::arg("stage"));
}

// The tensor of new stage `index` a user indexes s[...] with: the output `like` names (the same
// output of a multi-output stage) or the first one.
Tensor new_stage_tensor(const SchedulePtr& s, int index, py::handle like) {
    const Operation& op = s->stage(index).dag_op;
    int v = py::isinstance<Tensor>(like) ? like.cast<Tensor>().value_index() : 0;
    return op_output(op, v < op_num_outputs(op) ? v : 0);
}

// cache_read, cache_write, storage layouts, follow_split, rfactor (Schedule.h's second group).
// The stage-inserting ones return the new stage's tensor, as TVM's do.
void def_cache_primitives(py::class_<Schedule, SchedulePtr>& cls) {
    using O = py::object;
    cls.def(
        "cache_read",
        [](const SchedulePtr& s, O tensor, const std::string& scope, O readers) {
            int st = resolve_stage(s, tensor, "cache_read");
            std::vector<int> rs;
            if (py::isinstance<py::list>(readers) || py::isinstance<py::tuple>(readers))
                for (py::handle r : readers) rs.push_back(resolve_stage(s, r, "cache_read"));
            else
                rs.push_back(resolve_stage(s, readers, "cache_read"));
            return new_stage_tensor(s, s->cache_read(st, scope, rs), tensor);
        },
        py::arg("tensor"), py::arg("scope"), py::arg("readers"),
        "Copies the stage's output into a new stage in `scope` (\"global\", \"shared\", "
        "\"local\") that `readers` (stages that read it) read instead; returns the copy's tensor.");
    cls.def(
        "cache_write",
        [](const SchedulePtr& s, O tensor, const std::string& scope) {
            int st = resolve_stage(s, tensor, "cache_write");
            return new_stage_tensor(s, s->cache_write(st, scope), tensor);
        },
        py::arg("tensor"), py::arg("scope"),
        "Computes the stage into a new stage in `scope` that the stage then copies out (before "
        "the stage's loop transformations); returns the cache's tensor.");
    cls.def(
        "storage_split",
        [](const SchedulePtr& s, O stage, O dim, int64_t factor) {
            int st = resolve_stage(s, stage, "storage_split");
            s->storage_split(st, resolve_dim(s, st, dim, "storage_split"), factor);
        },
        py::arg("stage"), py::arg("dim"), py::arg("factor"),
        "Blocks storage dimension `dim` of the stage's buffer into (outer, inner by `factor`).");
    cls.def(
        "storage_reorder",
        [](const SchedulePtr& s, O stage, py::list order) {
            int st = resolve_stage(s, stage, "storage_reorder");
            std::vector<int> dims;
            for (py::handle d : order) dims.push_back(resolve_dim(s, st, d, "storage_reorder"));
            s->storage_reorder(st, dims);
        },
        py::arg("stage"), py::arg("order"),
        "Permutes the storage dimensions (every position once, outermost first).");
    cls.def(
        "storage_align",
        [](const SchedulePtr& s, O stage, O dim, int64_t factor, int64_t offset) {
            int st = resolve_stage(s, stage, "storage_align");
            s->storage_align(st, resolve_dim(s, st, dim, "storage_align"), factor, offset);
        },
        py::arg("stage"), py::arg("dim"), py::arg("factor"), py::arg("offset"),
        "Pads the stride of storage dimension `dim` to stride % factor == offset.");
    cls.def(
        "follow_split",
        [](const SchedulePtr& s, O stage, O iter, int src_step) {
            int st = resolve_stage(s, stage, "follow_split");
            auto r = s->follow_split(st, resolve_iter(s, st, iter, "follow_split"), src_step);
            return py::make_tuple(leaf_ref(s, st, r.first), leaf_ref(s, st, r.second));
        },
        py::arg("stage"), py::arg("iter"), py::arg("src_step"),
        "Splits a loop as split step `src_step` (an index into the steps) does; returns (outer, "
        "inner).");
    cls.def(
        "rfactor",
        [](const SchedulePtr& s, O tensor, O axis, int factor_axis) {
            int st = resolve_stage(s, tensor, "rfactor");
            int it = resolve_iter(s, st, axis, "rfactor");
            return new_stage_tensor(s, s->rfactor(st, it, factor_axis), tensor);
        },
        py::arg("tensor"), py::arg("axis"), py::arg("factor_axis") = 0,
        "Factors the reduction over `axis` (a part of a split reduction axis) into a new stage "
        "whose output has it as dimension `factor_axis`; returns that stage's tensor.");
}

// The TVM-style view: s[C].<primitive>(...) forwards to the schedule's primitive with its stage.
void def_stage(py::module_& m) {
    using O = py::object;
    auto sched = [](const StageRef& r) { return py::cast(r.s); };
    py::class_<StageRef>(m, "Stage", "One stage of a schedule (s[tensor]).")
        .def_property_readonly(
            "op", [](const StageRef& r) { return r.stage().op; },
            "The operation the stage computes now (rebuilt by cache_read, cache_write, rfactor).")
        .def_property_readonly("name", [](const StageRef& r) { return r.stage().name(); })
        .def_property_readonly("index", &StageRef::index)
        .def_property_readonly(
            "leaf_iter_vars",
            [](const StageRef& r) {
                std::vector<IterRef> out;
                for (int id : r.stage().leaf) out.push_back(IterRef{r, id, r.stage().op});
                return out;
            },
            "The current loops, outermost first.")
        .def_property_readonly(
            "all_iter_vars",
            [](const StageRef& r) {
                std::vector<IterRef> out;
                for (size_t id = 0; id < r.stage().iters.size(); ++id)
                    out.push_back(IterRef{r, static_cast<int>(id), r.stage().op});
                return out;
            })
        .def_property_readonly(
            "attach",
            [](const StageRef& r) {
                AttachKind k = r.stage().attach;
                return k == AttachKind::Root ? "root" : k == AttachKind::Inlined ? "inline" : "at";
            })
        .def("loop_nest", [](const StageRef& r) { return r.s->loop_nest_string(r.index()); })
        .def(
            "split",
            [sched](const StageRef& r, O parent, O factor, O nparts, std::string tail) {
                return sched(r).attr("split")(r, parent, factor, nparts, tail);
            },
            py::arg("parent"), py::arg("factor") = py::none(), py::arg("nparts") = py::none(),
            py::arg("tail") = "guard")
        .def("fuse", [sched](const StageRef& r,
                             py::args iters) { return sched(r).attr("fuse")(r, py::list(iters)); })
        .def("reorder", [sched](const StageRef& r,
                                py::args iters) { sched(r).attr("reorder")(r, py::list(iters)); })
        .def(
            "tile",
            [sched](const StageRef& r, O x, O y, O fx, O fy) {
                return sched(r).attr("tile")(r, x, y, fx, fy);
            },
            py::arg("x_parent"), py::arg("y_parent"), py::arg("x_factor"), py::arg("y_factor"))
        .def("vectorize", [sched](const StageRef& r, O v) { sched(r).attr("vectorize")(r, v); })
        .def("unroll", [sched](const StageRef& r, O v) { sched(r).attr("unroll")(r, v); })
        .def("parallel", [sched](const StageRef& r, O v) { sched(r).attr("parallel")(r, v); })
        .def("annotate",
             [sched](const StageRef& r, O v, O a) { sched(r).attr("annotate")(r, v, a); })
        .def(
            "bind", [sched](const StageRef& r, O v, O t) { sched(r).attr("bind")(r, v, t); },
            py::arg("iter"), py::arg("thread"))
        .def(
            "set_scope",
            [sched](const StageRef& r, O scope) { sched(r).attr("set_scope")(r, scope); },
            py::arg("scope"))
        .def(
            "pragma",
            [sched](const StageRef& r, O key, O value) { sched(r).attr("pragma")(r, key, value); },
            py::arg("key"), py::arg("value"))
        .def(
            "compute_at",
            [sched](const StageRef& r, O parent, O scope) {
                sched(r).attr("compute_at")(r, parent, scope);
            },
            py::arg("parent"), py::arg("scope"),
            "Computes this stage inside `parent`'s loop `scope`.")
        .def(
            "storage_split",
            [sched](const StageRef& r, O dim, O factor) {
                sched(r).attr("storage_split")(r, dim, factor);
            },
            py::arg("dim"), py::arg("factor"))
        .def("storage_reorder",
             [sched](const StageRef& r, py::args dims) {
                 sched(r).attr("storage_reorder")(r, py::list(dims));
             })
        .def(
            "storage_align",
            [sched](const StageRef& r, O axis, O factor, O offset) {
                sched(r).attr("storage_align")(r, axis, factor, offset);
            },
            py::arg("axis"), py::arg("factor"), py::arg("offset"),
            "Pads the stride of `axis` (an axis or a storage dimension position) to "
            "stride % factor == offset.")
        .def(
            "follow_split",
            [sched](const StageRef& r, O parent, O src_step) {
                return sched(r).attr("follow_split")(r, parent, src_step);
            },
            py::arg("parent"), py::arg("src_step"))
        .def("compute_inline", [sched](const StageRef& r) { sched(r).attr("compute_inline")(r); })
        .def("compute_root", [sched](const StageRef& r) { sched(r).attr("compute_root")(r); })
        .def("__eq__",
             [](const StageRef& a, O b) {
                 return py::isinstance<StageRef>(b) && a.s == b.cast<StageRef>().s &&
                        a.op.same_as(b.cast<StageRef>().op);
             })
        .def("__hash__", [](const StageRef& r) { return std::hash<const void*>()(r.op.get()); })
        .def("__repr__", [](const StageRef& r) { return "Stage(" + r.op->name + ")"; });

    py::class_<IterRef>(m, "Iterator", "A loop of a stage (what split, fuse and tile return).")
        .def_property_readonly("name", [](const IterRef& r) { return r.iter().name; })
        .def_property_readonly("extent",
                               [](const IterRef& r) -> py::object {
                                   if (auto v = r.iter().const_extent()) return py::int_(*v);
                                   return py::cast(r.iter().extent);
                               })
        .def_property_readonly("kind",
                               [](const IterRef& r) {
                                   return r.iter().kind == IterKind::Reduction ? "reduction"
                                                                               : "spatial";
                               })
        .def_property_readonly(
            "annotation", [](const IterRef& r) { return annotation_name(r.iter().annotation); })
        .def_property_readonly("stage", [](const IterRef& r) { return r.stage; })
        .def_property_readonly("id", [](const IterRef& r) { return r.id; })
        .def("__repr__", [](const IterRef& r) {
            return "Iterator(" + r.stage.op->name + "." + r.iter().name + ")";
        });
}

std::vector<Tensor> to_tensors(py::handle outputs) {
    if (py::isinstance<Tensor>(outputs)) return {outputs.cast<Tensor>()};
    return outputs.cast<std::vector<Tensor>>();
}

}  // namespace

void init_schedule(py::module_& m) {
    def_stage(m);
    py::class_<Schedule, SchedulePtr> cls(m, "Schedule",
                                          "How to compute a DAG: its stages and recorded steps.");
    def_primitives(cls);
    def_cache_primitives(cls);
    cls.def("__getitem__",
            [](const SchedulePtr& s, py::object key) {
                return stage_ref(s, resolve_stage(s, key, "schedule[]"));
            })
        .def_property_readonly("stages",
                               [](const SchedulePtr& s) {
                                   std::vector<StageRef> out;
                                   for (const Stage& st : s->stages())
                                       out.push_back(StageRef{s, st.dag_op});
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
                return s->loop_nest_string(resolve_stage(s, stage, "loop_nest"));
            },
            py::arg("stage"))
        .def("to_python", &Schedule::to_python, "The steps as a runnable Python script.")
        .def("to_json", &Schedule::to_json, "The steps as JSON (what a tuning record stores).")
        .def(
            "copy", [](const Schedule& s) { return std::make_shared<Schedule>(s); },
            "An independent copy (same steps).");
    m.def(
        "create_schedule",
        [](py::object outputs, int max_vector_lanes, int64_t max_unroll) {
            ScheduleLimits limits;
            limits.max_vector_lanes = max_vector_lanes;
            limits.max_unroll = max_unroll;
            return std::make_shared<Schedule>(to_tensors(outputs), limits);
        },
        py::arg("outputs"), py::kw_only(), py::arg("max_vector_lanes") = 64,
        py::arg("max_unroll") = 512, "A schedule of the DAG of `outputs` (a tensor or a list).");
    m.def(
        "schedule_from_json",
        [](py::object outputs, const std::string& json) {
            return std::make_shared<Schedule>(schedule_from_json(to_tensors(outputs), json));
        },
        py::arg("outputs"), py::arg("json"),
        "Replays Schedule.to_json() on a schedule of `outputs` (ScheduleError for another DAG).");
    m.def(
        "dag_hash", [](py::object outputs) { return dag_hash(to_tensors(outputs)); },
        py::arg("outputs"));
}

}  // namespace tessel::python
