// References to stages and loops that outlive the steps that follow them.
//
// Primitives address a stage by index and a loop by its position in the stage's leaf list, which
// change as steps apply: cache_read, cache_write and rfactor insert stages, split and fuse move
// leaves. A user script (Python's s[C].split(C.op.axis[0], 32), or C++ written the same way)
// holds on to references instead, resolved to the current index or position when a primitive is
// called:
//   - a StageRef names a stage by the DAG operation it computes (Stage::dag_op), stable while
//     steps insert stages or rebuild the stage's operation to read through a cache;
//   - an IterRef names a loop by its stable id (a position in Stage::iters) in the loop nest of
//     the operation the stage had when the reference was made: cache_write and rfactor give the
//     stage a new nest, and references to the old one are refused;
//   - an axis of the operation (C.op.axis[i], C.op.reduce_axis[j]) names its root loop.
// Every failure is a ScheduleError naming the primitive, the stage and the loops there are.
#pragma once

#include <string>
#include <vector>

#include "tessel/schedule/Schedule.h"

namespace tessel {

/// A stage, by the DAG operation it computes.
struct StageRef {
    Operation op;
};

/// A loop of a stage, by its stable id in the loop nest of operation `loops`.
struct IterRef {
    StageRef stage;
    int id = -1;
    Operation loops;  ///< the stage's operation when the reference was made
};

/// A reference to stage `index` (ScheduleError if out of range).
StageRef stage_ref(const Schedule& s, int index);
/// A reference to the loop at leaf position `pos` of stage `stage`.
IterRef leaf_ref(const Schedule& s, int stage, int pos);
/// A reference to the loop with stable id `id` of stage `stage` (current or former).
IterRef iter_ref(const Schedule& s, int stage, int id);

/// The stage's current index; ScheduleError (naming `primitive`) if the DAG has no such stage.
int resolve_stage(const Schedule& s, const StageRef& r, const char* primitive);
/// Whether the reference is to the stage's current loop nest (not one cache_write or rfactor
/// replaced).
bool is_current(const Schedule& s, const IterRef& r);
/// The iterator a reference names (ScheduleError if it is from a replaced loop nest).
const Iterator& iterator_of(const Schedule& s, const IterRef& r);

/// The stable id of the loop `r` names, checked to belong to stage `stage`.
int resolve_iter_id(const Schedule& s, int stage, const IterRef& r, const char* primitive);
/// The stable id of the root loop of `axis` (a data-parallel or reduction axis of the stage's
/// operation, or after cache_write or rfactor a data-parallel axis of the user's operation).
int resolve_iter_id(const Schedule& s, int stage, const IterVar& axis, const char* primitive);
/// The current leaf position of loop `id` of stage `stage`; ScheduleError if it is no longer a
/// leaf (it was split or fused), listing the leaves.
int leaf_position(const Schedule& s, int stage, int id, const char* primitive);
/// The storage dimension of stage `stage` that stores the data-parallel root loop `id` whole.
int storage_dim_of(const Schedule& s, int stage, int id, const char* primitive);

/// "0=i.outer, 1=j, ...": the stage's leaves, for messages.
std::string leaf_list(const Stage& st);

}  // namespace tessel
