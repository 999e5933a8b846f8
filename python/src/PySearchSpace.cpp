// The search space in Python (auto_schedule/space/Sketch.h, SearchSpace.h): ts.auto_schedule's
// generate_sketches, SearchSpace (sample, mutate, crossover, check), State, Sketch, SketchRule
// and SketchContext, and search_suite.
//
// Python holds schedules through shared pointers (PySchedule.cpp), while Sketch and SearchState
// hold theirs by value. The Python views below keep a shared schedule that Python can change in
// place and convert to the C++ structs when they go back: a sketch replays the steps Python
// added on its last C++ form (Sketch::apply keeps its stage data in step), a state copies its
// schedule.
//
// User sketch rules are Python callables that C++ calls during generate_sketches, always with
// the GIL held (sketch generation runs on the calling thread). The callables are kept in
// PyCallable, which takes the GIL to drop them, so a SearchSpace may die on any thread.
#include <memory>
#include <random>

#include "PyFeatures.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/auto_schedule/space/WorkloadSuite.h"

namespace tessel::python {

namespace {

using SchedulePtr = std::shared_ptr<Schedule>;

// --- Sketch --------------------------------------------------------------------------------

// Python's Sketch: `schedule` is shared with Python; `base` is the sketch as C++ last saw it.
struct PySketch {
    SchedulePtr schedule;
    Sketch base;

    explicit PySketch(Sketch s)
        : schedule(std::make_shared<Schedule>(s.schedule)), base(std::move(s)) {}

    // Takes `s` as the sketch, keeping the schedule object Python may hold.
    void reset(Sketch s) {
        *schedule = s.schedule;
        base = std::move(s);
    }

