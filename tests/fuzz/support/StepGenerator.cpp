// The random step generator (see StepGenerator.h).
#include "fuzz/support/StepGenerator.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>
#include <tuple>
#include <vector>

#include "fuzz/support/FuzzCase.h"
#include "tessel/Error.h"
#include "tessel/te/Operation.h"

namespace tessel::fuzz {

struct StepGenerator::Attempt {
    std::string kind;  ///< the stats key: the primitive's name
    std::string call;  ///< the call as text, for messages
    std::function<void(Schedule&)> apply;
    int splits = 0, non_dividing = 0;  ///< constant-extent splits in this call
    std::vector<TailStrategy> tails;
};

namespace {

// Everything a primitive may change: the steps, every stage's loops, location and pragma.
std::string snapshot(const Schedule& s) {
    std::ostringstream os;
    os << steps_to_json(s.steps()) << "\n";
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        os << s.loop_nest_string(static_cast<int>(i)) << static_cast<int>(st.attach) << " "
           << st.attach_stage << " " << st.attach_iter << " " << st.auto_unroll_max_step << " "
           << st.iters.size() << " " << st.relations.size() << " " << scope_name(st.scope) << " "
           << st.op.get() << " " << st.dag_op.get();
        for (const StorageDim& d : st.storage)
            os << " " << static_cast<int>(d.part) << "/" << d.axis << "/" << d.factor << "/"
               << d.align_factor << "/" << d.align_offset;
        os << "\n";
    }
    return os.str();
}

std::string join(const std::vector<int>& v) {
    std::string r = "[";
    for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
    return r + "]";
}

int num_leaves(const Schedule& s, int stage) {
    if (stage < 0 || stage >= static_cast<int>(s.stages().size())) return 0;
    return static_cast<int>(s.stages()[stage].leaf.size());
}

// For a valid split of a constant extent: whether `factor` (or nparts) divides it.
std::optional<bool> split_divides(const Schedule& s, int stage, int leaf, int64_t factor) {
    if (leaf < 0 || leaf >= num_leaves(s, stage) || factor <= 0) return std::nullopt;
    auto ext = s.stages()[stage].iters[s.stages()[stage].leaf[leaf]].const_extent();
    if (!ext) return std::nullopt;
    return *ext % factor == 0;
}

}  // namespace

int StepGenerator::pick(int n) {
    return n <= 1 ? 0 : static_cast<int>(rng_() % static_cast<uint64_t>(n));
}

int StepGenerator::random_stage(const Schedule& s) {
    int n = static_cast<int>(s.stages().size());
    if (pick(40) == 0) return pick(n + 2) - 1;  // sometimes a placeholder or out of range
    std::vector<int> computes;
    for (int i = 0; i < n; ++i)
        if (as_compute(s.stages()[i].op)) computes.push_back(i);
    return computes[pick(static_cast<int>(computes.size()))];
}

int StepGenerator::random_leaf(const Schedule& s, int stage) {
    int n = num_leaves(s, stage);
    if (n == 0 || pick(40) == 0) return pick(2) ? -1 : n;  // out of range
    return pick(n);
}

int64_t StepGenerator::random_factor(const Schedule& s, int stage, int leaf) {
    static const int64_t kSmall[] = {1, 2, 3, 4, 5, 7, 8, 16};
    if (pick(50) == 0) return pick(2) ? 0 : -3;  // illegal
    std::optional<int64_t> ext;
    if (leaf >= 0 && leaf < num_leaves(s, stage))
        ext = s.stages()[stage].iters[s.stages()[stage].leaf[leaf]].const_extent();
    if (!ext || pick(2) == 0) return kSmall[pick(static_cast<int>(std::size(kSmall)))];
    switch (pick(4)) {
        case 0: return *ext;
        case 1: return *ext + 1 + pick(3);
        default: return 1 + pick(static_cast<int>(*ext));
    }
}

TailStrategy StepGenerator::random_tail() {
    int r = pick(10);
    return r < 6 ? TailStrategy::Guard : r < 8 ? TailStrategy::ShiftInwards : TailStrategy::RoundUp;
}

// An attempt without splits.
StepGenerator::Attempt StepGenerator::simple(std::string kind, std::string call,
                                             std::function<void(Schedule&)> apply) {
    Attempt a;
    a.kind = std::move(kind);
    a.call = std::move(call);
    a.apply = std::move(apply);
    return a;
}

