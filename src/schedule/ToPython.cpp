// Schedule::to_python: the steps as a runnable Python scheduling script.
#include <sstream>

#include "ScheduleInternal.h"

namespace tessel {

namespace {

std::string list(const std::vector<int>& v) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
    return os.str();
}

std::string leaf_name(const Schedule& s, int stage, int pos) {
    const Stage& st = s.stages()[stage];
    if (pos < 0 || pos >= static_cast<int>(st.leaf.size())) return "?";
    return st.iters[st.leaf[pos]].name;
}

std::string stage_name(const Schedule& s, int stage) {
    return stage >= 0 && stage < static_cast<int>(s.stages().size()) ? s.stages()[stage].name()
                                                                     : "?";
}

// Prints a step's fields as the arguments of its Python method, generic over the step's field
// description (Step.h): positional until a field that is keyword-only (a split's factor= or
// nparts=) or left at its default; the comment names the stages and loops, as they are in the
// state before the step.
struct PythonPrinter {
    const Schedule& s;
    std::vector<std::string> args;
    std::string comment;
    bool keyword = false;  // once a keyword argument is printed, the rest are keywords too

    void arg(const char* name, const std::string& value) {
        args.push_back(keyword ? std::string(name) + "=" + value : value);
    }
    void stage(const char* name, int v) {
        arg(name, std::to_string(v));
        comment += comment.empty() ? stage_name(s, v) : " at " + stage_name(s, v);
    }
    void stages(const char* name, const std::vector<int>& v) { arg(name, list(v)); }
    void leaf(const char* name, int v, int stage) {
        arg(name, std::to_string(v));
        comment += (comment == stage_name(s, stage) ? ": " : "'s ") + leaf_name(s, stage, v);
    }
    void leaves(const char* name, const std::vector<int>& v, int) { arg(name, list(v)); }
    void leaf_order(const char* name, const std::vector<int>& v, int) { arg(name, list(v)); }
    void dim(const char* name, int v, int) { arg(name, std::to_string(v)); }
    void dim_order(const char* name, const std::vector<int>& v, int) { arg(name, list(v)); }
    template <typename T>
    void number(const char* name, T v) {
        arg(name, std::to_string(v));
    }
    template <typename T>
    void number(const char* name, T v, T) {
        arg(name, std::to_string(v));
    }
    void text(const char* name, const std::string& v) { arg(name, quoted(v)); }
    template <typename E>
    void choice(const char* name, E v) {
        arg(name, quoted(choice_name(v)));
    }
    template <typename E>
    void choice(const char* name, E v, E dflt) {
        if (v == dflt) {
            keyword = true;
            return;
        }
        arg(name, quoted(choice_name(v)));
    }
    void step_index(const char* name, int v) {
        arg(name, std::to_string(v));
        comment += " as step " + std::to_string(v);
    }
    void step_indices(const char* name, const std::vector<int>& v) {
        arg(name, list(v));
        comment += " as the product of steps " + list(v);
    }
    void numbers(const char* name, const std::vector<int>& v) { arg(name, list(v)); }
    void split_factor(const char* factor, const char* nparts, int64_t f, bool by_nparts) {
        keyword = true;
        arg(by_nparts ? nparts : factor, std::to_string(f));
    }
    static std::string quoted(const std::string& v) { return "\"" + v + "\""; }
};

// The Python method for a step: its kind, except that annotations print as the primitive a user
// writes (s.vectorize(...), s.bind(..., "threadIdx.x")), which the Python API also offers.
std::string python_method(const Step& step, std::vector<std::string>& args) {
    const auto* a = std::get_if<AnnotateStep>(&step);
    if (!a) return step_kind_name(step);
    if (a->annotation >= IterAnnotation::VThread) return "bind";
    if (a->annotation == IterAnnotation::None) return "annotate";
    args.pop_back();  // vectorize, unroll, parallel: the method says it
    return annotation_name(a->annotation);
}

// One line of Python for `step`, with a comment naming what it touches in state `s` (the state
// before the step).
std::string python_line(const Schedule& s, const Step& step) {
    PythonPrinter p{s, {}, {}};
    std::visit([&p](const auto& st) { std::decay_t<decltype(st)>::fields(st, p); }, step);
    std::string method = python_method(step, p.args);
    std::ostringstream os;
    os << "s." << method << "(";
    for (size_t i = 0; i < p.args.size(); ++i) os << (i ? ", " : "") << p.args[i];
    os << ")  # " << p.comment;
    return os.str();
}

}  // namespace

std::string Schedule::to_python() const {
    std::ostringstream os;
    // The stages before the first step: cache_read, cache_write and rfactor insert stages later,
    // and each line's comment names the stages as they are when it runs.
    Schedule replayed(outputs_, limits_);
    const std::vector<Stage>& initial = replayed.stages();
    os << "# tessel schedule for workload " << std::hex << workload_key_ << std::dec << "\n"
       << "# stages:";
    for (size_t i = 0; i < initial.size(); ++i) os << " " << i << "=" << initial[i].name();
    os << "\n";
    // Limits other than create_schedule's defaults (a GPU schedule may auto-unroll 1024 steps):
    // the schedule the script is applied to needs them too.
    ScheduleLimits defaults;
    if (limits_.max_unroll != defaults.max_unroll ||
        limits_.max_vector_lanes != defaults.max_vector_lanes)
        os << "# apply to ts.create_schedule(outputs, max_unroll=" << limits_.max_unroll
           << ", max_vector_lanes=" << limits_.max_vector_lanes << ")\n";
    os << "import tessel as ts\n\n"
       << "def apply_schedule(s):\n";
    if (steps_.empty()) os << "    pass\n";
    for (const Step& step : steps_) {
        os << "    " << python_line(replayed, step) << "\n";
        replayed.apply(step);
    }
    return os.str();
}

}  // namespace tessel
