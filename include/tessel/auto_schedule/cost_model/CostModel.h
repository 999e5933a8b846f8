// The auto-scheduler's cost model: gradient-boosted trees (XGBoost) over the per-store features of
// auto_schedule/features/Features.h, trained with Ansor's objective, ranking candidates before they
// are measured.
//
//   CostModel model({.seed = 1});
//   RankingQuality q = model.update(batch);  // quality on the new batch, then retrain on all
//   std::vector<double> scores = model.predict(candidate_features);  // higher is faster
//   model.save(CostModel::model_path("tuning_logs/matmul.jsonl"));
//
// Ansor's objective: a program's predicted score is the sum of the predictions of its store rows;
// its label is its throughput normalised per task (the task's fastest program has 1: the best
// mean cost over this one's); the loss is the squared error of the sum, weighted by the label, so
// the model is most accurate among the fast programs. XGBoost takes it as a custom objective: for
// every row of program p, gradient = y_p * (sum_p - y_p) and hessian = y_p. Failed programs
// (an error, no costs) are left out of training (their weight would be 0) and of the quality
// figures.
//
// The model is retrained from scratch on every program seen at each update(), as Ansor does; with
// fewer than `min_programs` successful programs it does not train and predicts random scores (a
// uniform draw per program from the seed). Training and prediction are deterministic for a given
// seed and thread count. save() writes XGBoost's JSON model with tessel's attributes beside the
// tuning log; load() reads it back.
//
// Built without XGBoost (TESSEL_USE_XGBOOST=OFF or libxgboost-dev missing), constructing a
// CostModel throws RuntimeError saying so; CostModel::available() answers first.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tessel/auto_schedule/features/Features.h"
#include "tessel/schedule/Step.h"

namespace tessel {

/// One measured program, as the tuner reads it back from a tuning record.
struct MeasuredProgram {
    std::string task_key;     ///< SearchTask::key(): labels are normalised per task
    std::vector<Step> steps;  ///< the schedule's steps (the record's; the model does not read them)
    FeatureMatrix features;   ///< extract_features of the schedule
    std::vector<double> costs;  ///< seconds of each measured run; empty when it failed
    int error = 0;              ///< 0 when measured; otherwise the record's error code

    /// Measured without error, with at least one cost.
    bool ok() const { return error == 0 && !costs.empty(); }
    /// The mean of `costs` (infinity when not ok()).
    double mean_cost() const;
};

/// Per program, its throughput normalised within its task: the task's best mean cost over the
/// program's (1 for the fastest; 0 for a failed program or one of a task without successes).
std::vector<double> normalized_throughputs(const std::vector<MeasuredProgram>& programs);

/// How well scores rank programs (Ansor's figures).
struct RankingQuality {
    /// Pairs of successful programs of one task whose throughputs differ by at least 5% (of the
    /// larger), ordered the same way by the scores; a tie of scores counts half. NaN when there
    /// are no such pairs.
    double pairwise_accuracy = std::numeric_limits<double>::quiet_NaN();
    int64_t pairs = 0;  ///< pairs counted
    /// Per task with more than `k` successful programs: how many of the k fastest are among the
    /// k best scored, over k; averaged over those tasks. NaN when no task has more than k.
    double recall_at_k = std::numeric_limits<double>::quiet_NaN();
    int k = 30;
    int tasks = 0;  ///< tasks in the recall average
    /// The scores came from a trained model (not the random scores of an untrained one).
    bool from_model = false;
};

/// The ranking quality of `scores` (one per program, higher meaning faster) on `programs`.
/// RuntimeError when the counts differ.
RankingQuality ranking_quality(const std::vector<MeasuredProgram>& programs,
                               const std::vector<double>& scores, int k = 30);

/// Options of the model (XGBoost's parameters are Ansor's, except the round count).
struct CostModelOptions {
    uint64_t seed = 0;          ///< XGBoost's seed and the random scores' seed
    int nthread = 1;            ///< XGBoost's threads; results are deterministic for a count
    int min_programs = 16;      ///< successful programs needed before the model trains
    int num_rounds = 400;       ///< boosting rounds per training (at most; see early_stop_rounds)
    int early_stop_rounds = 0;  ///< stop when the training loss has not improved by 0.1% in this
                                ///< many rounds (0: run all num_rounds)
    int max_depth = 10;         ///< trees' depth
    double eta = 0.2;           ///< learning rate
    double gamma = 0.001;       ///< minimum loss reduction to split
    double min_child_weight = 0;
};

/// The cost model (see the file comment). Not thread-safe; copies are not allowed.
class CostModel {
public:
    /// RuntimeError when tessel was built without XGBoost, or for options out of range.
    explicit CostModel(const CostModelOptions& options = {});
    ~CostModel();
    CostModel(const CostModel&) = delete;
    CostModel& operator=(const CostModel&) = delete;
    CostModel(CostModel&&) noexcept;
    CostModel& operator=(CostModel&&) noexcept;