    // The sketch with the steps Python applied since `base` replayed onto it.
    Sketch sync() const {
        const std::vector<Step>& now = schedule->steps();
        size_t done = base.schedule.steps().size();
        if (now.size() < done)
            TESSEL_THROW(DSLError) << "Sketch: its schedule has fewer steps than the sketch "
                                      "(a schedule of another sketch was put in its place)";
        Sketch out = base;
        for (size_t i = done; i < now.size(); ++i) out.apply(now[i]);
        return out;
    }
};

using PySketchPtr = std::shared_ptr<PySketch>;

const char* kind_name(SketchStageKind k) {
    switch (k) {
        case SketchStageKind::Plain: return "plain";
        case SketchStageKind::Inlined: return "inlined";
        case SketchStageKind::Tiled: return "tiled";
        case SketchStageKind::Fused: return "fused";
        case SketchStageKind::CrossThreadReduction: return "cross_thread_reduction";
        case SketchStageKind::SharedFetch: return "shared_fetch";
        case SketchStageKind::Placeholder: return "placeholder";
        case SketchStageKind::RowBlock: return "row_block";
        case SketchStageKind::RowReduction: return "row_reduction";
        case SketchStageKind::RowFetch: return "row_fetch";
        case SketchStageKind::TensorCore: return "tensor_core";
        case SketchStageKind::TensorCoreFetch: return "tensor_core_fetch";
        case SketchStageKind::WgmmaFetch: return "wgmma_fetch";
        case SketchStageKind::ReadCache: return "read_cache";
        case SketchStageKind::CpuDot: return "cpu_dot";
        case SketchStageKind::CpuDotOutput: return "cpu_dot_output";
        case SketchStageKind::CpuDotPack: return "cpu_dot_pack";
        case SketchStageKind::CpuDotOperand: return "cpu_dot_operand";
        case SketchStageKind::Blocked: return "blocked";
        case SketchStageKind::BlockedOutput: return "blocked_output";
    }
    return "?";
}

py::list tile_list(const Sketch& s) {
    py::list out;
    for (const TileGroup& g : s.tiles) {
        py::dict d;
        d["stage"] = g.stage;
        d["extent"] = g.extent;
        d["steps"] = g.steps;
        d["max_innermost"] = g.max_innermost;
        out.append(d);
    }
    return out;
}

void def_sketch(py::module_& a) {
    py::class_<PySketch, PySketchPtr>(
        a, "Sketch",
        "A skeleton of the search space: a schedule whose open split lengths are 1, with the "
        "tiles annotation fills in and what each stage is (docs/auto_schedule.md). In a sketch "
        "rule, change a copy() with schedule primitives on .schedule (stages inserted by "
        "cache_read, cache_write or rfactor are tracked), .tile() and .add_trace().")
        .def_property_readonly(
            "schedule", [](const PySketch& s) { return s.schedule; },
            "The sketch's schedule (shared: primitives applied to it change the sketch).")
        .def_property_readonly(
            "trace", [](const PySketch& s) { return s.sync().trace; },
            "The rules applied: \"<stage>: <rule>\", in order.")
        .def_property_readonly(
            "tiles", [](const PySketch& s) { return tile_list(s.sync()); },
            "The open split lengths: one dict per tiled loop (stage, extent, "
            "steps, max_innermost).")
        .def_property_readonly(
            "stage_kinds",
            [](const PySketch& s) {
                std::vector<std::string> out;
                for (const SketchStage& st : s.sync().stages) out.emplace_back(kind_name(st.kind));
                return out;
            },
            "Per stage: plain, inlined, tiled, fused, cross_thread_reduction, shared_fetch, "
            "placeholder, row_block, row_reduction, row_fetch, tensor_core, tensor_core_fetch, "
            "wgmma_fetch, read_cache, cpu_dot, cpu_dot_output, cpu_dot_pack, cpu_dot_operand, "
            "blocked or blocked_output.")
        .def(
            "copy", [](const PySketch& s) { return std::make_shared<PySketch>(s.sync()); },
            "An independent copy (what a rule changes and returns).")
        .def(
            "tile",
            [](PySketch& s, int stage, const std::string& structure, int64_t max_innermost) {
                Sketch k = s.sync();
                tile_stage(k, stage, structure, max_innermost);
                s.reset(std::move(k));
            },
            py::arg("stage"), py::arg("structure") = "SSRSRS", py::arg("max_innermost") = 0,
            "Multi-level tiles stage `stage` with `structure` (S spatial, R reduction levels, "
            "outer first), its split lengths left open for annotation.")
        .def(
            "add_trace",
            [](PySketch& s, int stage, const std::string& rule) {
                Sketch k = s.sync();
                k.trace.push_back(k.schedule.stage(stage).name() + ": " + rule);
                s.reset(std::move(k));
            },
            py::arg("stage"), py::arg("rule"), "Records that `rule` was applied at `stage`.")
        .def("to_python", [](const PySketch& s) { return s.schedule->to_python(); })
        .def("__repr__", [](const PySketch& s) {
            std::string t;
            for (const std::string& r : s.sync().trace) t += (t.empty() ? "" : ", ") + r;
            return "<Sketch [" + t + "]>";
        });
}

// --- Sketch rules from Python ---------------------------------------------------------------

// A Python callable kept by C++: dropped with the GIL held, whatever thread drops it.
class PyCallable {
public:
    explicit PyCallable(py::object f)
        : f_(new py::object(std::move(f)), [](py::object* p) {
              py::gil_scoped_acquire gil;
              delete p;
          }) {}
    template <typename... Args>
    py::object operator()(Args&&... args) const {
        py::gil_scoped_acquire gil;
        return (*f_)(std::forward<Args>(args)...);
    }

private:
    std::shared_ptr<py::object> f_;
};

// The context a Python rule sees, valid only during the call (the task and the DAG analysis
// belong to the sketch generation).
struct PyContext {
    const SketchContext* ctx;
    std::shared_ptr<bool> alive;

