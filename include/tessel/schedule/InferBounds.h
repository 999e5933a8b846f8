// Bound inference: the loop structure of every stage of a schedule.
//
// A stage computed by reverse_compute_at (Stage::attach_after) gets its region from its target
// instead: along each of its data-parallel axes, the points of the target axis it reads that one
// iteration of the attach loop writes (the target's root values bounded over the loops inside).
// For each stage: a variable and an extent for every iterator (leaf or not), the value of every
// root axis as an expression of the leaf variables, and the region of the root axes the stage
// computes. Root stages compute their whole domain. A stage computed at consumer T's loop L
// computes the region its consumers read during one iteration of L: the union of the bounds of
// their read indices (symbolic in T's loop variables at and outside L), clamped to the stage's
// domain (reads outside the domain do not happen, by the DSL's semantics). Its loops cover a
// constant extent (the largest the region can be) and a guard skips points past the region.
//
// Splits whose factor may not divide the extent add a guard (`root < extent`) on the points
// past the end (Guard), shift the last iteration inwards (ShiftInwards), or compute the padded
// points (RoundUp): those store past the region into padded storage, but evaluate the body at
// the region's last point (`read_values`), so they never read past their producers.
// ShiftInwards falls back to a guard where recomputing would be wrong: when a loop derived from
// the shifted iterator is parallel (two iterations would write one element) or, in a reduction,
// a loop derived from the outer part runs inside a reduction loop (recomputed points would be
// accumulated twice; a vthread loop counts as innermost, where inject_virtual_threads puts it).
//
// Padded tiles (GPU): a stage computed inside a GPU kernel (shared or local storage) computes the
// whole tile its loops cover, even where that runs past what its consumers need or past its
// tensor's domain (shapes that the tiles do not divide): its region is not clamped to the domain,
// so its loops have constant extents and no guards. The points past the domain are well defined:
// a read of a producer at a point outside the producer's computed region (a placeholder's shape,
// a root stage's domain) reads zero (ScheduleOps guards the read, `overcomputed`), so copies into
// shared memory are zero-padded and the compute loops reading them run unguarded; only the
// stores into the kernel's output keep their guards. An axis whose unclamped region has no
// constant bound (data-dependent reads) is clamped as before.
#pragma once

#include <vector>

#include "tessel/ir/IR.h"
#include "tessel/schedule/Schedule.h"

namespace tessel {

/// One condition a stage's body needs, e.g. `i.outer*32 + i.inner < 1000`.
struct StageGuard {
    Expr condition;
    bool on_reduction = false;  ///< involves reduction iterators: guards the update only
};

/// The loop structure of one stage after bound inference (see the file comment).
struct StageBounds {
    std::vector<Var> iter_vars;      ///< per iterator id
    std::vector<Expr> iter_extents;  ///< per iterator id
    std::vector<Expr> root_values;   ///< per root axis: absolute index in terms of leaf vars
    /// Per root axis: the index the body is evaluated at. root_values, except where round-up
    /// splits run past the region: there it is clamped to the region's last point, so the padded
    /// points recompute that point (into padded storage) instead of reading past the inputs.
    std::vector<Expr> read_values;
    std::vector<Expr> region_min;      ///< per root axis: first point computed
    std::vector<Expr> region_extent;   ///< per root axis: points computed (may be symbolic)
    std::vector<Expr> region_bound;    ///< per root axis: constant bound of region_extent, if any
    std::vector<Expr> storage_extent;  ///< per root axis: constant extent of the stage's storage
    std::vector<StageGuard> guards;
    /// A padded tile (see the file comment): the stage computes points past its consumers' needs
    /// and its domain, so its reads of producers whose regions may not cover them are guarded
    /// (they read zero outside the producer's region).
    bool overcomputed = false;
    /// Per data-parallel root axis of a padded tile: its region is the unclamped tile.
    std::vector<bool> overcomputed_axes;
    /// A stage computed by reverse_compute_at: how many iterations of the loops around its
    /// attach point write the target's points one tile of it reads (1: its own iteration alone;
    /// more: the last of them to finish computes it, counted per tile), the tile's index among
    /// `arrival_tiles`, and whether the iteration wrote anything (its part of the target lies in
    /// the target's domain). 0 for other stages.
    int64_t arrivals = 0;
    int64_t arrival_tiles = 0;
    Expr arrival_tile;
    Expr arrival_valid;
};

/// Bound inference over every stage. Placeholder and inlined stages get their full domain and
/// no loops. Throws ScheduleError when a stage's region cannot be bounded or its consumers are
/// not all inside its attach point (a schedule left incomplete by compute_at, naming both stages).
std::vector<StageBounds> infer_bounds(const Schedule& s);

/// Per stage, the extents of its leaf loops, outermost first, from `bounds` (infer_bounds(s)):
/// what Schedule::infer_extents() returns.
std::vector<std::vector<Expr>> leaf_extents(const Schedule& s,
                                            const std::vector<StageBounds>& bounds);

/// The bodies of every compute stage with inlined stages substituted (empty for placeholders).
std::vector<std::vector<Expr>> inlined_bodies(const Schedule& s);

}  // namespace tessel
