// Stage and loop references resolved against the current schedule (schedule/References.h).
#include "tessel/schedule/References.h"

#include <algorithm>

#include "ScheduleInternal.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace {

// Whether two operations have the same loop variables: a stage whose operation was rebuilt to
// read through a cache keeps its loops; cache_write and rfactor give it new ones.
bool same_loops(const Operation& a, const Operation& b) {
    if (a.same_as(b)) return true;
    const ComputeOpNode *ca = as_compute(a), *cb = as_compute(b);
    if (!ca || !cb || ca->axis.size() != cb->axis.size() ||
        ca->reduce_axis.size() != cb->reduce_axis.size())
        return false;
    for (size_t i = 0; i < ca->axis.size(); ++i)
        if (!ca->axis[i].same_as(cb->axis[i])) return false;
    for (size_t i = 0; i < ca->reduce_axis.size(); ++i)
        if (!ca->reduce_axis[i].same_as(cb->reduce_axis[i])) return false;
    return true;
}

// The position among the root axes (data-parallel, then reduction) of `v` in stage `st`, or -1.
int root_axis(const Stage& st, const IterVar& v) {
    const ComputeOpNode* c = as_compute(st.op);
    if (!c) return -1;
    for (size_t i = 0; i < c->axis.size(); ++i)
        if (c->axis[i].same_as(v)) return static_cast<int>(i);
    for (size_t j = 0; j < c->reduce_axis.size(); ++j)
        if (c->reduce_axis[j].same_as(v)) return static_cast<int>(c->axis.size() + j);
    // After cache_write or rfactor rebuilt the stage, C.op.axis[i] stays axis i of C's stage.
    const ComputeOpNode* d = as_compute(st.dag_op);
    if (d && d->axis.size() == c->axis.size())
        for (size_t i = 0; i < d->axis.size(); ++i)
            if (d->axis[i].same_as(v)) return static_cast<int>(i);
    return -1;
}

[[noreturn]] void fail(const Schedule& s, const char* primitive, int stage,
                       const std::string& message) {
    internal::schedule_fail(s, primitive, stage, message);
}

}  // namespace

std::string leaf_list(const Stage& st) {
    std::string out;
    for (size_t i = 0; i < st.leaf.size(); ++i)
        out += (i ? ", " : "") + std::to_string(i) + "=" + st.iters[st.leaf[i]].name;
    return out;
}

StageRef stage_ref(const Schedule& s, int index) {
    return StageRef{s.stage(index).dag_op};
}

IterRef leaf_ref(const Schedule& s, int stage, int pos) {
    const Stage& st = s.stage(stage);
    if (pos < 0 || pos >= static_cast<int>(st.leaf.size()))
        fail(s, "leaf_ref", stage, "no leaf at position " + std::to_string(pos));
    return IterRef{stage_ref(s, stage), st.leaf[pos], st.op};
}

IterRef iter_ref(const Schedule& s, int stage, int id) {
    const Stage& st = s.stage(stage);
    if (id < 0 || id >= static_cast<int>(st.iters.size()))
        fail(s, "iter_ref", stage, "no iterator with id " + std::to_string(id));
    return IterRef{stage_ref(s, stage), id, st.op};
}

int resolve_stage(const Schedule& s, const StageRef& r, const char* primitive) {
    const std::vector<Stage>& stages = s.stages();
    for (size_t i = 0; i < stages.size(); ++i)
        if (stages[i].dag_op.same_as(r.op)) return static_cast<int>(i);
    for (size_t i = 0; i < stages.size(); ++i)
        if (stages[i].op.same_as(r.op)) return static_cast<int>(i);
    TESSEL_THROW(ScheduleError) << primitive << ": operation '"
                                << (r.op.defined() ? r.op->name : std::string("?"))
                                << "' has no stage in this schedule";
}

bool is_current(const Schedule& s, const IterRef& r) {
    return same_loops(r.loops, s.stage(resolve_stage(s, r.stage, "iterator")).op);
}

const Iterator& iterator_of(const Schedule& s, const IterRef& r) {
    int stage = resolve_stage(s, r.stage, "iterator");
    if (!is_current(s, r))
        fail(s, "iterator", stage,
             "the loop reference is from before cache_write or rfactor gave the stage a new "
             "loop nest; take the loops from the stage's leaves or its operation's axes");
    return s.stage(stage).iters.at(r.id);
}

int resolve_iter_id(const Schedule& s, int stage, const IterRef& r, const char* primitive) {
    const Stage& st = s.stage(stage);
    if (!r.stage.op.same_as(st.dag_op)) {
        int other = resolve_stage(s, r.stage, primitive);
        std::string name = is_current(s, r) ? s.stage(other).iters.at(r.id).name : std::string("?");
        fail(s, primitive, stage,
             "loop '" + name + "' belongs to stage '" + s.stage(other).name() + "'");
    }
    if (!is_current(s, r))
        fail(s, primitive, stage,
             "the loop reference is from before cache_write or rfactor gave the stage a new "
             "loop nest; the loops are: " +
                 leaf_list(st));
    return r.id;
}

int resolve_iter_id(const Schedule& s, int stage, const IterVar& axis, const char* primitive) {
    const Stage& st = s.stage(stage);
    int a = root_axis(st, axis);
    if (a < 0)
        fail(s, primitive, stage,
             "axis '" + axis.var().name() + "' is not an axis of '" + st.name() +
                 "' (use the axes of " + st.name() + ".op.axis / .reduce_axis)");
    return st.root.at(a);
}

int leaf_position(const Schedule& s, int stage, int id, const char* primitive) {
    const Stage& st = s.stage(stage);
    auto it = std::find(st.leaf.begin(), st.leaf.end(), id);
    if (it == st.leaf.end())
        fail(s, primitive, stage,
             "loop '" + st.iters.at(id).name +
                 "' is no longer a loop of the stage (it was split or fused); the loops are: " +
                 leaf_list(st));
    return static_cast<int>(it - st.leaf.begin());
}

int storage_dim_of(const Schedule& s, int stage, int id, const char* primitive) {
    const Stage& st = s.stage(stage);
    auto root = std::find(st.root.begin(), st.root.end(), id);
    const ComputeOpNode* c = as_compute(st.op);
    int axis = static_cast<int>(root - st.root.begin());
    if (root == st.root.end() || !c || axis >= static_cast<int>(c->axis.size()))
        fail(s, primitive, stage,
             "loop '" + st.iters.at(id).name +
                 "' is not a data-parallel axis; a storage dimension is a position or an axis");
    std::string dims;
    for (size_t d = 0; d < st.storage.size(); ++d) {
        const StorageDim& sd = st.storage[d];
        if (sd.axis == axis && sd.part == StorageDim::Part::Whole) return static_cast<int>(d);
        dims += (d ? ", " : "") + std::to_string(d) + ": " + c->axis[sd.axis].var().name() +
                (sd.part == StorageDim::Part::Outer   ? ".outer"
                 : sd.part == StorageDim::Part::Inner ? ".inner"
                                                      : "");
    }
    fail(s, primitive, stage,
         "axis '" + c->axis[axis].var().name() +
             "' is stored split; give a storage dimension position: [" + dims + "]");
}

}  // namespace tessel
