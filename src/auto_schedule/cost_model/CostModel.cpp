// The cost model (auto_schedule/cost_model/CostModel.h): Ansor's objective over XGBoost
// (CostModelBooster.h), random scores until trained, the tuner's update round, the model file, and
// the model several tunings share.
#include "tessel/auto_schedule/cost_model/CostModel.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "CostModelBooster.h"
#include "support/SplitMix.h"

namespace tessel {

using internal::Booster;

namespace {

internal::BoosterParams booster_params(const CostModelOptions& o) {
    internal::BoosterParams p;
    p.seed = o.seed;
    p.nthread = o.nthread;
    p.max_depth = o.max_depth;
    p.eta = o.eta;
    p.gamma = o.gamma;
    p.min_child_weight = o.min_child_weight;
    return p;
}

void check_options(const CostModelOptions& o) {
    auto fail = [](const char* what, double v) {
        TESSEL_THROW(RuntimeError) << "CostModel: " << what << " out of range (" << v << ")";
    };
    if (o.nthread < 1) fail("nthread must be at least 1", o.nthread);
    if (o.min_programs < 1) fail("min_programs must be at least 1", o.min_programs);
    if (o.num_rounds < 1) fail("num_rounds must be at least 1", o.num_rounds);
    if (o.early_stop_rounds < 0)
        fail("early_stop_rounds must not be negative", o.early_stop_rounds);
    if (o.max_depth < 1) fail("max_depth must be at least 1", o.max_depth);
    if (!(o.eta > 0)) fail("eta must be positive", o.eta);
    if (!(o.gamma >= 0)) fail("gamma must not be negative", o.gamma);
    if (!(o.min_child_weight >= 0))
        fail("min_child_weight must not be negative", o.min_child_weight);
}

void check_features(const FeatureMatrix& m, const char* what, size_t index) {
    if (m.rows < 0 || m.values.size() != size_t(m.rows) * kNumFeatures)
        TESSEL_THROW(RuntimeError)
            << what << ": program " << index << " has " << m.values.size() << " feature values for "
            << m.rows << " rows; expected " << kNumFeatures << " per row";
}

void check_programs(const std::vector<MeasuredProgram>& programs, const char* what) {
    for (size_t i = 0; i < programs.size(); ++i) check_features(programs[i].features, what, i);
}

// The training set: the rows of every successful program, with each row's program and each
// program's label (its normalised throughput).
struct TrainingSet {
    std::vector<float> rows;
    std::vector<int> program_of_row;
    std::vector<double> labels;
};

TrainingSet training_set(const std::vector<MeasuredProgram>& programs) {
    std::vector<double> y = normalized_throughputs(programs);
    TrainingSet t;
    for (size_t i = 0; i < programs.size(); ++i) {
        if (!programs[i].ok() || programs[i].features.rows == 0) continue;
        const FeatureMatrix& m = programs[i].features;
        t.rows.insert(t.rows.end(), m.values.begin(), m.values.end());
        t.program_of_row.insert(t.program_of_row.end(), size_t(m.rows), int(t.labels.size()));
        t.labels.push_back(y[i]);
    }
    return t;
}

// Ansor's objective: the program's score is the sum of its rows' predictions; the loss is
// sum_p y_p * (score_p - y_p)^2 / 2, so every row of p gets gradient y_p * (score_p - y_p). The
// hessian is y_p times the program's row count (Ansor's is y_p): rows of one program mostly land
// in one leaf, where the loss's curvature is y_p * rows^2, and with y_p alone each Newton step
// overshoots by the row count and training diverges (measured: pairwise accuracy on the
// training set fell from 0.77 after 50 rounds to 0.48 after 400).
internal::BoosterObjective pack_sum_objective(const TrainingSet& t) {
    return [&t](const std::vector<float>& predictions, std::vector<float>* grad,
                std::vector<float>* hess) {
        std::vector<double> score(t.labels.size(), 0.0), rows(t.labels.size(), 0.0);
        for (size_t r = 0; r < predictions.size(); ++r) {
            score[t.program_of_row[r]] += predictions[r];
            rows[t.program_of_row[r]] += 1;
        }
        double loss = 0;
        for (size_t p = 0; p < score.size(); ++p) {
            double e = score[p] - t.labels[p];
            loss += t.labels[p] * e * e / 2;
        }
        for (size_t r = 0; r < predictions.size(); ++r) {
            int p = t.program_of_row[r];
            (*grad)[r] = float(t.labels[p] * (score[p] - t.labels[p]));
            (*hess)[r] = float(t.labels[p] * rows[p]);
        }
        return loss;
    };
}

}  // namespace

struct CostModel::Impl {
    CostModelOptions options;
    Booster booster;
    bool trained = false;
    int64_t trained_programs = 0;
    std::vector<MeasuredProgram> history;
    mutable internal::SplitMix64 random_state;  // the same sequence on every platform