StepGenerator::Attempt StepGenerator::split_attempt(const Schedule& s, int stage, bool nparts) {
    int leaf = random_leaf(s, stage);
    int64_t f = random_factor(s, stage, leaf);
    TailStrategy tail = random_tail();
    Attempt a;
    a.kind = nparts ? "split_nparts" : "split";
    a.call = a.kind + "(" + std::to_string(stage) + ", " + std::to_string(leaf) + ", " +
             std::to_string(f) + ", " + tail_strategy_name(tail) + ")";
    a.apply = [=](Schedule& sch) {
        if (nparts)
            sch.split_nparts(stage, leaf, f, tail);
        else
            sch.split(stage, leaf, f, tail);
    };
    if (auto d = split_divides(s, stage, leaf, f)) {
        a.splits = 1;
        a.non_dividing = *d ? 0 : 1;
    }
    a.tails = {tail};
    return a;
}

StepGenerator::Attempt StepGenerator::tile_attempt(const Schedule& s, int stage) {
    int n = num_leaves(s, stage);
    int x = n >= 2 && pick(20) != 0 ? pick(n - 1) : random_leaf(s, stage);
    int64_t fx = random_factor(s, stage, x), fy = random_factor(s, stage, x + 1);
    Attempt a;
    a.kind = "tile";
    a.call = "tile(" + std::to_string(stage) + ", " + std::to_string(x) + ", " +
             std::to_string(x + 1) + ", " + std::to_string(fx) + ", " + std::to_string(fy) + ")";
    a.apply = [=](Schedule& sch) { sch.tile(stage, x, x + 1, fx, fy); };
    for (auto [leaf, f] : {std::pair{x, fx}, std::pair{x + 1, fy}}) {
        if (auto d = split_divides(s, stage, leaf, f)) {
            a.splits += 1;
            a.non_dividing += *d ? 0 : 1;
            a.tails.push_back(TailStrategy::Guard);
        }
    }
    return a;
}

StepGenerator::Attempt StepGenerator::fuse_attempt(const Schedule& s, int stage) {
    int n = num_leaves(s, stage);
    std::vector<int> iters;
    if (n >= 2 && pick(20) != 0) {
        int first = pick(n - 1);
        int len = 2 + pick(std::min(2, n - first - 1));
        for (int k = 0; k < len; ++k) iters.push_back(first + k);
    } else {  // illegal: not adjacent, a single leaf, or out of range
        iters = {random_leaf(s, stage), random_leaf(s, stage) + 2};
    }
    Attempt a;
    a.kind = "fuse";
    a.call = "fuse(" + std::to_string(stage) + ", " + join(iters) + ")";
    a.apply = [=](Schedule& sch) { sch.fuse(stage, iters); };
    return a;
}

StepGenerator::Attempt StepGenerator::reorder_attempt(const Schedule& s, int stage) {
    int n = num_leaves(s, stage);
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    int mode = pick(20);
    if (mode < 9 && n >= 2) {
        int i = pick(n - 1);
        std::swap(order[i], order[i + 1]);
    } else if (mode < 19) {
        std::shuffle(order.begin(), order.end(), rng_);
    } else if (n > 0) {  // illegal: a duplicate
        order[pick(n)] = order[pick(n)];
    }
    Attempt a;
    a.kind = "reorder";
    a.call = "reorder(" + std::to_string(stage) + ", " + join(order) + ")";
    a.apply = [=](Schedule& sch) { sch.reorder(stage, order); };
    return a;
}

StepGenerator::Attempt StepGenerator::annotate_attempt(const Schedule& s, int stage,
                                                       IterAnnotation ann) {
    int n = num_leaves(s, stage);
    int leaf = random_leaf(s, stage);
    // Vectorize mostly the innermost loop, parallel mostly the outermost.
    if (ann == IterAnnotation::Vectorize && n > 0 && pick(3) != 0) leaf = n - 1;
    if (ann == IterAnnotation::Parallel && n > 0 && pick(3) != 0) leaf = 0;
    Attempt a;
    a.kind = annotation_name(ann);
    a.call = a.kind + "(" + std::to_string(stage) + ", " + std::to_string(leaf) + ")";
    a.apply = [=](Schedule& sch) { sch.annotate(stage, leaf, ann); };
    return a;
}

