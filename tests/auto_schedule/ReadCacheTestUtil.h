// Shared by the tests of the GPU read-cache sketch (read_cache_sketch_test.cpp,
// vector_copy_mutation_test.cpp): finding the variant sketch and reading a state's copies.
#pragma once

#include <string>

#include "tessel/auto_schedule/space/SearchSpace.h"

namespace tessel::testing {

/// The index of the read-cache sketch (`cache_read_local` in its trace); -1 when there is none.
inline int read_cache_variant(const SearchSpace& space) {
    for (size_t k = 0; k < space.sketches().size(); ++k)
        for (const std::string& t : space.sketches()[k].trace)
            if (t.find("cache_read_local") != std::string::npos) return static_cast<int>(k);
    return -1;
}

/// The index of the stage named `name`; -1 when there is none.
inline int stage_named(const Schedule& s, const std::string& name) {
    for (int k = 0; k < static_cast<int>(s.stages().size()); ++k)
        if (s.stage(k).name() == name) return k;
    return -1;
}

/// The vector lanes of a stage's vectorised leaf (1: none).
inline int64_t vector_lanes(const Schedule& s, const std::string& stage) {
    const Stage& st = s.stage(stage_named(s, stage));
    for (int id : st.leaf)
        if (st.iters[id].annotation == IterAnnotation::Vectorize)
            return st.iters[id].const_extent().value_or(0);
    return 1;
}

/// A 2-d tile stored transposed: its storage dimensions reordered, the first innermost.
inline bool transposed(const Schedule& s, const std::string& stage) {
    const Stage& st = s.stage(stage_named(s, stage));
    return st.storage.size() == 2 && st.storage[1].axis == 0;
}

}  // namespace tessel::testing
