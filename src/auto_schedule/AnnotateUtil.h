// Random annotation's rules and the tile-size helpers mutation shares (not public).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tessel/auto_schedule/SearchSpace.h"

namespace tessel::internal {

/// What an annotation rule works on: the schedule replayed from the sketch with its tile sizes
/// filled in, which the rule extends with steps.
struct AnnotateContext {
    const SearchSpace& space;
    const SketchContext& space_ctx;
    const Sketch& sketch;
    Schedule& schedule;
    std::mt19937_64& rng;
};

/// One annotation rule: a name (rejection reasons name it) and the function.
struct AnnotateRule {
    const char* name;
    std::function<void(AnnotateContext&)> apply;
};

/// The rules for `target`, in order (CPU: compute_location, parallel, auto_unroll, vectorize;
/// GPU: thread_bind, cooperative_fetch, auto_unroll).
std::vector<AnnotateRule> annotate_rules(const Target& target);

/// The auto-unroll pragma values annotation and mutation choose from.
const std::vector<int64_t>& auto_unroll_choices(const Target& target);

/// Sets every tile group's split factors in `steps` (a copy of the sketch's) at random.
void fill_tile_sizes(const SearchSpace& space, const Sketch& sketch, std::vector<Step>& steps,
                     std::mt19937_64& rng);

/// Whether a GPU sketch's tile sizes in `s` (the sketch replayed with them) fit the block: the
/// threads of each tiled stage and the shared memory of its fetches within the target's limits.
/// Annotation draws tile sizes again until they fit (rejection sampling: uniform over the
/// fitting ones).
bool gpu_tiles_fit(const SearchSpace& space, const Sketch& sketch, const Schedule& s);

/// Writes `lengths` (outer level first; the first is implied) into g's split steps.
void set_tile_lengths(std::vector<Step>& steps, const TileGroup& g,
                      const std::vector<int64_t>& lengths);

/// The lengths of g's levels in `steps`, outer level first.
std::vector<int64_t> tile_lengths(const std::vector<Step>& steps, const TileGroup& g);

}  // namespace tessel::internal
