// The cost model: normalised throughputs, the ranking figures (worked out by hand), random scores
// before training, learning a ranking from synthetic programs, determinism, the update round,
// the model file, and the model several tunings share.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "tessel/auto_schedule/cost_model/CostModel.h"

using namespace tessel;

namespace {

MeasuredProgram program(const std::string& task, double cost, int rows = 1) {
    MeasuredProgram p;
    p.task_key = task;
    p.features.rows = rows;
    p.features.values.assign(size_t(rows) * kNumFeatures, 0.0f);
    if (cost > 0) p.costs = {cost, cost};
    p.error = cost > 0 ? 0 : 3;
    return p;
}

// Synthetic programs whose throughput is the sum over their two rows of feature 0 (plus noise
// columns the model must ignore): what Ansor's objective is built to learn.
std::vector<MeasuredProgram> synthetic(int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<MeasuredProgram> out;
    for (int i = 0; i < n; ++i) {
        MeasuredProgram p = program(i % 2 ? "task-a" : "task-b", 1.0, 2);
        double throughput = 0.05;
        for (int r = 0; r < 2; ++r) {
            for (int c = 0; c < 8; ++c) p.features.values[size_t(r) * kNumFeatures + c] = u(rng);
            throughput += p.features.values[size_t(r) * kNumFeatures];
        }
        p.costs = {1.0 / throughput};
        out.push_back(p);
    }
    return out;
}

CostModelOptions small_options() {
    CostModelOptions o;
    o.seed = 3;
    o.min_programs = 20;
    o.num_rounds = 100;
    return o;
}

}  // namespace

TEST(CostModel, NormalizedThroughputsPerTask) {
    std::vector<MeasuredProgram> p = {program("a", 2.0), program("a", 1.0), program("b", 4.0),
                                      program("a", 0.0), program("b", 8.0)};
    EXPECT_EQ(normalized_throughputs(p), (std::vector<double>{0.5, 1.0, 1.0, 0.0, 0.5}));
    EXPECT_DOUBLE_EQ(p[0].mean_cost(), 2.0);
    EXPECT_TRUE(std::isinf(p[3].mean_cost()));
}

TEST(CostModel, PairwiseAccuracyByHand) {
    // Task a: costs 1, 2, 4, 4.1 (throughputs 1, .5, .25, .244); task b: 1, 3; a failure in a.
    // Pairs within a: (1,2) (1,3) (1,4) (2,3) (2,4) and (3,4) dropped (2.4% apart); one pair in
    // b. Scores rank a's first program last: of a's 5 pairs, the 3 with program 0 are wrong, the
    // 2 others right; b's pair is a tie (half): (2 + 0.5) / 6.
    std::vector<MeasuredProgram> p = {program("a", 1.0), program("a", 2.0), program("a", 4.0),
                                      program("a", 4.1), program("b", 1.0), program("b", 3.0),
                                      program("a", 0.0)};
    std::vector<double> scores = {0.1, 0.9, 0.5, 0.4, 0.7, 0.7, 99};
    RankingQuality q = ranking_quality(p, scores, 30);
    EXPECT_EQ(q.pairs, 6);
    EXPECT_DOUBLE_EQ(q.pairwise_accuracy, 2.5 / 6);
    EXPECT_TRUE(std::isnan(q.recall_at_k));  // no task has more than 30 programs
    EXPECT_EQ(q.tasks, 0);
}

TEST(CostModel, RecallAtKByHand) {
    // Task a, 5 programs, k = 2: the fastest two are programs 0 and 1; the scores pick 0 and 2:
    // recall 1/2. Task b has 2 programs (not more than k): left out of the average.
    std::vector<MeasuredProgram> p = {program("a", 1.0), program("a", 2.0), program("a", 3.0),
                                      program("a", 4.0), program("a", 5.0), program("b", 1.0),
                                      program("b", 2.0)};
    RankingQuality q = ranking_quality(p, {9, 1, 8, 2, 3, 0, 1}, 2);
    EXPECT_EQ(q.k, 2);
    EXPECT_EQ(q.tasks, 1);
    EXPECT_DOUBLE_EQ(q.recall_at_k, 0.5);
}

TEST(CostModel, RandomScoresUntilEnoughPrograms) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModelOptions o = small_options();
    CostModel a(o), b(o);
    std::vector<MeasuredProgram> few = synthetic(10, 1);  // fewer than min_programs = 20
    a.train(few);
    EXPECT_FALSE(a.trained());
    std::vector<double> sa = a.predict(few), sb = b.predict(few);
    EXPECT_EQ(sa, sb);  // the same seed: the same draws
    for (double s : sa) EXPECT_TRUE(s >= 0 && s < 1);
    EXPECT_NE(a.predict(few), sa);  // the next draws
    o.seed = 4;
    EXPECT_NE(CostModel(o).predict(few), sa);
}

TEST(CostModel, LearnsARankingAndIsDeterministic) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModelOptions o = small_options();
    std::vector<MeasuredProgram> train = synthetic(400, 1), test = synthetic(200, 2);
    CostModel model(o);
    model.train(train);
    ASSERT_TRUE(model.trained());
    EXPECT_EQ(model.num_trained_programs(), 400);
    std::vector<double> scores = model.predict(test);
    RankingQuality q = ranking_quality(test, scores);
    EXPECT_GT(q.pairwise_accuracy, 0.85) << q.pairs << " pairs";
    EXPECT_GT(q.recall_at_k, 0.5);
    CostModel again(o);
    again.train(train);
    EXPECT_EQ(again.predict(test), scores);
    // A failed program and one without rows (nothing to train on) are left out.
    train.push_back(program("task-a", 0.0, 2));
    train.push_back(program("task-a", 1e-9, 0));
    CostModel with_failures(o);
    with_failures.train(train);
    EXPECT_EQ(with_failures.num_trained_programs(), 400);
    EXPECT_EQ(with_failures.predict(std::vector<FeatureMatrix>{FeatureMatrix{}}),
              std::vector<double>{0.0});
}

