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

// One line of Python for `step`, with a comment naming what it touches in state `s` (the state
// before the step).
std::string python_line(const Schedule& s, const Step& step) {
    std::ostringstream os;
    std::visit(
        [&](const auto& st) {
            using T = std::decay_t<decltype(st)>;
            std::string stage = st.stage >= 0 && st.stage < static_cast<int>(s.stages().size())
                                    ? s.stages()[st.stage].name()
                                    : "?";
            if constexpr (std::is_same_v<T, SplitStep>) {
                os << "s.split(" << st.stage << ", " << st.iter << ", "
                   << (st.by_nparts ? "nparts=" : "factor=") << st.factor;
                if (st.tail != TailStrategy::Guard)
                    os << ", tail=\"" << tail_strategy_name(st.tail) << "\"";
                os << ")  # " << stage << ": split " << leaf_name(s, st.stage, st.iter);
            } else if constexpr (std::is_same_v<T, FuseStep>) {
                os << "s.fuse(" << st.stage << ", " << list(st.iters) << ")  # " << stage;
            } else if constexpr (std::is_same_v<T, ReorderStep>) {
                os << "s.reorder(" << st.stage << ", " << list(st.order) << ")  # " << stage;
            } else if constexpr (std::is_same_v<T, AnnotateStep>) {
                std::string what = st.annotation == IterAnnotation::Vectorize  ? "vectorize"
                                   : st.annotation == IterAnnotation::Unroll   ? "unroll"
                                   : st.annotation == IterAnnotation::Parallel ? "parallel"
                                                                               : "";
                if (!what.empty())
                    os << "s." << what << "(" << st.stage << ", " << st.iter << ")";
                else
                    os << "s.bind(" << st.stage << ", " << st.iter << ", \""
                       << annotation_name(st.annotation) << "\")";
                os << "  # " << stage << ": " << leaf_name(s, st.stage, st.iter);
            } else if constexpr (std::is_same_v<T, PragmaStep>) {
                os << "s.pragma(" << st.stage << ", \"" << st.key << "\", " << st.value << ")  # "
                   << stage;
            } else if constexpr (std::is_same_v<T, ComputeAtStep>) {
                os << "s.compute_at(" << st.stage << ", " << st.target << ", " << st.target_iter
                   << ")  # " << stage << " at " << s.stages()[st.target].name() << "'s "
                   << leaf_name(s, st.target, st.target_iter);
            } else if constexpr (std::is_same_v<T, ComputeInlineStep>) {
                os << "s.compute_inline(" << st.stage << ")  # " << stage;
            } else if constexpr (std::is_same_v<T, SetScopeStep>) {
                os << "s.set_scope(" << st.stage << ", \"" << scope_name(st.scope) << "\")  # "
                   << stage;
            } else if constexpr (std::is_same_v<T, CacheReadStep>) {
                os << "s.cache_read(" << st.stage << ", \"" << st.scope << "\", "
                   << list(st.readers) << ")  # " << stage << "." << st.scope;
            } else if constexpr (std::is_same_v<T, CacheWriteStep>) {
                os << "s.cache_write(" << st.stage << ", \"" << st.scope << "\")  # " << stage
                   << "." << st.scope;
            } else if constexpr (std::is_same_v<T, StorageSplitStep>) {
                os << "s.storage_split(" << st.stage << ", " << st.dim << ", " << st.factor
                   << ")  # " << stage;
            } else if constexpr (std::is_same_v<T, StorageReorderStep>) {
                os << "s.storage_reorder(" << st.stage << ", " << list(st.order) << ")  # "
                   << stage;
            } else if constexpr (std::is_same_v<T, StorageAlignStep>) {
                os << "s.storage_align(" << st.stage << ", " << st.dim << ", " << st.factor << ", "
                   << st.offset << ")  # " << stage;
            } else if constexpr (std::is_same_v<T, FollowSplitStep>) {
                os << "s.follow_split(" << st.stage << ", " << st.iter << ", " << st.src_step
                   << ")  # " << stage << ": split " << leaf_name(s, st.stage, st.iter)
                   << " as step " << st.src_step;
            } else if constexpr (std::is_same_v<T, RfactorStep>) {
                os << "s.rfactor(" << st.stage << ", " << st.iter << ", " << st.factor_axis
                   << ")  # " << stage << ": " << leaf_name(s, st.stage, st.iter);
            } else {
                os << "s.compute_root(" << st.stage << ")  # " << stage;
            }
        },
        step);
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
    os << "\n"
       << "import tessel as ts\n\n"
       << "def apply_schedule(s):\n";
    if (steps_.empty()) os << "    pass\n";
    for (const Step& step : steps_) {
        os << "    " << python_line(replayed, step) << "\n";
        replayed.apply(step);
    }
    return os.str();
}

}  // namespace tessel
