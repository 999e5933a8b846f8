// Step 1 of the example: define out = relu(x · w + b), schedule it, and export it.
//
//   generate_dense_relu <output folder>   writes dense_relu.o and dense_relu.h there
#include <cstdio>
#include <exception>
#include <string>

#include "tessel/codegen/Build.h"
#include "tessel/codegen/Export.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: generate_dense_relu <output folder>\n");
        return 2;
    }
    std::string out = argv[1];
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
    } catch (const std::exception& e) {
        std::fprintf(stderr, "generate_dense_relu: %s\n", e.what());
        return 1;
    }
    return 0;
}
