// Helpers for the codegen tests: build a schedule with the LLVM backend, run the JIT-compiled
// kernel on random inputs (NDArrays wrapping HostArrays) and compare every output with the
// reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "correctness/ScheduleTestUtil.h"

namespace tessel::testing {

/// Builds `s` for `target`, runs it on random inputs and compares each output with the
/// reference interpreter (as expect_matches_reference does with the loop-IR interpreter).
/// Returns the module's LLVM IR.
inline std::string expect_jit_matches_reference(const Schedule& s, int64_t reduction_length = 1,
                                                const std::string& target = "llvm",
                                                uint64_t seed = 1) {
    std::vector<Tensor> inputs = placeholders_of(s);
    std::vector<Tensor> args = inputs;
    for (const Tensor& t : s.outputs()) args.push_back(t);
    Module m = build(s, args, target);
    std::vector<HostArray> arrays;
    std::vector<std::pair<Tensor, HostArray>> ref_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
        arrays.push_back(HostArray::random(inputs[i].dtype(), const_shape(inputs[i]), seed + i));
        ref_inputs.emplace_back(inputs[i], arrays.back());
    }
    for (const Tensor& t : s.outputs()) arrays.emplace_back(t.dtype(), const_shape(t));
    std::vector<NDArray> views;
    for (HostArray& a : arrays) views.push_back(view_of(a));
    m.get("main")(views);
    std::vector<HostArray> ref = evaluate_reference(s.outputs(), ref_inputs);
    for (size_t o = 0; o < ref.size(); ++o) {
        CompareResult r =
            compare_to_reference(arrays[inputs.size() + o], ref[o],
                                 tolerance_for(s.outputs()[o].dtype(), reduction_length));
        EXPECT_TRUE(r.ok) << "output " << s.outputs()[o].name() << ": " << r.message() << "\n"
                          << m.get_source("ll");
    }
    return m.get_source("ll");
}

}  // namespace tessel::testing