    explicit Impl(const CostModelOptions& o)
        : options(o), booster(booster_params(o)), random_state{o.seed} {}
    double random_score() const { return random_state.unit(); }
    void fit();
    std::vector<double> scores(const std::vector<const FeatureMatrix*>& programs) const;
};

void CostModel::Impl::fit() {
    TrainingSet t = training_set(history);
    trained = false;
    trained_programs = 0;
    if (t.labels.size() < size_t(options.min_programs)) return;
    booster.train(t.rows, kNumFeatures, pack_sum_objective(t), options.num_rounds,
                  options.early_stop_rounds);
    trained = true;
    trained_programs = int64_t(t.labels.size());
}

CostModel::CostModel(const CostModelOptions& options) {
    check_options(options);
    impl_ = std::make_unique<Impl>(options);
}

CostModel::~CostModel() = default;
CostModel::CostModel(CostModel&&) noexcept = default;
CostModel& CostModel::operator=(CostModel&&) noexcept = default;

bool CostModel::available() {
    return Booster::available();
}

void CostModel::train(std::vector<MeasuredProgram> programs) {
    check_programs(programs, "CostModel::train");
    impl_->history = std::move(programs);
    impl_->fit();
}

RankingQuality CostModel::update(const std::vector<MeasuredProgram>& batch) {
    check_programs(batch, "CostModel::update");
    RankingQuality q = ranking_quality(batch, predict(batch));
    q.from_model = impl_->trained;
    impl_->history.insert(impl_->history.end(), batch.begin(), batch.end());
    impl_->fit();
    return q;
}

std::vector<double> CostModel::Impl::scores(
    const std::vector<const FeatureMatrix*>& programs) const {
    std::vector<double> scores(programs.size(), 0.0);
    for (size_t i = 0; i < programs.size(); ++i)
        check_features(*programs[i], "CostModel::predict", i);
    if (!trained) {
        for (double& s : scores) s = random_score();
        return scores;
    }
    std::vector<float> rows;
    for (const FeatureMatrix* m : programs)
        rows.insert(rows.end(), m->values.begin(), m->values.end());
    if (rows.empty()) return scores;
    std::vector<float> out = booster.predict(rows, kNumFeatures);
    size_t r = 0;
    for (size_t i = 0; i < programs.size(); ++i)
        for (int k = 0; k < programs[i]->rows; ++k) scores[i] += out[r++];
    return scores;
}

std::vector<double> CostModel::predict(const std::vector<FeatureMatrix>& programs) const {
    std::vector<const FeatureMatrix*> features;
    for (const FeatureMatrix& m : programs) features.push_back(&m);
    return impl_->scores(features);
}

std::vector<double> CostModel::predict(const std::vector<MeasuredProgram>& programs) const {
    std::vector<const FeatureMatrix*> features;
    for (const MeasuredProgram& p : programs) features.push_back(&p.features);
    return impl_->scores(features);
}

bool CostModel::trained() const {
    return impl_->trained;
}

int64_t CostModel::num_trained_programs() const {
    return impl_->trained_programs;
}

const std::vector<MeasuredProgram>& CostModel::history() const {
    return impl_->history;
}

namespace {

const char* const kAttrVersion = "tessel_format_version";
const char* const kAttrFeatures = "tessel_num_features";
const char* const kAttrPrograms = "tessel_num_programs";

}  // namespace

void CostModel::save(const std::string& path) const {
    if (!impl_->trained)
        TESSEL_THROW(RuntimeError) << "CostModel::save: the model is not trained (it trains on "
                                   << impl_->options.min_programs << " successful programs)";
    std::string bytes =
        impl_->booster.save({{kAttrVersion, std::to_string(kCostModelFormatVersion)},
                             {kAttrFeatures, std::to_string(kNumFeatures)},
                             {kAttrPrograms, std::to_string(impl_->trained_programs)}});
    // Written beside and renamed over: a reader never sees half a model.
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size()));
        if (!out.flush())
            TESSEL_THROW(RuntimeError) << "CostModel::save: cannot write '" << tmp << "'";
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        TESSEL_THROW(RuntimeError)
            << "CostModel::save: cannot rename '" << tmp << "' to '" << path << "'";
    }
}