    const SketchContext& get() const {
        if (!*alive)
            TESSEL_THROW(RuntimeError) << "SketchContext: used after the rule call it was given to";
        return *ctx;
    }
};

RuleCondition to_condition(py::handle h, const std::string& rule) {
    if (py::isinstance<RuleCondition>(h)) return h.cast<RuleCondition>();
    if (py::isinstance<py::str>(h)) {
        std::string s = h.cast<std::string>();
        if (s == "skip") return RuleCondition::Skip;
        if (s == "apply") return RuleCondition::Apply;
        if (s == "apply_and_skip_rest") return RuleCondition::ApplyAndSkipRest;
    }
    if (h.is_none() || (py::isinstance<py::bool_>(h) && !h.cast<bool>()))
        return RuleCondition::Skip;
    if (py::isinstance<py::bool_>(h)) return RuleCondition::Apply;
    TESSEL_THROW(DSLError) << "sketch rule '" << rule << "': the condition returned "
                           << py::str(py::repr(h)).cast<std::string>()
                           << "; expected a RuleCondition, \"skip\", \"apply\", "
                              "\"apply_and_skip_rest\" or a bool";
}

SketchRule to_rule(const std::string& name, py::object condition, py::object apply) {
    if (!PyCallable_Check(condition.ptr()) || !PyCallable_Check(apply.ptr()))
        TESSEL_THROW(DSLError) << "SketchRule '" << name
                               << "': condition and apply must be "
                                  "callables (context, sketch, stage)";
    PyCallable cond(std::move(condition)), app(std::move(apply));
    SketchRule r;
    r.name = name;
    // Each call gets a context object that dies with the call.
    auto call = [](const PyCallable& f, const SketchContext& ctx, const Sketch& sk, int stage) {
        py::gil_scoped_acquire gil;
        auto alive = std::make_shared<bool>(true);
        struct Expire {
            std::shared_ptr<bool> a;
            ~Expire() { *a = false; }
        } expire{alive};
        try {
            return f(PyContext{&ctx, alive}, std::make_shared<PySketch>(sk), stage);
        } catch (py::error_already_set& e) {
            // A primitive the rule applied refused (ts.ScheduleError): the C++ error, which
            // generate_sketches answers by skipping the rule at this stage.
            if (e.matches(py::module_::import("tessel._tessel").attr("ScheduleError")))
                throw ScheduleError(py::str(e.value()).cast<std::string>());
            throw;
        }
    };
    r.condition = [=](const SketchContext& ctx, const Sketch& sk, int stage) {
        py::gil_scoped_acquire gil;
        return to_condition(call(cond, ctx, sk, stage), name);
    };
    r.apply = [=](const SketchContext& ctx, const Sketch& sk, int stage) {
        py::gil_scoped_acquire gil;
        py::object made = call(app, ctx, sk, stage);
        std::vector<std::pair<Sketch, int>> out;
        auto bad = [&] {
            TESSEL_THROW(DSLError)
                << "sketch rule '" << name << "': apply must return a list of (Sketch, next "
                << "stage) pairs, got "
                << py::str(py::repr(made)).cast<std::string>().substr(0, 120);
        };
        if (!py::isinstance<py::sequence>(made) || py::isinstance<py::str>(made)) bad();
        for (py::handle item : made) {
            if (!py::isinstance<py::tuple>(item) || py::len(item) != 2) bad();
            py::tuple t = item.cast<py::tuple>();
            if (!py::isinstance<PySketch>(t[0]) || !py::isinstance<py::int_>(t[1])) bad();
            out.emplace_back(t[0].cast<const PySketch&>().sync(), t[1].cast<int>());
        }
        return out;
    };
    return r;
}

void def_rules(py::module_& a) {
    py::enum_<RuleCondition>(a, "RuleCondition", "What a sketch rule's condition says for a stage.")
        .value("SKIP", RuleCondition::Skip)
        .value("APPLY", RuleCondition::Apply)
        .value("APPLY_AND_SKIP_REST", RuleCondition::ApplyAndSkipRest);

    py::class_<SketchRule>(a, "SketchRule",
                           "A user sketch rule: condition(ctx, sketch, stage) -> RuleCondition "
                           "(or \"skip\"/\"apply\"/\"apply_and_skip_rest\"/bool) and "
                           "apply(ctx, sketch, stage) -> [(Sketch, next_stage), ...]. Tried "
                           "before the built-in rules (docs/auto_schedule.md).")
        .def(py::init(&to_rule), py::arg("name"), py::arg("condition"), py::arg("apply"))
        .def_readonly("name", &SketchRule::name)
        .def("__repr__", [](const SketchRule& r) { return "<SketchRule " + r.name + ">"; });

    py::class_<PyContext>(a, "SketchContext",
                          "What a sketch rule sees: the task and the DAG's analysis (operations "
                          "by DAG index). Valid only during the rule call.")
        .def_property_readonly("task", [](const PyContext& c) { return c.get().task; })
        .def_property_readonly("gpu", [](const PyContext& c) { return c.get().gpu(); })
        .def_property_readonly("num_ops", [](const PyContext& c) { return c.get().dag.num_ops(); })
        .def(
            "op_name", [](const PyContext& c, int op) { return c.get().dag.ops().at(op)->name; },
            py::arg("op"))
        .def(
            "dag_index",
            [](const PyContext& c, const PySketch& s, int stage) {
                return c.get().dag_index(*s.schedule, stage);
            },
            py::arg("sketch"), py::arg("stage"),
            "The DAG index of the sketch's stage, or -1 for a stage a rule inserted.")
        .def(
            "inlined",
            [](const PyContext& c, const PySketch& s) { return c.get().inlined(*s.schedule); },
            py::arg("sketch"), "Per DAG operation: whether the sketch computes it inline.")
        .def("is_placeholder",
             [](const PyContext& c, int op) { return c.get().dag.is_placeholder(op); })
        .def("is_output", [](const PyContext& c, int op) { return c.get().dag.is_output(op); })
        .def("has_reduction",
             [](const PyContext& c, int op) { return c.get().dag.has_reduction(op); })
        .def("is_strictly_inlinable",
             [](const PyContext& c, int op) { return c.get().dag.is_strictly_inlinable(op); })
        .def("is_inlinable",
             [](const PyContext& c, int op) { return c.get().dag.is_inlinable(op); })
        .def("needs_multi_level_tiling",
             [](const PyContext& c, int op) { return c.get().dag.needs_multi_level_tiling(op); })
        .def("spatial_extents",
             [](const PyContext& c, int op) { return c.get().dag.spatial_extents(op); })
        .def("reduction_extents",
             [](const PyContext& c, int op) { return c.get().dag.reduction_extents(op); })
        .def("flops", [](const PyContext& c, int op) { return c.get().dag.flops(op); })
        .def(
            "consumers", [](const PyContext& c, int op) { return c.get().dag.consumers(op); },
            py::arg("op"))
        .def(
            "producers", [](const PyContext& c, int op) { return c.get().dag.producers(op); },
            py::arg("op"));
}

// --- States and the search space -------------------------------------------------------------

// Python's State: the schedule shared with Python.
struct PyState {
    SchedulePtr schedule;
    int sketch = -1;
    std::string origin;
    int sketch_steps = 0;
    std::vector<int> step_rules;

