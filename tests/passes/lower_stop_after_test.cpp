// LowerOptions::stop_after: the pipeline ends after the named pass, and what it returns is the IR
// that the passes before it, run one by one, make (compared as printed IR).
#include <gtest/gtest.h>

#include <algorithm>

#include "tessel/arith/Simplify.h"
#include "tessel/lower/InjectVirtualThreads.h"
#include "tessel/lower/InsertBarriers.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/PartitionLoops.h"
#include "tessel/lower/ScheduleOps.h"
#include "tessel/lower/StorageFlatten.h"
#include "tessel/te/Operation.h"

namespace tessel {
namespace {

struct Matmul {
    Tensor A, B, C;
    Schedule s;
};

// A tiled 30x20x10 matmul: the tiles do not divide 30, so partition_loops has work to do.
Matmul tiled_matmul() {
    Tensor A = placeholder({30, 10}, Float(32), "A");
    Tensor B = placeholder({10, 20}, Float(32), "B");
    IterVar k = reduce_axis({0, 10}, "k");
    Tensor C = compute(
        {30, 20}, [&](Var i, Var j) { return sum(A(i, k.var()) * B(k.var(), j), {k}); }, "C");
    Matmul m{A, B, C, create_schedule({C})};
    m.s.tile(m.s.stage_of(m.C), 0, 1, 8, 4);
    return m;
}

LowerOptions stopping_after(const std::string& pass) {
    LowerOptions o;
    o.stop_after = pass;
    return o;
}

TEST(LowerStopAfter, PartitionLoopsGivesTheIRBeforeFlattening) {
    Matmul m = tiled_matmul();
    std::vector<Tensor> args = {m.A, m.B, m.C};
    Target cpu("llvm -mcpu=x86-64 -num-cores=1");
    LoweredFunc got = lower(m.s, args, cpu, "main", stopping_after("partition_loops"));
    LoweredFunc want = schedule_ops(m.s, args, "main");
    want.body = simplify(want.body);
    want.body = inject_virtual_threads(want.body, m.s.limits().max_unroll);
    want.body = insert_barriers(want.body);
    want.body = partition_loops(want.body);
    EXPECT_EQ(to_string(got), to_string(want));
    // One more pass is the flattened IR, which differs.
    LoweredFunc flat = lower(m.s, args, cpu, "main", stopping_after("storage_flatten"));
    EXPECT_EQ(to_string(flat), to_string(storage_flatten(want)));
    EXPECT_NE(to_string(flat), to_string(got));
}

TEST(LowerStopAfter, TheLastPassGivesTheWholePipeline) {
    Matmul m = tiled_matmul();
    std::vector<Tensor> args = {m.A, m.B, m.C};
    Target cpu("llvm -mcpu=x86-64 -num-cores=1");
    EXPECT_EQ(to_string(lower(m.s, args, cpu, "main", stopping_after("verify_lowered"))),
              to_string(lower(m.s, args, cpu, "main", LowerOptions{})));
    EXPECT_EQ(to_string(lower(m.s, args, cpu, "main", LowerOptions{})),
              to_string(lower(m.s, args, "main", LowerOptions{})));  // no target: the same passes
}

TEST(LowerStopAfter, PassNamesListThePipeline) {
    std::vector<std::string> cpu = lower_pass_names(Target("llvm"));
    std::vector<std::string> gpu = lower_pass_names(Target("cuda -arch=sm_80"));
    auto index = [](const std::vector<std::string>& v, const char* n) {
        return std::find(v.begin(), v.end(), n) - v.begin();
    };
    EXPECT_EQ(index(cpu, "partition_loops") + 1, index(cpu, "storage_flatten"));
    EXPECT_EQ(cpu.back(), "verify_lowered");
    EXPECT_EQ(std::find(cpu.begin(), cpu.end(), "split_host_device"), cpu.end());
    EXPECT_EQ(index(gpu, "split_host_device") + 1, index(gpu, "verify_lowered"));
}

}  // namespace
}  // namespace tessel