// bind: mostly the outer loops to blockIdx, the next ones to threadIdx, in the order GPU
// schedules use; sometimes any axis on any loop (often rejected, at the call or when lowering).
StepGenerator::Attempt StepGenerator::bind_attempt(const Schedule& s, int stage) {
    static const IterAnnotation kAxes[] = {IterAnnotation::BlockX,  IterAnnotation::BlockY,
                                           IterAnnotation::BlockZ,  IterAnnotation::ThreadX,
                                           IterAnnotation::ThreadY, IterAnnotation::ThreadZ};
    int n = num_leaves(s, stage);
    int leaf = random_leaf(s, stage);
    IterAnnotation axis = kAxes[pick(6)];
    if (n > 0 && pick(3) != 0) {
        leaf = pick(std::min(n, 4));
        axis = leaf == 0   ? IterAnnotation::BlockX
               : leaf == 1 ? IterAnnotation::ThreadX
                           : kAxes[3 + pick(3)];
    }
    Attempt a;
    a.kind = "bind";
    a.call = "bind(" + std::to_string(stage) + ", " + std::to_string(leaf) + ", " +
             annotation_name(axis) + ")";
    a.apply = [=](Schedule& sch) { sch.bind(stage, leaf, axis); };
    return a;
}

// A cross-thread reduction: a reduction leaf of a reduction stage bound to threadIdx.
StepGenerator::Attempt StepGenerator::cross_thread_attempt(const Schedule& s, int stage) {
    std::vector<int> reductions;
    if (stage >= 0 && stage < static_cast<int>(s.stages().size())) {
        const Stage& st = s.stages()[stage];
        for (size_t pos = 0; pos < st.leaf.size(); ++pos)
            if (st.iters[st.leaf[pos]].kind == IterKind::Reduction)
                reductions.push_back(static_cast<int>(pos));
    }
    int leaf = reductions.empty() ? random_leaf(s, stage)
                                  : reductions[pick(static_cast<int>(reductions.size()))];
    IterAnnotation axis = pick(4) == 0 ? IterAnnotation::ThreadY : IterAnnotation::ThreadX;
    if (pick(20) == 0) axis = IterAnnotation::BlockX;  // illegal on a reduction axis
    Attempt a;
    a.kind = "cross_thread_reduction";
    a.call = "bind(" + std::to_string(stage) + ", " + std::to_string(leaf) + ", " +
             annotation_name(axis) + ")";
    a.apply = [=](Schedule& sch) { sch.bind(stage, leaf, axis); };
    return a;
}

StepGenerator::Attempt StepGenerator::set_scope_attempt(int stage) {
    static const StorageScope kScopes[] = {StorageScope::Shared, StorageScope::Local,
                                           StorageScope::Global};
    StorageScope scope = kScopes[pick(3)];
    return simple("set_scope",
                  "set_scope(" + std::to_string(stage) + ", " + scope_name(scope) + ")",
                  [=](Schedule& sch) { sch.set_scope(stage, scope); });
}

StepGenerator::Attempt StepGenerator::compute_at_attempt(const Schedule& s, int stage) {
    // Mostly a stage that reads this one (directly), else any stage.
    std::vector<int> readers;
    if (stage >= 0 && stage < static_cast<int>(s.stages().size())) {
        for (size_t i = 0; i < s.stages().size(); ++i)
            for (const Tensor& t : op_inputs(s.stages()[i].op))
                if (t.op().same_as(s.stages()[stage].op)) readers.push_back(static_cast<int>(i));
    }
    int target = !readers.empty() && pick(5) != 0 ? readers[pick(static_cast<int>(readers.size()))]
                                                  : random_stage(s);
    int leaf = random_leaf(s, target);
    Attempt a;
    a.kind = "compute_at";
    a.call = "compute_at(" + std::to_string(stage) + ", " + std::to_string(target) + ", " +
             std::to_string(leaf) + ")";
    a.apply = [=](Schedule& sch) { sch.compute_at(stage, target, leaf); };
    return a;
}

std::string StepGenerator::random_scope() {
    static const char* kScopes[] = {"global", "shared", "local"};
    if (pick(60) == 0) return "texture";  // illegal
    return kScopes[pick(3)];
}

StepGenerator::Attempt StepGenerator::cache_read_attempt(const Schedule& s) {
    // Mostly a tensor (often a placeholder) with readers, and a random non-empty subset of them.
    int n = static_cast<int>(s.stages().size());
    int stage = pick(n);
    std::vector<int> readers;
    for (int i = 0; i < n; ++i)
        for (const Tensor& t : op_inputs(s.stages()[i].op))
            if (t.op().same_as(s.stages()[stage].op)) {
                if (readers.empty() || pick(2) == 0) readers.push_back(i);
                break;
            }
    if (readers.empty() || pick(30) == 0) readers.push_back(pick(n + 1));  // maybe a non-reader
    std::string scope = random_scope();
    Attempt a =
        simple("cache_read",
               "cache_read(" + std::to_string(stage) + ", " + scope + ", " + join(readers) + ")",
               [=](Schedule& sch) { sch.cache_read(stage, scope, readers); });
    return a;
}

