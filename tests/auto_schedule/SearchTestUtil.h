// Shared by the search-space tests: the suite's tasks on both targets, how many samples a test
// draws (TESSEL_SEARCH_LONG=1 for the long mode), and the check of a state against the reference
// (CPU: loop interpreter and JIT; GPU: the SPMD interpreter with its race detector, and NVRTC).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "correctness/ScheduleTestUtil.h"
#include "gpu/GpuCheck.h"
#include "tessel/auto_schedule/SearchSpace.h"
#include "tessel/auto_schedule/WorkloadSuite.h"

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
            if (st.iters[id].kind == IterKind::Reduction) r *= st.iters[id].const_extent().value_or(1);
        longest = std::max(longest, r);
    }
    return longest;
}

/// Runs `state` against the reference interpreter (see the file comment); adds a failure naming
/// `what` and printing the schedule when it differs or fails.
inline void expect_state_matches_reference(const SearchTask& task, const SearchState& state,
                                           const std::string& what) {
    SCOPED_TRACE(what + "\n" + state.schedule.to_python());
    if (!task.target().is_gpu()) {
        expect_matches_reference(state.schedule, reduction_length(task));
        return;
    }
    GpuProgram p = gpu_program(what, state.schedule, reduction_length(task));
    try {
        check_in_interpreter(p, make_gpu_data(p, 11));
        if (has_cuda_backend()) compile_for_gpu(p);
    } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": " << e.what();
    }
}

}  // namespace tessel::testing
