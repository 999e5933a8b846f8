// The lowering pipeline: every pass, in order. TESSEL_DEBUG=1 prints pass names, =2 the IR after
// each pass; TESSEL_TIME_PASSES=1 prints pass timings (docs/design.md, "How the code should
// read"); LowerOptions::stop_after ends the pipeline after a named pass.
#include "tessel/lower/Lower.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "../schedule/ScheduleInternal.h"
#include "tessel/Error.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/InjectBoundsChecks.h"
#include "tessel/lower/InjectDoubleBuffer.h"
#include "tessel/lower/InjectTmaStores.h"
#include "tessel/lower/InjectVirtualThreads.h"
#include "tessel/lower/InjectWgmmaSync.h"
#include "tessel/lower/InsertBarriers.h"
#include "tessel/lower/LowerAsyncCopies.h"
#include "tessel/lower/PartitionLoops.h"
#include "tessel/lower/RemoveNoOp.h"
#include "tessel/lower/ScheduleOps.h"
#include "tessel/lower/SplitHostDevice.h"
#include "tessel/lower/StorageFlatten.h"
#include "tessel/lower/UnrollLoops.h"
#include "tessel/lower/VectorizeLoops.h"
#include "tessel/lower/VerifyLowered.h"
#include "tessel/lower/VerifySchedule.h"
#include "tessel/lower/VerifyThreadMapping.h"