StepGenerator::Attempt StepGenerator::cache_write_attempt(const Schedule& s, int stage) {
    (void)s;
    std::string scope = random_scope();
    return simple("cache_write", "cache_write(" + std::to_string(stage) + ", " + scope + ")",
                  [=](Schedule& sch) { sch.cache_write(stage, scope); });
}

StepGenerator::Attempt StepGenerator::storage_attempt(const Schedule& s, int stage) {
    int dims = stage >= 0 && stage < static_cast<int>(s.stages().size())
                   ? static_cast<int>(s.stages()[stage].storage.size())
                   : 0;
    int dim = dims > 0 && pick(30) != 0 ? pick(dims) : dims;  // sometimes out of range
    std::string st = std::to_string(stage);
    switch (pick(3)) {
        case 0: {
            static const int64_t kFactors[] = {1, 2, 3, 4, 8, 16, 0};
            int64_t f = kFactors[pick(static_cast<int>(std::size(kFactors)))];
            return simple(
                "storage_split",
                "storage_split(" + st + ", " + std::to_string(dim) + ", " + std::to_string(f) + ")",
                [=](Schedule& sch) { sch.storage_split(stage, dim, f); });
        }
        case 1: {
            std::vector<int> order(dims);
            std::iota(order.begin(), order.end(), 0);
            std::shuffle(order.begin(), order.end(), rng_);
            if (dims > 0 && pick(30) == 0) order[pick(dims)] = order[pick(dims)];  // illegal
            return simple("storage_reorder", "storage_reorder(" + st + ", " + join(order) + ")",
                          [=](Schedule& sch) { sch.storage_reorder(stage, order); });
        }
        default: {
            static const int64_t kFactors[] = {1, 2, 4, 5, 8, 16, 32, 0, -4};
            int64_t f = kFactors[pick(static_cast<int>(std::size(kFactors)))];
            int64_t off = f > 0 ? pick(static_cast<int>(f) + (pick(30) == 0 ? 1 : 0)) : 0;
            return simple("storage_align",
                          "storage_align(" + st + ", " + std::to_string(dim) + ", " +
                              std::to_string(f) + ", " + std::to_string(off) + ")",
                          [=](Schedule& sch) { sch.storage_align(stage, dim, f, off); });
        }
    }
}

StepGenerator::Attempt StepGenerator::follow_split_attempt(const Schedule& s, int stage) {
    // Mostly an earlier split step (Ansor's follow_split), sometimes another step or none.
    std::vector<int> splits;
    for (size_t i = 0; i < s.steps().size(); ++i)
        if (std::holds_alternative<SplitStep>(s.steps()[i])) splits.push_back(static_cast<int>(i));
    int src = !splits.empty() && pick(10) != 0 ? splits[pick(static_cast<int>(splits.size()))]
                                               : pick(static_cast<int>(s.steps().size()) + 1);
    int leaf = random_leaf(s, stage);
    Attempt a = simple("follow_split",
                       "follow_split(" + std::to_string(stage) + ", " + std::to_string(leaf) +
                           ", " + std::to_string(src) + ")",
                       [=](Schedule& sch) { sch.follow_split(stage, leaf, src); });
    if (src >= 0 && src < static_cast<int>(s.steps().size()))
        if (const auto* sp = std::get_if<SplitStep>(&s.steps()[src])) {
            if (auto d = split_divides(s, stage, leaf, sp->factor); d && !sp->by_nparts) {
                a.splits = 1;
                a.non_dividing = *d ? 0 : 1;
            }
            a.tails = {sp->tail};
        }
    return a;
}