    explicit PyState(SearchState s)
        : schedule(std::make_shared<Schedule>(std::move(s.schedule))),
          sketch(s.sketch),
          origin(std::move(s.origin)),
          sketch_steps(s.sketch_steps),
          step_rules(std::move(s.step_rules)) {}
    SearchState to_state() const {
        return SearchState{*schedule, sketch, origin, sketch_steps, step_rules};
    }
};

py::object state_or_none(std::optional<SearchState> s) {
    if (!s) return py::none();
    return py::cast(PyState(std::move(*s)));
}

SearchSpaceOptions space_options(const std::string& cpu_tiling, const std::string& gpu_tiling,
                                 const std::vector<SketchRule>& rules, bool tensor_core_tf32,
                                 bool lower, int attempts, int num_threads) {
    SearchSpaceOptions o;
    o.sketch.cpu_tiling = cpu_tiling;
    o.sketch.gpu_tiling = gpu_tiling;
    o.sketch.tensor_core_tf32 = tensor_core_tf32;
    o.sketch.rules = rules;
    o.lower = lower;
    o.attempts = attempts;
    o.num_threads = num_threads;
    return o;
}

py::dict sample_dict(SampleResult r) {
    py::list states;
    for (SearchState& s : r.states) states.append(PyState(std::move(s)));
    py::dict d;
    d["states"] = states;
    d["rejected"] = r.rejected;
    d["attempts"] = r.attempts;
    d["rejection_rate"] = r.rejection_rate();
    return d;
}

using SpacePtr = std::shared_ptr<SearchSpace>;

void def_space(py::module_& a) {
    py::class_<PyState>(a, "State",
                        "A complete schedule of the search space: its sketch's steps with the "
                        "open lengths filled in, then the annotation steps.")
        .def_property_readonly("schedule", [](const PyState& s) { return s.schedule; })
        .def_readonly("sketch", &PyState::sketch, "The index of its sketch in space.sketches.")
        .def_readonly("origin", &PyState::origin,
                      "\"random\", \"mutate_tile_size\", \"mutate_auto_unroll\", "
                      "\"mutate_row_threads\", \"mutate_pipelining\", "
                      "\"mutate_shared_layout\", \"mutate_fetch_lanes\", "
                      "\"mutate_compute_location\", \"mutate_parallel\" or \"crossover\".")
        .def_readonly("sketch_steps", &PyState::sketch_steps)
        .def("to_python", [](const PyState& s) { return s.schedule->to_python(); })
        .def("to_json", [](const PyState& s) { return s.schedule->to_json(); })
        .def("__repr__", [](const PyState& s) {
            return "<State sketch=" + std::to_string(s.sketch) + " origin=" + s.origin +
                   " steps=" + std::to_string(s.schedule->steps().size()) + ">";
        });

    py::class_<SearchSpace, SpacePtr>(
        a, "SearchSpace",
        "A task's search space: its sketches, random annotation (sample), mutation and "
        "crossover, every candidate checked as the tuner builds it (docs/auto_schedule.md).")
        .def(py::init([](const SearchTask& task, const std::string& cpu_tiling,
                         const std::string& gpu_tiling, const std::vector<SketchRule>& rules,
                         bool tensor_core_tf32, bool lower, int attempts, int num_threads) {
                 return std::make_shared<SearchSpace>(
                     task, space_options(cpu_tiling, gpu_tiling, rules, tensor_core_tf32, lower,
                                         attempts, num_threads));
             }),
             py::arg("task"), py::kw_only(), py::arg("cpu_tiling") = "SSRSRS",
             py::arg("gpu_tiling") = "SSSRRSRS", py::arg("rules") = std::vector<SketchRule>{},
             py::arg("tensor_core_tf32") = false, py::arg("lower") = true, py::arg("attempts") = 4,
             py::arg("num_threads") = 0)
        .def_property_readonly("task", &SearchSpace::task)
        .def_property_readonly("sketches",
                               [](const SearchSpace& s) {
                                   py::list out;
                                   for (const Sketch& k : s.sketches())
                                       out.append(std::make_shared<PySketch>(k));
                                   return out;
                               })
        .def(
            "sample",
            [](const SpacePtr& s, int n, uint64_t seed) {
                if (n < 0)
                    TESSEL_THROW(DSLError) << "SearchSpace.sample: n must be >= 0, got " << n;
                return sample_dict(
                    run_interruptible<SampleResult>([s, n, seed] { return s->sample(n, seed); }));
            },
            py::arg("n"), py::arg("seed") = 0,
            "{'states', 'rejected', 'attempts', 'rejection_rate'}: n random states on all "
            "cores; sample i depends only on (seed, i).")
        .def(
            "mutate",
            [](const SearchSpace& s, const PyState& st, uint64_t seed) {
                std::mt19937_64 rng(seed);
                return state_or_none(s.mutate(st.to_state(), rng));
            },
            py::arg("state"), py::arg("seed") = 0,
            "A mutated state (tile size, auto-unroll, compute location, parallel), or None.")
        .def(
            "mutations",
            [](const SearchSpace& s, const PyState& st) { return s.mutations(st.to_state()); },
            py::arg("state"), "The names of the mutations that apply to `state`.")
        .def(
            "crossover",
            [](const SearchSpace& s, const PyState& x, const PyState& y, uint64_t seed) {
                std::mt19937_64 rng(seed);
                return state_or_none(s.crossover(x.to_state(), y.to_state(), rng));
            },
            py::arg("a"), py::arg("b"), py::arg("seed") = 0,
            "A child of two states of one sketch, or None.")
        .def(
            "check", [](const SearchSpace& s, const SchedulePtr& sch) { return s.check(*sch); },
            py::arg("schedule"), "\"\" when the tuner could build it, else why not.")
        .def(
            "match_sketch",
            [](const SearchSpace& s, const SchedulePtr& sch) { return s.match_sketch(*sch); },
            py::arg("schedule"), "The index of the sketch `schedule` starts with, or -1.")
        .def(
            "state",
            [](const SearchSpace& s, const SchedulePtr& sch) {
                SearchState st{*sch, s.match_sketch(*sch), "record", 0, {}};
                if (st.sketch >= 0)
                    st.sketch_steps = int(s.sketches()[st.sketch].schedule.steps().size());
                return PyState(std::move(st));
            },
            py::arg("schedule"),
            "A state of a schedule read back (a record's): its sketch found by match_sketch.");
}

}  // namespace

void init_search_space(py::module_& m) {
    py::module_ a = auto_schedule_module(m);
    def_sketch(a);
    def_rules(a);
    def_space(a);
    a.def(
        "generate_sketches",
        [](const SearchTask& task, const std::string& cpu_tiling, const std::string& gpu_tiling,
           const std::vector<SketchRule>& rules, bool tensor_core_tf32) {
            SketchOptions o;
            o.cpu_tiling = cpu_tiling;
            o.gpu_tiling = gpu_tiling;
            o.rules = rules;
            o.tensor_core_tf32 = tensor_core_tf32;
            py::list out;
            for (Sketch& k : generate_sketches(task, o))
                out.append(std::make_shared<PySketch>(std::move(k)));
            return out;
        },
        py::arg("task"), py::kw_only(), py::arg("cpu_tiling") = "SSRSRS",
        py::arg("gpu_tiling") = "SSSRRSRS", py::arg("rules") = std::vector<SketchRule>{},
        py::arg("tensor_core_tf32") = false,
        "The task's sketches: user rules first, then the built-in rules of its target "
        "(tensor_core_tf32: float32 GEMMs may take the tensor-core rule, on tf32).");
    a.def(
        "builtin_sketch_rules",
        [](py::object target) {
            std::vector<std::string> names;
            for (const SketchRule& r : builtin_sketch_rules(to_target(target)))
                names.push_back(r.name);
            return names;
        },
        py::arg("target") = "llvm",
        "The names of the built-in rules, in the order they are tried.");
    a.def(
        "sample",
        [](const SearchTask& task, int n, uint64_t seed) {
            auto space = std::make_shared<SearchSpace>(task);
            return sample_dict(run_interruptible<SampleResult>(
                [space, n, seed] { return space->sample(n, seed); }));
        },
        py::arg("task"), py::arg("n"), py::arg("seed") = 0, "SearchSpace(task).sample(n, seed).");
    a.def(
        "search_suite",
        [](const std::string& size, py::object target) {
            Target t = to_target(target);
            std::vector<std::pair<std::string, SearchTask>> out;
            for (const SuiteWorkload& w : search_suite(size))
                out.emplace_back(w.label, SearchTask(w.workload, w.params, t));
            return out;
        },
        py::arg("size") = "small", py::arg("target") = "llvm",
        "[(label, SearchTask)]: the search space's suite of workloads (\"small\" or \"full\").");
}

}  // namespace tessel::python