    /// Whether this build has XGBoost (the constructor throws without it).
    static bool available();

    /// Retrains from scratch on `programs` (and forgets those seen before); a model with fewer
    /// than min_programs successful ones stays untrained. RuntimeError for a feature matrix
    /// without kNumFeatures columns per row.
    void train(std::vector<MeasuredProgram> programs);
    /// One round of the tuner: the ranking quality of the current model on `batch` (before it
    /// sees it), then retraining on every program seen so far plus the batch.
    RankingQuality update(const std::vector<MeasuredProgram>& batch);
    /// Scores, one per program (the sum of its rows' predictions; 0 for no rows), higher meaning
    /// faster; random until trained.
    std::vector<double> predict(const std::vector<FeatureMatrix>& programs) const;
    /// The same for the features of measured programs.
    std::vector<double> predict(const std::vector<MeasuredProgram>& programs) const;

    /// Whether a model was trained (or loaded).
    bool trained() const;
    /// Successful programs the current model was trained on.
    int64_t num_trained_programs() const;
    /// Programs seen by update() and train() (the history retrained on).
    const std::vector<MeasuredProgram>& history() const;

    /// Writes the trained model (XGBoost JSON, with tessel's format version and program count
    /// as attributes) to `path`. RuntimeError when untrained or on an I/O failure.
    void save(const std::string& path) const;
    /// Reads a model save() wrote; it predicts at once (the history stays empty: the log is the
    /// truth, and the tuner replays it to retrain). RuntimeError for a missing file, a file of
    /// another format or of another feature count.
    void load(const std::string& path);
    /// The model file beside a tuning log: "x.jsonl" → "x.model.json" (other names: +
    /// ".model.json").
    static std::string model_path(const std::string& log_path);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// One cost model for several tunings: the tasks of a job share one, as in Ansor's task
/// scheduler, so a task given few rounds still chooses with a model trained on all of them
/// (labels stay normalised per task, MeasuredProgram::task_key).
///
///   SharedCostModel shared({.seed = 1});
///   int gemm = shared.join(), conv = shared.join();  // members, in a fixed order
///   shared.add(gemm, gemm_log_programs);              // on start: what each log holds
///   const CostModel& m = shared.model();              // retrains first when anything was added
///   RankingQuality q = shared.update(conv, batch);    // a round: quality, then added
///
/// The model retrains from scratch, before it next answers model(), on every member's programs:
/// members in the order they joined, each one's in the order added. Its training set is so a
/// function of the members' programs alone, and a job resumed from its logs (one per task, read
/// in task order) trains the model the uninterrupted job had (the resume rule, docs/design.md
/// decision 6). A lone tuning is a shared model of one member. Not thread-safe.
class SharedCostModel {
public:
    /// RuntimeError as CostModel's constructor.
    explicit SharedCostModel(const CostModelOptions& options = {});

    /// A new member; returns its number (0, 1, ...).
    int join();
    /// Adds a member's programs (a log's, on start); the model retrains before it next answers.
    /// RuntimeError (nothing added) for a member that did not join, or a feature matrix without
    /// kNumFeatures columns per row.
    void add(int member, const std::vector<MeasuredProgram>& programs);
    /// One round of a member: the current model's ranking quality on `batch` (before it sees it),
    /// then add(member, batch).
    RankingQuality update(int member, const std::vector<MeasuredProgram>& batch);
    /// Forgets a member's programs (a restart of its search, TuningOptions::restart_after); the
    /// model retrains on the others' before it next answers. RuntimeError for a member that did
    /// not join.
    void clear(int member);
    /// The model, trained on every member's programs (retrained now when some were added since
    /// the last training; stale() tells).
    const CostModel& model();
    /// Programs were added since the model last trained.
    bool stale() const { return stale_; }
    /// Programs of all members.
    int64_t num_programs() const;
    /// Programs of all members measured without error (MeasuredProgram::ok).
    int64_t num_successes() const;

private:
    std::vector<MeasuredProgram>& member(int m, const char* caller);

    CostModel model_;
    std::vector<std::vector<MeasuredProgram>> members_;
    bool stale_ = true;
};

/// The version of the model file format save() writes (and the only one load() reads).
constexpr int kCostModelFormatVersion = 1;

}  // namespace tessel