StepGenerator::Attempt StepGenerator::rfactor_attempt(const Schedule& s, int stage) {
    // Mostly a part of a split root reduction axis of any stage (the legal case), else a random
    // leaf of `stage`.
    std::vector<std::pair<int, int>> legal;  // (stage, leaf)
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        for (size_t p = 0; p < st.leaf.size(); ++p)
            for (const IterRelation& r : st.relations)
                if (r.kind == IterRelation::Kind::Split &&
                    (r.outer == st.leaf[p] || r.inner == st.leaf[p]) &&
                    st.iters[st.leaf[p]].kind == IterKind::Reduction &&
                    std::find(st.root.begin(), st.root.end(), r.parent) != st.root.end())
                    legal.emplace_back(static_cast<int>(i), static_cast<int>(p));
    }
    // Without one, mostly split a root reduction leaf first (split and rfactor as one attempt).
    std::vector<std::pair<int, int>> roots;
    for (size_t i = 0; i < s.stages().size(); ++i) {
        const Stage& st = s.stages()[i];
        for (size_t p = 0; p < st.leaf.size(); ++p)
            if (st.iters[st.leaf[p]].kind == IterKind::Reduction &&
                std::find(st.root.begin(), st.root.end(), st.leaf[p]) != st.root.end())
                roots.emplace_back(static_cast<int>(i), static_cast<int>(p));
    }
    int leaf;
    int64_t presplit = 0;
    if (!legal.empty() && pick(4) != 0) {
        std::tie(stage, leaf) = legal[pick(static_cast<int>(legal.size()))];
    } else if (!roots.empty() && pick(4) != 0) {
        std::tie(stage, leaf) = roots[pick(static_cast<int>(roots.size()))];
        presplit = random_factor(s, stage, leaf);
    } else {
        leaf = random_leaf(s, stage);
    }
    int axes = 0;
    if (stage >= 0 && stage < static_cast<int>(s.stages().size()))
        if (const ComputeOpNode* c = as_compute(s.stages()[stage].op))
            axes = static_cast<int>(c->axis.size());
    int factor_axis = pick(30) == 0 ? axes + 1 : pick(axes + 1);
    if (presplit != 0) {
        int part = leaf + pick(2);
        Attempt a =
            simple("rfactor",
                   "split(" + std::to_string(stage) + ", " + std::to_string(leaf) + ", " +
                       std::to_string(presplit) + ") + rfactor(" + std::to_string(stage) + ", " +
                       std::to_string(part) + ", " + std::to_string(factor_axis) + ")",
                   [=](Schedule& sch) {
                       Schedule next = sch;  // both steps or neither
                       next.split(stage, leaf, presplit);
                       next.rfactor(stage, part, factor_axis);
                       sch = next;
                   });
        if (auto d = split_divides(s, stage, leaf, presplit)) {
            a.splits = 1;
            a.non_dividing = *d ? 0 : 1;
            a.tails = {TailStrategy::Guard};
        }
        return a;
    }
    return simple("rfactor",
                  "rfactor(" + std::to_string(stage) + ", " + std::to_string(leaf) + ", " +
                      std::to_string(factor_axis) + ")",
                  [=](Schedule& sch) { sch.rfactor(stage, leaf, factor_axis); });
}

StepGenerator::Attempt StepGenerator::random_attempt(const Schedule& s) {
    int stage = random_stage(s);
    // Compute-location primitives mostly move intermediate stages.
    std::vector<int> inner;
    for (size_t i = 0; i < s.stages().size(); ++i)
        if (as_compute(s.stages()[i].op) && !s.stages()[i].is_output)
            inner.push_back(static_cast<int>(i));
    int moved =
        !inner.empty() && pick(6) != 0 ? inner[pick(static_cast<int>(inner.size()))] : stage;
    // Weights in the order of the cases below.
    static const int kCpuWeights[] = {20, 8, 6, 8, 10, 8, 6, 6, 3, 15, 8,
                                      4,  8, 3, 4, 4,  6, 4, 8, 3, 5};
    static const int kGpuWeights[] = {20, 6, 6, 8, 8, 6,  6, 0, 2, 15, 8,
                                      3,  2, 4, 8, 6, 10, 6, 3, 3, 8};
    const int* weights = mix_ == StepMix::Gpu ? kGpuWeights : kCpuWeights;
    int total = std::accumulate(weights, weights + std::size(kCpuWeights), 0);
    int r = pick(total), kind = 0;
    while (r >= weights[kind]) r -= weights[kind++];
    switch (kind) {
        case 0: return split_attempt(s, stage, false);
        case 1: return split_attempt(s, stage, true);
        case 2: return tile_attempt(s, stage);
        case 3: return fuse_attempt(s, stage);
        case 4: return reorder_attempt(s, stage);
        case 5: return annotate_attempt(s, stage, IterAnnotation::Vectorize);
        case 6: return annotate_attempt(s, stage, IterAnnotation::Unroll);
        case 7: return annotate_attempt(s, stage, IterAnnotation::Parallel);
        case 8: {
            static const int64_t kSteps[] = {0, 1, 4, 16, 64, 512, 513, -1};
            int64_t v = kSteps[pick(static_cast<int>(std::size(kSteps)))];
            std::string call =
                "pragma_auto_unroll(" + std::to_string(stage) + ", " + std::to_string(v) + ")";
            return simple("pragma", call, [=](Schedule& sch) { sch.pragma_auto_unroll(stage, v); });
        }
        case 9: return compute_at_attempt(s, moved);
        case 10:
            return simple("compute_inline", "compute_inline(" + std::to_string(moved) + ")",
                          [=](Schedule& sch) { sch.compute_inline(moved); });
        case 12: return bind_attempt(s, stage);
        case 13: return annotate_attempt(s, stage, IterAnnotation::VThread);
        case 14: return cross_thread_attempt(s, stage);
        case 15: return set_scope_attempt(moved);
        case 11:
            return simple("compute_root", "compute_root(" + std::to_string(moved) + ")",
                          [=](Schedule& sch) { sch.compute_root(moved); });
        case 16: return cache_read_attempt(s);
        case 17: return cache_write_attempt(s, stage);
        case 18: return storage_attempt(s, moved);
        case 19: return follow_split_attempt(s, stage);
        default: return rfactor_attempt(s, stage);
    }
}

