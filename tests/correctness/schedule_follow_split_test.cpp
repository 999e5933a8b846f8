// follow_split: a cache stage's split follows its consumer's split step, also when a searcher
// replays the step list with another factor for that step (Ansor's FollowSplitStep).
#include <gtest/gtest.h>

#include "correctness/ScheduleTestUtil.h"

using namespace tessel;
using tessel::testing::expect_matches_reference;
using tessel::testing::inferred_extents;
using tessel::testing::Matmul;

TEST(ScheduleFollowSplit, CacheStageFollowsTheConsumersFactor) {
    Matmul mm(24, 20, 12);
    Schedule s = create_schedule({mm.C});
    int cl = s.cache_write(s.stage_of(mm.C), "local");
    int c = s.stage_of(mm.C);
    s.split(c, 1, 4);  // step 1: j by 4
    int src = static_cast<int>(s.steps().size()) - 1;
    s.follow_split(cl, 1, src);  // C.local's j by the same factor
    EXPECT_EQ(s.stage(cl).iters[s.stage(cl).leaf[2]].const_extent(), 4);
    expect_matches_reference(s, 12);

    // The searcher mutates the consumer's factor; the follower follows on replay.
    std::vector<Step> steps = s.steps();
    std::get<SplitStep>(steps[src]).factor = 5;
    Schedule mutated = replay({mm.C}, steps);
    EXPECT_EQ(mutated.stage(cl).iters[mutated.stage(cl).leaf[2]].const_extent(), 5);
    EXPECT_EQ(mutated.stage(cl).iters[mutated.stage(cl).leaf[1]].const_extent(), 4);
    expect_matches_reference(mutated, 12);
}

TEST(ScheduleFollowSplit, FollowsNpartsAndTail) {
    Matmul mm(10, 14, 6);
    Schedule s = create_schedule({mm.C});
    int a = s.cache_read(s.stage_of(mm.A), "shared", {s.stage_of(mm.C)});
    int c = s.stage_of(mm.C);
    s.split_nparts(c, 0, 3);
    s.follow_split(a, 0, static_cast<int>(s.steps().size()) - 1);
    EXPECT_EQ(inferred_extents(s, a)[0], 3);
    expect_matches_reference(s, 6);
    Schedule r = schedule_from_json({mm.C}, s.to_json());
    EXPECT_EQ(r.steps(), s.steps());
}
