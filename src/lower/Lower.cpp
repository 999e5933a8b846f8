// The lowering pipeline: every pass, in order. TESSEL_DEBUG=1 prints pass names, =2 the IR after
// each pass; TESSEL_TIME_PASSES=1 prints pass timings (STYLE.md rule 1).
#include "tessel/lower/Lower.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/InjectBoundsChecks.h"
#include "tessel/lower/InjectVirtualThreads.h"
#include "tessel/lower/InsertBarriers.h"
#include "tessel/lower/PartitionLoops.h"
#include "tessel/lower/RemoveNoOp.h"
#include "tessel/lower/ScheduleOps.h"
#include "tessel/lower/StorageFlatten.h"
#include "tessel/lower/UnrollLoops.h"
#include "tessel/lower/VectorizeLoops.h"
#include "tessel/lower/VerifyLowered.h"
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

// Runs one pass with the logging STYLE.md asks for.
class PassRunner {
public:
    explicit PassRunner(const LowerOptions& o) : o_(o) {}
    template <typename F>
    void run(const char* name, LoweredFunc* f, F pass) {
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
    }

private:
    const LowerOptions& o_;
};

}  // namespace

LoweredFunc lower(const Schedule& s, const std::vector<Tensor>& args, const std::string& name,
                  const LowerOptions& options) {
    PassRunner pass(options);
    LoweredFunc f;
    int64_t max_unroll = s.limits().max_unroll;
    pass.run("verify_thread_mapping", &f, [&](LoweredFunc*) { verify_thread_mapping(s); });
    pass.run("schedule_ops", &f, [&](LoweredFunc* g) { *g = schedule_ops(s, args, name); });
    pass.run("simplify", &f, [](LoweredFunc* g) { g->body = simplify(g->body); });
    pass.run("inject_virtual_threads", &f,
             [&](LoweredFunc* g) { g->body = inject_virtual_threads(g->body, max_unroll); });
    pass.run("insert_barriers", &f, [](LoweredFunc* g) { g->body = insert_barriers(g->body); });
    pass.run("partition_loops", &f, [](LoweredFunc* g) { g->body = partition_loops(g->body); });
    pass.run("storage_flatten", &f, [](LoweredFunc* g) { *g = storage_flatten(*g); });
    pass.run("simplify", &f, [](LoweredFunc* g) { g->body = simplify(g->body); });
    pass.run("vectorize_loops", &f, [](LoweredFunc* g) { g->body = vectorize_loops(g->body); });
    pass.run("unroll_loops", &f, [&](LoweredFunc* g) {
        g->body = unroll_loops(g->body, static_cast<int>(max_unroll));
    });
    pass.run("simplify", &f, [](LoweredFunc* g) { g->body = simplify(g->body); });
    pass.run("remove_no_op", &f, [](LoweredFunc* g) { g->body = remove_no_op(g->body); });
    if (options.bounds_check)
        pass.run("inject_bounds_checks", &f, [](LoweredFunc* g) { *g = inject_bounds_checks(*g); });
    pass.run("verify_lowered", &f, [](LoweredFunc* g) { verify_lowered(*g); });
    return f;
}

}  // namespace tessel