void StepGenerator::apply_random(Schedule& s, int count) {
    for (int k = 0; k < count; ++k) {
        Attempt a = random_attempt(s);
        last_ = a.call;
        std::string before = snapshot(s);
        try {
            a.apply(s);
        } catch (const ScheduleError& e) {
            ++stats_->rejected[a.kind];
            if (snapshot(s) != before)
                throw FuzzCheckFailed(
                    "rejected_step_changed_schedule",
                    a.call + " threw ScheduleError but changed the schedule: " + e.what());
            continue;
        }
        ++stats_->applied[a.kind];
        stats_->splits += a.splits;
        stats_->non_dividing += a.non_dividing;
        for (TailStrategy t : a.tails) ++stats_->tails[tail_strategy_name(t)];
    }
}

void StepStats::merge(const StepStats& o) {
    for (const auto& [k, v] : o.applied) applied[k] += v;
    for (const auto& [k, v] : o.rejected) rejected[k] += v;
    for (const auto& [k, v] : o.tails) tails[k] += v;
    splits += o.splits;
    non_dividing += o.non_dividing;
}

int64_t StepStats::total_applied() const {
    int64_t n = 0;
    for (const auto& [k, v] : applied) n += v;
    return n;
}

int64_t StepStats::total_rejected() const {
    int64_t n = 0;
    for (const auto& [k, v] : rejected) n += v;
    return n;
}

std::string StepStats::report() const {
    std::map<std::string, int> kinds;
    for (const auto& [k, v] : applied) kinds[k] = 0;
    for (const auto& [k, v] : rejected) kinds[k] = 0;
    auto get = [](const std::map<std::string, int64_t>& m, const std::string& k) {
        auto it = m.find(k);
        return it == m.end() ? int64_t(0) : it->second;
    };
    auto pct = [](int64_t a, int64_t b) { return b == 0 ? 0.0 : 100.0 * double(a) / double(b); };
    std::ostringstream os;
    char line[160];
    std::snprintf(line, sizeof line, "  %-16s %9s %9s %8s\n", "primitive", "applied", "rejected",
                  "reject%");
    os << line;
    for (const auto& [k, unused] : kinds) {
        int64_t ap = get(applied, k), rj = get(rejected, k);
        std::snprintf(line, sizeof line, "  %-16s %9lld %9lld %7.1f%%\n", k.c_str(), (long long)ap,
                      (long long)rj, pct(rj, ap + rj));
        os << line;
    }
    int64_t ap = total_applied(), rj = total_rejected();
    std::snprintf(line, sizeof line, "  %-16s %9lld %9lld %7.1f%%\n", "total", (long long)ap,
                  (long long)rj, pct(rj, ap + rj));
    os << line;
    std::snprintf(line, sizeof line,
                  "  non-dividing split factors: %lld of %lld applied splits (%.1f%%)\n",
                  (long long)non_dividing, (long long)splits, pct(non_dividing, splits));
    os << line << "  tail strategies of applied splits:";
    for (const auto& [k, v] : tails) os << " " << k << "=" << v;
    os << "\n";
    return os.str();
}

}  // namespace tessel::fuzz
