// tessel-lower: applies a step list to a fixed operator and prints the lowered IR.
//
//   tessel-lower '[{"kind": "split", "stage": 3, "iter": 0, ...}]'    # steps on the command line
//   tessel-lower < steps.json                                          # or on stdin
//
// The operator is a 64x48x32 matmul whose right operand is scaled element-wise first, followed by
// a relu: stages A, B (placeholders), Bs = B * 0.5, C = A @ Bs, R = max(C, 0). The output is
// "# workload <key>" and the lowered function as to_string(lower(...)) prints it. The schedule
// tests run it as a subprocess to check that lowering is deterministic across processes.
#include <cstdio>
#include <exception>
#include <iostream>
#include <iterator>
#include <string>

#include "tessel/ir/IROperator.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;

int main(int argc, char** argv) {
    if (argc > 2 || (argc == 2 && std::string(argv[1]) == "--help")) {
        std::fprintf(stderr, "usage: %s [STEPS_JSON]   (reads stdin when no argument)\n", argv[0]);
        return 2;
    }
    std::string text = argc == 2 ? std::string(argv[1])
                                 : std::string(std::istreambuf_iterator<char>(std::cin), {});
    try {
        Tensor A = placeholder({64, 32}, Float(32), "A", /*constant=*/true);  // pre_transform
        Tensor B = placeholder({32, 48}, Float(32), "B");
        Tensor Bs = compute(
            {32, 48}, [&](Var k, Var j) { return B(k, j) * 0.5f; }, "Bs");
        IterVar k = reduce_axis({0, 32}, "k");
        Tensor C = compute(
            {64, 48}, [&](Var i, Var j) { return sum(A(i, k) * Bs(k, j), {k}); }, "C");
        Tensor R = compute(
            {64, 48}, [&](Var i, Var j) { return max(C(i, j), 0.0f); }, "R");
        Schedule s = replay({R}, steps_from_json(text));
        std::printf("# workload %llx\n%s", static_cast<unsigned long long>(s.workload_key()),
                    to_string(lower(s, {A, B, R}, "main", LowerOptions{})).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tessel-lower: %s\n", e.what());
        return 1;
    }
    return 0;
}
