// Random schedules of GEMM and conv2d (RandomSchedules.h).
#include "RandomSchedules.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tessel::bench {

namespace {

using Rng = std::mt19937_64;

bool chance(Rng& rng, double p) {
    return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

template <typename T>
const T& pick(Rng& rng, const std::vector<T>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// Tile sizes of `extent` in `levels` levels, outermost first, each a divisor of what is left.
std::vector<int64_t> random_factors(int64_t extent, int levels, Rng& rng) {
    std::vector<int64_t> f(levels, 1);
    int64_t left = extent;
    for (int l = levels - 1; l > 0; --l) {
        std::vector<int64_t> divisors;
        for (int64_t d = 1; d <= left; ++d)
            if (left % d == 0 && d <= 64) divisors.push_back(d);
        f[l] = pick(rng, divisors);
        left /= f[l];
    }
    f[0] = left;
    return f;
}

// One stage's leaves by label, kept in step with the schedule: splits, reorders and fusions by
// name instead of by shifting positions.
class Nest {
public:
    Nest(Schedule* s, int stage, std::vector<std::string> labels, std::vector<int64_t> extents)
        : s_(s), stage_(stage), labels_(std::move(labels)) {
        for (size_t i = 0; i < labels_.size(); ++i) extent_[labels_[i]] = extents[i];
    }
    int pos(const std::string& label) const {
        return int(std::find(labels_.begin(), labels_.end(), label) - labels_.begin());
    }
    int64_t extent(const std::string& label) const { return extent_.at(label); }
    const std::vector<std::string>& labels() const { return labels_; }
    // Splits `label` into label0 .. label<n-1> with `factors` (outermost first); returns the
    // index of the first SplitStep (the one that splits off the outermost level).
    int split(const std::string& label, const std::vector<int64_t>& factors) {
        int first_step = int(s_->steps().size());
        std::string rest = label;
        for (size_t l = 0; l + 1 < factors.size(); ++l) {
            int64_t inner = 1;
            for (size_t m = l + 1; m < factors.size(); ++m) inner *= factors[m];
            int p = pos(rest);
            s_->split(stage_, p, inner);
            std::string outer = label + std::to_string(l), next = label + "_" + std::to_string(l);
            replace(p, {outer, l + 2 == factors.size() ? label + std::to_string(l + 1) : next},
                    {factors[l], inner});
            rest = next;
        }
        return first_step;
    }
    // follow_split of `label` by the split at step `src` with inner extent `inner`.
    void follow(const std::string& label, int src, int64_t inner) {
        int p = pos(label);
        s_->follow_split(stage_, p, src);
        replace(p, {label + "0", label + "'"}, {extent(label) / inner, inner});
    }
    void reorder(const std::vector<std::string>& order) {
        std::vector<int> perm;
        for (const std::string& l : order) perm.push_back(pos(l));
        s_->reorder(stage_, perm);
        labels_ = order;
    }
    std::string fuse(const std::string& a, const std::string& b) {
        int p = pos(a);
        s_->fuse(stage_, {p, p + 1});
        std::string f = a + "." + b;
        replace(p, {f}, {extent(a) * extent(b)});
        labels_.erase(labels_.begin() + p + 1);
        return f;
    }

private:
    void replace(int p, std::vector<std::string> with, std::vector<int64_t> extents) {
        labels_.erase(labels_.begin() + p);
        labels_.insert(labels_.begin() + p, with.begin(), with.end());
        for (size_t i = 0; i < with.size(); ++i) extent_[with[i]] = extents[i];
    }
    Schedule* s_;
    int stage_;
    std::vector<std::string> labels_;
    std::map<std::string, int64_t> extent_;
};

// Sometimes shuffles the loops after the first `keep` of an SSRSRS order.
std::vector<std::string> perturb(std::vector<std::string> order, size_t keep, Rng& rng) {
    if (chance(rng, 0.3)) std::shuffle(order.begin() + long(keep), order.end(), rng);
    return order;
}

// The annotations of a tiled nest: fuse the first two loops and run them in parallel (a root
// stage only), vectorise the innermost loop (split first when it is long), unroll the loop
// before it, set an auto-unroll pragma.
void annotate(Schedule* s, int stage, Nest* nest, bool root, Rng& rng) {
    std::vector<std::string> l = nest->labels();
    if (root && chance(rng, 0.85)) s->parallel(stage, nest->pos(nest->fuse(l[0], l[1])));
    std::string last = nest->labels().back();
    if (nest->extent(last) > 64) {
        nest->split(last, random_factors(nest->extent(last), 2, rng));
        last = nest->labels().back();
    }
    std::string before = nest->labels()[nest->labels().size() - 2];
    if (chance(rng, 0.8)) s->vectorize(stage, nest->pos(last));
    if (chance(rng, 0.5) && nest->extent(before) <= 64) s->unroll(stage, nest->pos(before));
    int64_t step = pick(rng, std::vector<int64_t>{0, 0, 16, 64, 512});
    if (step) s->pragma_auto_unroll(stage, step);
}

// GEMM: C[i, j] = sum_k A[i, k] B[k, j], SSRSRS-tiled, with or without a local write cache.
Schedule random_gemm(const SearchTask& task, Rng& rng) {
    Schedule s = task.initial_schedule();
    int64_t m = std::get<int64_t>(task.params()[0]), n = std::get<int64_t>(task.params()[1]),
            k = std::get<int64_t>(task.params()[2]);
    int c = s.stage_of(task.dag().outputs[0]);
    bool cache = chance(rng, 0.5);
    int t = cache ? s.cache_write(c, "local") : c;
    Nest nest(&s, t, {"i", "j", "k"}, {m, n, k});
    std::vector<int64_t> fi = random_factors(m, 4, rng), fj = random_factors(n, 4, rng);
    int si = nest.split("i", fi), sj = nest.split("j", fj);
    nest.split("k", random_factors(k, 2, rng));
    nest.reorder(perturb({"i0", "j0", "i1", "j1", "k0", "i2", "j2", "k1", "i3", "j3"}, 2, rng));
    if (!cache) {
        annotate(&s, t, &nest, true, rng);
        return s;
    }
    if (chance(rng, 0.8) && nest.extent(nest.labels().back()) <= 64)
        s.vectorize(t, nest.pos(nest.labels().back()));
    Nest out(&s, t + 1, {"i", "j"}, {m, n});
    out.follow("i", si, m / fi[0]);
    out.follow("j", sj, n / fj[0]);
    out.reorder({"i0", "j0", "i'", "j'"});
    s.compute_at(t, t + 1, 1);
    annotate(&s, t + 1, &out, true, rng);
    return s;
}

// conv2d (NCHW, padding stage, ReLU): the padding inlined or not, the convolution tiled at the
// root or computed at the ReLU's tile.
Schedule random_conv2d(const SearchTask& task, Rng& rng) {
    Schedule s = task.initial_schedule();
    const Tensor& relu = task.dag().outputs[0];
    int r = s.stage_of(relu), c = r - 1;  // stages: X, pad, W, conv, relu
    if (chance(rng, 0.6)) s.compute_inline(1);
    std::vector<int64_t> shape;
    for (const Expr& e : relu.shape()) shape.push_back(*as_const_int(e));
    int64_t channels = std::get<int64_t>(task.params()[1]);
    int64_t kernel = std::get<int64_t>(task.params()[5]);
    Nest out(&s, r, {"b", "f", "y", "x"}, shape);
    std::vector<int64_t> region = shape;  // the convolution's loop extents
    bool at_relu = chance(rng, 0.5);
    if (at_relu) {
        out.split("f", random_factors(shape[1], 2, rng));
        out.split("y", random_factors(shape[2], 2, rng));
        out.split("x", random_factors(shape[3], 2, rng));
        out.reorder({"b", "f0", "y0", "x0", "f1", "y1", "x1"});
        int at = pick(rng, std::vector<int>{2, 3});  // at y0 or at x0
        s.compute_at(c, r, at);
        region = {1, out.extent("f1"), out.extent("y1"), at == 3 ? out.extent("x1") : shape[3]};
    }
    Nest nest(&s, c, {"b", "f", "y", "x", "rc", "ry", "rx"},
              {region[0], region[1], region[2], region[3], channels, kernel, kernel});
    nest.split("f", random_factors(region[1], 3, rng));
    nest.split("x", random_factors(region[3], 3, rng));
    nest.split("rc", random_factors(channels, 2, rng));
    nest.reorder(
        perturb({"b", "f0", "y", "x0", "f1", "x1", "rc0", "ry", "rx", "rc1", "f2", "x2"}, 4, rng));
    annotate(&s, c, &nest, !at_relu, rng);
    if (!at_relu) {
        annotate(&s, r, &out, true, rng);
    } else {
        s.parallel(r, out.pos(out.fuse("b", "f0")));
        if (chance(rng, 0.8) && out.extent("x1") <= 64) s.vectorize(r, out.pos("x1"));
    }
    return s;
}

}  // namespace

Schedule random_schedule(const SearchTask& task, std::mt19937_64& rng) {
    if (task.workload_name() == "matmul") return random_gemm(task, rng);
    return random_conv2d(task, rng);
}

}  // namespace tessel::bench