TEST(CostModel, UpdateReportsOnTheBatchBeforeTrainingOnIt) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModelOptions o = small_options();
    CostModel model(o);
    RankingQuality first = model.update(synthetic(100, 1));
    EXPECT_FALSE(first.from_model);  // scored at random: nothing trained yet
    EXPECT_TRUE(model.trained());
    EXPECT_EQ(model.history().size(), 100u);
    RankingQuality second = model.update(synthetic(100, 2));
    EXPECT_TRUE(second.from_model);
    EXPECT_GT(second.pairwise_accuracy, 0.75);
    EXPECT_EQ(model.history().size(), 200u);
    EXPECT_EQ(model.num_trained_programs(), 200);
}

TEST(CostModel, SaveAndLoadBesideTheLog) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    EXPECT_EQ(CostModel::model_path("tuning_logs/matmul.jsonl"), "tuning_logs/matmul.model.json");
    EXPECT_EQ(CostModel::model_path("log.txt"), "log.txt.model.json");
    CostModelOptions o = small_options();
    CostModel model(o);
    std::vector<MeasuredProgram> train = synthetic(100, 1), test = synthetic(50, 2);
    model.train(train);
    std::string path = ::testing::TempDir() + "cost_model_test.model.json";
    model.save(path);
    CostModel loaded(o);
    loaded.load(path);
    EXPECT_TRUE(loaded.trained());
    EXPECT_EQ(loaded.num_trained_programs(), 100);
    EXPECT_TRUE(loaded.history().empty());
    EXPECT_EQ(loaded.predict(test), model.predict(test));
    std::remove(path.c_str());
}

// The shared model trains on every member's programs, members in join order: however the adds
// interleave (a running job's rounds), the model is the one trained on the members' programs one
// member after the other (a job resumed from its logs).
TEST(SharedCostModel, TrainsOnEveryMemberInJoinOrderHoweverTheAddsInterleave) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModelOptions o = small_options();
    std::vector<MeasuredProgram> all = synthetic(240, 1), test = synthetic(100, 2);
    auto part = [&](size_t from, size_t to) {
        return std::vector<MeasuredProgram>(all.begin() + std::ptrdiff_t(from),
                                            all.begin() + std::ptrdiff_t(to));
    };
    SharedCostModel rounds(o);
    int a = rounds.join(), b = rounds.join();
    EXPECT_EQ(a, 0);
    EXPECT_EQ(b, 1);
    rounds.add(a, part(0, 60));
    rounds.add(b, part(120, 180));
    EXPECT_TRUE(rounds.stale());
    EXPECT_TRUE(rounds.model().trained());
    EXPECT_FALSE(rounds.stale());
    RankingQuality q = rounds.update(b, part(180, 240));  // b's round before a's second
    EXPECT_TRUE(q.from_model);
    EXPECT_TRUE(rounds.stale());
    rounds.update(a, part(60, 120));
    EXPECT_EQ(rounds.num_programs(), 240);

    SharedCostModel resumed(o);
    int ra = resumed.join(), rb = resumed.join();
    resumed.add(ra, part(0, 120));
    resumed.add(rb, part(120, 240));
    CostModel alone(o);
    alone.train(all);
    std::vector<double> scores = rounds.model().predict(test);
    EXPECT_EQ(rounds.model().num_trained_programs(), 240);
    EXPECT_EQ(resumed.model().predict(test), scores);
    EXPECT_EQ(alone.predict(test), scores);
    CostModel first_member_only(o);
    first_member_only.train(part(0, 120));
    EXPECT_NE(first_member_only.predict(test), scores);
}

TEST(SharedCostModel, AnUntrainedModelScoresTheFirstRoundAtRandom) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    SharedCostModel shared(small_options());
    int m = shared.join();
    EXPECT_FALSE(shared.model().trained());
    RankingQuality first = shared.update(m, synthetic(100, 1));
    EXPECT_FALSE(first.from_model);
    EXPECT_TRUE(shared.model().trained());
    RankingQuality second = shared.update(m, synthetic(100, 2));
    EXPECT_TRUE(second.from_model);
    EXPECT_GT(second.pairwise_accuracy, 0.75);
}

// A member's restart (clear) forgets its programs alone: the model is the one trained on the
// others', and untrained when no one else has enough.
TEST(SharedCostModel, ClearForgetsOneMembersPrograms) {
    if (!CostModel::available()) GTEST_SKIP() << "built without XGBoost";
    CostModelOptions o = small_options();
    std::vector<MeasuredProgram> mine = synthetic(100, 1), theirs = synthetic(120, 3),
                                 test = synthetic(50, 2);
    SharedCostModel shared(o);
    int a = shared.join(), b = shared.join();
    shared.add(a, mine);
    EXPECT_TRUE(shared.model().trained());
    shared.clear(a);
    EXPECT_TRUE(shared.stale());
    EXPECT_FALSE(shared.model().trained());
    shared.add(a, mine);
    shared.add(b, theirs);
    shared.clear(a);
    EXPECT_EQ(shared.num_programs(), 120);
    CostModel alone(o);
    alone.train(theirs);
    EXPECT_EQ(shared.model().predict(test), alone.predict(test));
    EXPECT_THROW(shared.clear(2), RuntimeError);
}
