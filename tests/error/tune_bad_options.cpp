// Tuning options out of range are a RuntimeError naming the option, before anything is read,
// written or measured.
#include "error/ExpectRuntimeError.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

using namespace tessel;
using tessel::testing::expect_runtime_error;

namespace {

TuningOptions good() {
    TuningOptions o;
    o.log_file = "/nonexistent-folder/never-written.jsonl";
    o.verbose = 0;
    return o;
}

void expect_refused(TuningOptions o, const std::string& what) {
    SearchTask task("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)}, Target("llvm"));
    expect_runtime_error([&] { tune(task, o); }, {"tune: ", what});
}

}  // namespace

TEST(ErrorTune, BadOptions) {
    TuningOptions o = good();
    o.trials = -1;
    expect_refused(o, "trials must be at least 0, got -1");
    o = good();
    o.measurements_per_round = 0;
    expect_refused(o, "measurements_per_round must be at least 1");
    o = good();
    o.log_file = "";
    expect_refused(o, "no log_file");
    o = good();
    o.population = 0;
    expect_refused(o, "population must be at least 1");
    o = good();
    o.generations = -2;
    expect_refused(o, "generations must be at least 0");
    o = good();
    o.mutation_prob = 1.5;
    expect_refused(o, "mutation_prob must be in [0, 1]");
    o = good();
    o.eps_greedy = -0.1;
    expect_refused(o, "eps_greedy must be in [0, 1]");
    o = good();
    o.early_stopping = -1;
    expect_refused(o, "early_stopping must be at least 0");
    o = good();
    o.restart_after = -1;
    expect_refused(o, "restart_after must be at least 0");
    o = good();
    o.num_threads = -1;
    expect_refused(o, "num_threads must be at least 0");
    o = good();
    o.verbose = 3;
    expect_refused(o, "verbose must be 0, 1 or 2");
}