namespace tessel {

LowerOptions LowerOptions::from_env() {
    LowerOptions o;
    if (const char* v = std::getenv("TESSEL_BOUNDS_CHECK")) o.bounds_check = std::atoi(v) != 0;
    if (const char* v = std::getenv("TESSEL_DEBUG")) o.debug = std::atoi(v);
    if (const char* v = std::getenv("TESSEL_TIME_PASSES")) o.time_passes = std::atoi(v) != 0;
    return o;
}

std::string to_string(const LoweredFunc& f) {
    std::ostringstream os;
    IRPrinter p(os);
    os << "def " << f.name << "(";
    for (size_t i = 0; i < f.args.size(); ++i) {
        if (i) os << ", ";
        p.print(f.args[i]);
    }
    os << "):\n";
    p.print(f.body, 1);
    return os.str();
}

namespace {

// The passes in pipeline order; a GPU target adds split_host_device before verify_lowered.
std::vector<std::string> pass_names(bool gpu) {
    std::vector<std::string> names = {
        "verify_schedule",        "schedule_ops",       "simplify",
        "inject_virtual_threads", "insert_barriers",    "inject_tma_stores",
        "inject_double_buffer",   "partition_loops",    "storage_flatten",
        "vectorize_loops",        "lower_async_copies", "unroll_loops",
        "inject_wgmma_sync",      "remove_no_op",       "inject_bounds_checks"};
    if (gpu) names.push_back("split_host_device");
    names.push_back("verify_lowered");
    return names;
}

void check_stop_after(const LowerOptions& o, const std::vector<std::string>& names) {
    if (o.stop_after.empty() || std::find(names.begin(), names.end(), o.stop_after) != names.end())
        return;
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    TESSEL_THROW(ScheduleError) << "lower: unknown pass '" << o.stop_after
                                << "' in stop_after (passes: " << list << ")";
}

// Runs one pass with the logging docs/design.md asks for; after the stop_after pass, runs nothing.
class PassRunner {
public:
    PassRunner(const LowerOptions& o, std::vector<std::string> names)
        : o_(o), names_(std::move(names)) {
        check_stop_after(o, names_);
    }
    template <typename F>
    void run(const char* name, LoweredFunc* f, F pass) {
        TESSEL_CHECK(std::find(names_.begin(), names_.end(), name) != names_.end())
            << "pass " << name << " is missing from pass_names()";
        if (stopped_) return;
        auto t0 = std::chrono::steady_clock::now();
        Stmt before = f->body;
        pass(f);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
        if (o_.debug >= 1) std::fprintf(stderr, "[tessel] pass %s\n", name);
        if (o_.debug >= 2) {
            if (before.same_as(f->body))
                std::fprintf(stderr, "(unchanged)\n");
            else
                std::fprintf(stderr, "%s\n", to_string(*f).c_str());
        }
        if (o_.time_passes) std::fprintf(stderr, "[tessel] %-24s %8.3f ms\n", name, ms);
        stopped_ = o_.stop_after == name;
    }

private:
    const LowerOptions& o_;
    std::vector<std::string> names_;
    bool stopped_ = false;
};

// The pipeline; `target` is null for target-independent lowering.
LoweredFunc lower_for(const Schedule& s, const std::vector<Tensor>& args, const Target* target,
                      const std::string& name, const LowerOptions& options,
                      SchedulePart part = SchedulePart::Kernel) {
    bool gpu = target && target->is_gpu();
    PassRunner pass(options, pass_names(gpu));
    LoweredFunc f;
    int64_t max_unroll = s.limits().max_unroll;
    std::vector<StageBounds> bounds;  // what verify_schedule inferred, if it did
    pass.run("verify_schedule", &f, [&](LoweredFunc*) {
        if (target)
            verify_schedule(s, *target, &bounds);
        else {  // no target: the target-independent part
            std::string error = internal::attachment_error(s);
            if (!error.empty()) TESSEL_THROW(ScheduleError) << "lower: " << error;
            verify_thread_mapping(s);
            verify_annotated_extents(s, &bounds);
        }
    });
    pass.run("schedule_ops", &f, [&](LoweredFunc* g) {
        *g = schedule_ops(s, args, name, std::move(bounds), part, options.skip_padding_taps);
    });
    pass.run("simplify", &f, [](LoweredFunc* g) { g->body = simplify(g->body); });
    pass.run("inject_virtual_threads", &f,
             [&](LoweredFunc* g) { g->body = inject_virtual_threads(g->body, max_unroll); });
    pass.run("insert_barriers", &f, [](LoweredFunc* g) { g->body = insert_barriers(g->body); });
    pass.run("inject_tma_stores", &f, [](LoweredFunc* g) { g->body = inject_tma_stores(g->body); });
    pass.run("inject_double_buffer", &f,
             [](LoweredFunc* g) { g->body = inject_double_buffer(g->body); });
    pass.run("partition_loops", &f, [](LoweredFunc* g) { g->body = partition_loops(g->body); });
    pass.run("storage_flatten", &f, [](LoweredFunc* g) { *g = storage_flatten(*g); });
    pass.run("simplify", &f, [](LoweredFunc* g) { g->body = simplify(g->body); });
    pass.run("vectorize_loops", &f, [](LoweredFunc* g) { g->body = vectorize_loops(g->body); });
    pass.run("lower_async_copies", &f,
             [](LoweredFunc* g) { g->body = lower_async_copies(g->body); });
    pass.run("unroll_loops", &f, [&](LoweredFunc* g) {
        g->body = unroll_loops(g->body, static_cast<int>(max_unroll));
    });
    pass.run("inject_wgmma_sync", &f, [](LoweredFunc* g) { g->body = inject_wgmma_sync(g->body); });
    SimplifyOptions last;  // nothing substitutes into the indices after this one
    last.swizzle_cycles_out = true;
    pass.run("simplify", &f, [&](LoweredFunc* g) { g->body = simplify(g->body, last); });
    pass.run("remove_no_op", &f, [](LoweredFunc* g) { g->body = remove_no_op(g->body); });
    if (options.bounds_check)
        pass.run("inject_bounds_checks", &f, [](LoweredFunc* g) { *g = inject_bounds_checks(*g); });
    if (gpu)
        pass.run("split_host_device", &f,
                 [&](LoweredFunc* g) { *g = split_host_device(*g, *target); });
    pass.run("verify_lowered", &f, [](LoweredFunc* g) { verify_lowered(*g); });
    return f;
}

}  // namespace

std::vector<std::string> lower_pass_names(const Target& target) {
    return pass_names(target.is_gpu());
}

LoweredFunc lower(const Schedule& s, const std::vector<Tensor>& args, const Target& target,
                  const std::string& name, const LowerOptions& options) {
    return lower_for(s, args, &target, name, options);
}

LoweredFunc lower(const Schedule& s, const std::vector<Tensor>& args, const std::string& name,
                  const LowerOptions& options) {
    return lower_for(s, args, nullptr, name, options);
}

bool has_pre_transform(const Schedule& s) {
    for (const Stage& st : s.stages())
        if (st.pre_transform) return true;
    return false;
}

std::string pre_transform_name(const std::string& kernel) {
    return kernel + "_pre_transform";
}

LoweredFunc lower_pre_transform(const Schedule& s, const std::vector<Tensor>& args,
                                const Target& target, const std::string& name,
                                const LowerOptions& options) {
    return lower_for(s, args, &target, name, options, SchedulePart::PreTransform);
}

LoweredFunc lower_pre_transform(const Schedule& s, const std::vector<Tensor>& args,
                                const std::string& name, const LowerOptions& options) {
    return lower_for(s, args, nullptr, name, options, SchedulePart::PreTransform);
}

}  // namespace tessel
