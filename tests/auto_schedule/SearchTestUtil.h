// Shared by the search-space tests: the suite's tasks on both targets, how many samples a test
// draws (TESSEL_SEARCH_LONG=1 for the long mode), and the check of a state against the reference
// (CPU: loop interpreter and JIT; GPU: the SPMD interpreter with its race detector, and NVRTC).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "correctness/ScheduleTestUtil.h"
#include "gpu/GpuCheck.h"
#include "tessel/auto_schedule/space/SearchSpace.h"
#include "tessel/auto_schedule/space/WorkloadSuite.h"
// task_flops: the interpreters run tasks up to kInterpretFlops
#include "tessel/auto_schedule/tuner/Tuner.h"

namespace tessel::testing {

inline const std::vector<std::string>& search_targets() {
    static const std::vector<std::string> t = {"llvm", "cuda -arch=sm_90"};
    return t;
}

/// TESSEL_SEARCH_LONG=1: the long mode (the 10,000 samples per target).
inline bool search_long_mode() {
    const char* v = std::getenv("TESSEL_SEARCH_LONG");
    return v && std::string(v) == "1";
}

/// The largest reduction of the task's stages (for the comparison's tolerance).
inline int64_t reduction_length(const SearchTask& task) {
    int64_t longest = 1;
    for (const Stage& st : task.initial_schedule().stages()) {
        int64_t r = 1;
        for (int id : st.root)
            if (st.iters[id].kind == IterKind::Reduction)
                r *= st.iters[id].const_extent().value_or(1);
        longest = std::max(longest, r);
    }
    return longest;
}

/// The schedule JIT-compiled through LLVM on random inputs against the reference interpreter.
inline void expect_jit_matches_reference(const Schedule& s, int64_t reduction_length) {
    std::vector<Tensor> inputs = placeholders_of(s), args = inputs;
    for (const Tensor& t : s.outputs()) args.push_back(t);
    std::vector<HostArray> arrays;
    std::vector<std::pair<Tensor, HostArray>> ref_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
        arrays.push_back(HostArray::random(inputs[i].dtype(), const_shape(inputs[i]), 5 + i));
        ref_inputs.emplace_back(inputs[i], arrays.back());
    }
    for (const Tensor& t : s.outputs()) arrays.emplace_back(t.dtype(), const_shape(t));
    if (!run_jit(s, args, arrays, "")) return;
    std::vector<HostArray> ref = evaluate_reference(s.outputs(), ref_inputs);
    for (size_t o = 0; o < ref.size(); ++o) {
        CompareResult r =
            compare_to_reference(arrays[inputs.size() + o], ref[o],
                                 tolerance_for(s.outputs()[o].dtype(), reduction_length));
        EXPECT_TRUE(r.ok) << "JIT output " << s.outputs()[o].name() << ": " << r.message();
    }
}

/// Tasks above this run in the interpreters too slowly for CI (the SPMD interpreter runs every
/// thread of every block); they are checked through the JIT (CPU) or NVRTC (GPU) only.
constexpr double kInterpretFlops = 2e5;

/// Runs `state` against the reference interpreter (see the file comment); adds a failure naming
/// `what` and printing the schedule when it differs or fails.
inline void expect_state_matches_reference(const SearchTask& task, const SearchState& state,
                                           const std::string& what) {
    SCOPED_TRACE(what + "\n" + state.schedule.to_python());
    bool interpret = task_flops(task) <= kInterpretFlops;
    if (!task.target().is_gpu()) {
        if (interpret)
            expect_matches_reference(state.schedule, reduction_length(task));
        else if (has_llvm_backend())
            expect_jit_matches_reference(state.schedule, reduction_length(task));
        return;
    }
    GpuProgram p = gpu_program(what, state.schedule, reduction_length(task));
    try {
        if (interpret) check_in_interpreter(p, make_gpu_data(p, 11));
    } catch (const std::exception& e) {
        // A legal schedule can be too costly to interpret (redundant work in every thread of a
        // small task): that is the harness's limit, not a wrong schedule.
        if (std::string(e.what()).find("step budget exceeded") != std::string::npos)
            std::printf("%s: not interpreted (over the interpreter's step budget)\n", what.c_str());
        else
            ADD_FAILURE() << what << ": " << e.what();
    }
    try {
        if (has_cuda_backend()) compile_for_gpu(p);
    } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": " << e.what();
    }
}

/// `count` random complete states of sketch `sketch` (annotation drawn until one completes, at
/// most 4 * count draws; fewer is a test failure).
inline std::vector<SearchState> sketch_samples(const SearchSpace& space, int sketch, int count,
                                               uint64_t seed) {
    std::vector<SearchState> out;
    std::mt19937_64 rng(seed);
    for (int tries = 0; tries < 4 * count && static_cast<int>(out.size()) < count; ++tries) {
        std::string why;
        std::optional<SearchState> s = space.annotate(sketch, rng, &why);
        if (s) out.push_back(std::move(*s));
    }
    EXPECT_EQ(static_cast<int>(out.size()), count) << "seed " << seed;
    return out;
}

/// What check_mutants saw: the children made and the mutations that made them.
struct MutantsSeen {
    int made = 0;
    std::set<std::string> kinds;
};

/// Mutates `states` in turn `tries` times (rng seeded by `seed`); every child must pass the
/// space's check and match sketch `sketch`; `each(child, n)` sees the n-th child (from 1).
template <typename Each>
MutantsSeen check_mutants(const SearchSpace& space, const std::vector<SearchState>& states,
                          int sketch, int tries, uint64_t seed, Each each) {
    std::mt19937_64 rng(seed);
    MutantsSeen seen;
    for (int i = 0; i < tries && !states.empty(); ++i) {
        std::optional<SearchState> child = space.mutate(states[i % states.size()], rng);
        if (!child) continue;
        ++seen.made;
        seen.kinds.insert(child->origin);
        EXPECT_TRUE(space.check(child->schedule).empty());
        EXPECT_EQ(space.match_sketch(child->schedule), sketch);
        each(*child, seen.made);
    }
    return seen;
}

}  // namespace tessel::testing
