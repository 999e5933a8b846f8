// Step fields described once (schedule/Step.h): the JSON keys follow the description, fields
// with defaults may be left out, every kind is found by name, apply() says what a step made, and
// Schedule::reorder takes some of the leaves as TVM's reorder does.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tessel/schedule/References.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

struct Matmul {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = placeholder({8, 12}, Float(32), "B");
    IterVar k = reduce_axis({0, 8}, "k");
    Tensor C = compute(
        {16, 12}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
};

}  // namespace

TEST(StepFields, JsonKeysAreTheDescribedFields) {
    for_each_step_kind([](auto kind) {
        using T = decltype(kind);
        SCOPED_TRACE(T::kind);
        std::vector<std::string> listed = step_field_names<T>();
        std::set<std::string> names(listed.begin(), listed.end());
        names.insert("kind");
        const T step{};
        nlohmann::json j = nlohmann::json::parse(steps_to_json({Step(step)}))[0];
        std::set<std::string> keys;
        for (auto& [key, value] : j.items()) keys.insert(key);
        EXPECT_EQ(keys, names);
        EXPECT_EQ(j["kind"], T::kind);
        EXPECT_EQ(steps_from_json(steps_to_json({Step(step)})), std::vector<Step>{step});
    });
}

TEST(StepFields, EveryKindIsFoundByName) {
    int kinds = 0;
    for_each_step_kind([&](auto kind) {
        ++kinds;
        bool found_right_type = false;
        EXPECT_TRUE(with_step_kind(decltype(kind)::kind, [&](auto other) {
            found_right_type = std::is_same_v<decltype(other), decltype(kind)>;
        }));
        EXPECT_TRUE(found_right_type) << decltype(kind)::kind;
    });
    EXPECT_EQ(kinds, static_cast<int>(std::variant_size_v<Step>));
    EXPECT_FALSE(with_step_kind("tile", [](auto) {}));
}

TEST(StepFields, FieldsWithDefaultsMayBeLeftOut) {
    std::vector<Step> steps = steps_from_json(
        R"([{"kind":"split","stage":1,"iter":0,"factor":4},
            {"kind":"rfactor","stage":2,"iter":3}])");
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0], Step(SplitStep{1, 0, 4, false, TailStrategy::Guard}));
    EXPECT_EQ(steps[1], Step(RfactorStep{2, 3, 0}));
}

TEST(StepFields, ApplySaysWhatTheStepMade) {
    Matmul m;
    Schedule s = create_schedule({m.C});
    int c = s.stage_of(m.C);
    StepResult split = s.apply(SplitStep{c, 1, 4});
    EXPECT_EQ(split.leaves, (std::vector<int>{1, 2}));
    EXPECT_EQ(split.new_stage, -1);
    StepResult fuse = s.apply(FuseStep{c, {0, 1}});
    EXPECT_EQ(fuse.leaves, std::vector<int>{0});
    StepResult cache = s.apply(CacheReadStep{0, "local", {c}});
    EXPECT_EQ(cache.new_stage, 1);
    EXPECT_TRUE(s.apply(AnnotateStep{c + 1, 1, IterAnnotation::Vectorize}).leaves.empty());
}

TEST(StepFields, ReorderOfSomeLeavesKeepsTheirSlots) {
    Matmul m;
    Schedule s = create_schedule({m.C});
    int c = s.stage_of(m.C);
    s.split(c, 0, 4);  // i.outer i.inner j k
    s.reorder(c, {3, 1});
    const Stage& st = s.stage(c);
    std::vector<std::string> names;
    for (int id : st.leaf) names.push_back(st.iters[id].name);
    EXPECT_EQ(names, (std::vector<std::string>{"i0.outer", "k", "i1", "i0.inner"}));
    EXPECT_EQ(s.steps().back(), Step(ReorderStep{c, {0, 3, 2, 1}}));
}

TEST(StepFields, ReferencesOutliveInsertedStages) {
    Matmul m;
    Schedule s = create_schedule({m.C});
    int c = s.stage_of(m.C);
    StageRef cref = stage_ref(s, c);
    IterRef j = leaf_ref(s, c, 1);
    s.cache_read(0, "local", {c});  // C moves from 2 to 3; C's loops stay
    EXPECT_EQ(resolve_stage(s, cref, "test"), 3);
    EXPECT_EQ(leaf_position(s, 3, resolve_iter_id(s, 3, j, "test"), "test"), 1);
    s.cache_write(3, "local");  // C gets a new loop nest
    EXPECT_EQ(resolve_stage(s, cref, "test"), 4);
    EXPECT_FALSE(is_current(s, j));
    EXPECT_THROW(resolve_iter_id(s, 4, j, "test"), ScheduleError);
    // The user's axes still name the root loops of C's stage.
    const ComputeOpNode* op = as_compute(m.C.op());
    int id = resolve_iter_id(s, 4, op->axis[1], "test");
    EXPECT_EQ(s.stage(4).iters[id].name, s.stage(4).iters[s.stage(4).root[1]].name);
}