void CostModel::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) TESSEL_THROW(RuntimeError) << "CostModel::load: cannot read '" << path << "'";
    std::ostringstream bytes;
    bytes << in.rdbuf();
    Booster booster(booster_params(impl_->options));
    std::vector<std::string> attrs =
        booster.load(bytes.str(), {kAttrVersion, kAttrFeatures, kAttrPrograms});
    if (attrs[0] != std::to_string(kCostModelFormatVersion) ||
        attrs[1] != std::to_string(kNumFeatures))
        TESSEL_THROW(RuntimeError)
            << "CostModel::load: '" << path << "' is not a tessel cost model of format version "
            << kCostModelFormatVersion << " over " << kNumFeatures << " features (it says version '"
            << attrs[0] << "', " << (attrs[1].empty() ? "?" : attrs[1]) << " features)";
    impl_->booster = std::move(booster);
    impl_->trained = true;
    impl_->trained_programs = std::strtoll(attrs[2].c_str(), nullptr, 10);
    impl_->history.clear();
}

std::string CostModel::model_path(const std::string& log_path) {
    const std::string ext = ".jsonl";
    if (log_path.size() > ext.size() && log_path.ends_with(ext))
        return log_path.substr(0, log_path.size() - ext.size()) + ".model.json";
    return log_path + ".model.json";
}

// SharedCostModel: the members' programs in a fixed order, and a retraining from scratch before
// the model next answers after any of them changed.

SharedCostModel::SharedCostModel(const CostModelOptions& options) : model_(options) {}

int SharedCostModel::join() {
    members_.emplace_back();
    return static_cast<int>(members_.size()) - 1;
}

std::vector<MeasuredProgram>& SharedCostModel::member(int m, const char* caller) {
    if (m < 0 || static_cast<size_t>(m) >= members_.size())
        TESSEL_THROW(RuntimeError)
            << caller << ": no member " << m << " (" << members_.size() << " joined)";
    return members_[static_cast<size_t>(m)];
}

void SharedCostModel::add(int m, const std::vector<MeasuredProgram>& programs) {
    std::vector<MeasuredProgram>& mine = member(m, "SharedCostModel::add");
    check_programs(programs, "SharedCostModel::add");
    if (programs.empty()) return;
    mine.insert(mine.end(), programs.begin(), programs.end());
    stale_ = true;
}

RankingQuality SharedCostModel::update(int m, const std::vector<MeasuredProgram>& batch) {
    member(m, "SharedCostModel::update");
    check_programs(batch, "SharedCostModel::update");
    const CostModel& current = model();
    RankingQuality q = ranking_quality(batch, current.predict(batch));
    q.from_model = current.trained();
    add(m, batch);
    return q;
}

void SharedCostModel::clear(int m) {
    member(m, "SharedCostModel::clear").clear();
    stale_ = true;
}

const CostModel& SharedCostModel::model() {
    if (!stale_) return model_;
    std::vector<MeasuredProgram> all;
    all.reserve(static_cast<size_t>(num_programs()));
    for (const std::vector<MeasuredProgram>& m : members_)
        all.insert(all.end(), m.begin(), m.end());
    model_.train(std::move(all));
    stale_ = false;
    return model_;
}

int64_t SharedCostModel::num_programs() const {
    int64_t n = 0;
    for (const std::vector<MeasuredProgram>& m : members_) n += static_cast<int64_t>(m.size());
    return n;
}

int64_t SharedCostModel::num_successes() const {
    int64_t n = 0;
    for (const std::vector<MeasuredProgram>& m : members_)
        n += std::count_if(m.begin(), m.end(), [](const MeasuredProgram& p) { return p.ok(); });
    return n;
}

}  // namespace tessel
