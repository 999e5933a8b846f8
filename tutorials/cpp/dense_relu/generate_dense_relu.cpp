// Step 1 of the example: define out = relu(x · w + b), schedule it, and export it; then the same
// operator at a fixed batch of 32, scheduled by the best record of a tuning log.
//
//   generate_dense_relu <output folder> <tuning log>
//       writes dense_relu.o, dense_relu.h, dense_relu_tuned.o and dense_relu_tuned.h there
#include <cstdio>
#include <exception>
#include <string>

#include "tessel/auto_schedule/records/ApplyHistoryBest.h"
#include "tessel/codegen/Export.h"
#include "tessel/driver/Build.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: generate_dense_relu <output folder> <tuning log>\n");
        return 2;
    }
    std::string out = argv[1], log = argv[2];
    try {
        // What to compute. The batch size is symbolic: the product passes it at each call.
        Var batch("batch");
        const int in_features = 256, out_features = 128;
        Tensor x = placeholder({batch, in_features}, Float(32), "x");
        Tensor w = placeholder({in_features, out_features}, Float(32), "w");
        Tensor b = placeholder({out_features}, Float(32), "b");
        IterVar k = reduce_axis(Range(0, in_features), "k");
        Tensor y = compute(
            {batch, out_features},
            [&](Var i, Var j) { return sum(x(i, k.var()) * w(k.var(), j), {k}); }, "y");
        Tensor out_t = compute(
            {batch, out_features}, [&](Var i, Var j) { return max(y(i, j) + b(j), 0.0f); }, "out");

        // How: rows in parallel; for each row, 16 output features at a time as one vector,
        // accumulated over k; bias and ReLU fused into the row's loop, vectorized too.
        Schedule s = create_schedule({out_t});
        int ys = s.stage_of(y), os = s.stage_of(out_t);
        s.split(ys, 1, 16);           // i, j.outer, j.inner, k
        s.reorder(ys, {0, 1, 3, 2});  // i, j.outer, k, j.inner
        s.vectorize(ys, 3);
        s.split(os, 1, 16);
        s.vectorize(os, 2);
        s.parallel(os, 0);
        s.compute_at(ys, os, 0);  // the matmul row is computed where the ReLU row needs it

        // Build for the machine that builds (pass e.g. "llvm -mcpu=x86-64-v3" to target another),
        // then export the object file and the C header.
        Module m = build(s, {x, w, b, out_t}, "llvm", "dense_relu");
        export_object(m, out + "/dense_relu.o");
        export_header(m, out + "/dense_relu.h");
        std::printf("exported dense_relu to %s\n", out.c_str());

        // The operator at a fixed batch, tuned: the log holds measured schedules of this DAG
        // (tessel's Measurer wrote them, for "llvm -mcpu=x86-64-v3"). Apply-best picks the
        // fastest that serves this machine (a record of a CPU whose features this one has, with
        // a warning) or the default schedule (with a warning), never a record of another DAG.
        const int batch32 = 32;
        Tensor x32 = placeholder({batch32, in_features}, Float(32), "x");
        Tensor w32 = placeholder({in_features, out_features}, Float(32), "w");
        Tensor b32 = placeholder({out_features}, Float(32), "b");
        IterVar k32 = reduce_axis(Range(0, in_features), "k");
        Tensor y32 = compute(
            {batch32, out_features},
            [&](Var i, Var j) { return sum(x32(i, k32.var()) * w32(k32.var(), j), {k32}); }, "y");
        Tensor out32 = compute(
            {batch32, out_features}, [&](Var i, Var j) { return max(y32(i, j) + b32(j), 0.0f); },
            "out");
        SearchTask task(TensorDAG{{x32, w32, b32}, {out32}}, Target("llvm"));
        ApplyHistoryBest best(log);
        Schedule tuned = best.choose(task);
        std::printf("dense_relu_tuned: %lld records read from the log; %zu steps applied%s\n",
                    static_cast<long long>(best.records()), tuned.steps().size(),
                    best.warnings().empty() ? " (exact target match)" : "");
        Module mt = build(tuned, {x32, w32, b32, out32}, task.target(), "dense_relu_tuned");
        export_object(mt, out + "/dense_relu_tuned.o");
        export_header(mt, out + "/dense_relu_tuned.h");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "generate_dense_relu: %s\n", e.what());
        return 1;
    }
    return 0;
}
