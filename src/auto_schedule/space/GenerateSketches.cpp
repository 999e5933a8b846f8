// Sketch generation: the walk over the stages and the tiling helper the rules share (the rules
// themselves are in SketchRules.cpp).
#include <optional>
#include <set>
#include <sstream>

#include "SketchUtil.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/space/Sketch.h"

namespace tessel {

Sketch::Sketch(Schedule s) : schedule(std::move(s)) {
    stages.resize(schedule.stages().size());
    for (size_t i = 0; i < stages.size(); ++i)
        if (schedule.stages()[i].root.empty()) stages[i].kind = SketchStageKind::Placeholder;
}

StepResult Sketch::apply(const Step& step) {
    StepResult r = schedule.apply(step);
    if (const auto* re = std::get_if<ReindexStep>(&step)) {  // the gathers, then the product
        for (int k = re->stage; k <= r.new_stage; ++k) internal::insert_sketch_stage(*this, k);
    } else if (r.new_stage >= 0) {
        internal::insert_sketch_stage(*this, r.new_stage);
    }
    return r;
}

int SketchContext::dag_index(const Schedule& s, int stage) const {
    const Operation& op = s.stage(stage).dag_op;
    for (int i = 0; i < dag.num_ops(); ++i)
        if (dag.ops()[i].same_as(op)) return i;
    return -1;
}

std::vector<bool> SketchContext::inlined(const Schedule& s) const {
    std::vector<bool> out(dag.num_ops(), false);
    for (int st = 0; st < static_cast<int>(s.stages().size()); ++st) {
        if (s.stage(st).attach != AttachKind::Inlined) continue;
        if (int i = dag_index(s, st); i >= 0) out[i] = true;
    }
    return out;
}

namespace internal {

void insert_sketch_stage(Sketch& sk, int index) {
    sk.stages.insert(sk.stages.begin() + index, SketchStage{});
    for (TileGroup& g : sk.tiles)
        if (g.stage >= index) ++g.stage;
}

void check_tiling_structure(const std::string& structure) {
    bool s = false, r = false;
    for (char c : structure) {
        if (c != 'S' && c != 'R')
            TESSEL_THROW(ScheduleError) << "tiling structure '" << structure
                                        << "': only S (spatial) and R (reduction) levels";
        s = s || c == 'S';
        r = r || c == 'R';
    }
    if (!s || !r)
        TESSEL_THROW(ScheduleError)
            << "tiling structure '" << structure << "' needs at least one S and one R level";
}

int untouched_epilogue(const SketchContext& ctx, const Sketch& sk, int st) {
    const Schedule& s = sk.schedule;
    const int i = ctx.dag_index(s, st);
    const int op = i < 0 ? -1 : ctx.dag.elementwise_consumer(i, ctx.inlined(s));
    if (op < 0) return -1;
    int q = -1;
    for (int k = 0; k < static_cast<int>(s.stages().size()); ++k)
        if (s.stage(k).dag_op.same_as(ctx.dag.ops()[static_cast<size_t>(op)])) q = k;
    if (q < 0 || sk.stages[q].kind != SketchStageKind::Plain) return -1;
    const Stage& qs = s.stage(q);
    if (has_reduction_axes(qs) || qs.leaf != qs.root || qs.attach != AttachKind::Root) return -1;
    std::vector<std::optional<int64_t>> spatial;
    for (int id : s.stage(st).root)
        if (s.stage(st).iters[id].kind == IterKind::Spatial)
            spatial.push_back(s.stage(st).iters[id].const_extent());
    if (qs.root.size() != spatial.size()) return -1;
    for (size_t d = 0; d < spatial.size(); ++d)
        if (qs.iters[qs.root[d]].const_extent() != spatial[d]) return -1;
    return q;
}

int tile_output_stage(const SketchContext& ctx, Sketch& sk, int st) {
    if (!sk.schedule.stage(st).is_output) return untouched_epilogue(ctx, sk, st);
    sk.schedule.cache_write(st, "local");
    insert_sketch_stage(sk, st);
    return st + 1;
}

TileGroup split_levels(Sketch& sk, int stage, int pos, int levels, int64_t max_innermost) {
    Schedule& s = sk.schedule;
    const Stage& st = s.stage(stage);
    auto extent = st.iters[st.leaf[pos]].const_extent();
    if (!extent)
        TESSEL_THROW(ScheduleError) << "tiling: stage '" << st.name() << "' loop '"
                                    << st.iters[st.leaf[pos]].name << "' has a symbolic extent";
    TileGroup g{*extent, std::vector<int>(levels - 1), max_innermost, stage};
    for (int level = levels - 1; level >= 1; --level) {
        g.steps[level - 1] = static_cast<int>(s.steps().size());
        s.split(stage, pos, 1);
    }
    return g;
}

}  // namespace internal

void tile_stage(Sketch& sk, int stage, const std::string& structure, int64_t max_innermost) {
    internal::check_tiling_structure(structure);
    Schedule& s = sk.schedule;
    const Stage& st = s.stage(stage);
    int ns = 0, nr = 0;
    for (char c : structure) (c == 'S' ? ns : nr)++;
    std::vector<IterKind> kinds;
    for (int id : st.leaf) kinds.push_back(st.iters[id].kind);
    int n_sp = 0;
    while (n_sp < static_cast<int>(kinds.size()) && kinds[n_sp] == IterKind::Spatial) ++n_sp;
    for (size_t k = n_sp; k < kinds.size(); ++k)
        if (kinds[k] != IterKind::Reduction)
            TESSEL_THROW(ScheduleError) << "tiling: stage '" << st.name()
                                        << "': its loops are not data-parallel then reduction ones";
    int n_rd = static_cast<int>(kinds.size()) - n_sp;
    for (int pos = static_cast<int>(kinds.size()) - 1; pos >= 0; --pos) {
        bool spatial = pos < n_sp;
        sk.tiles.push_back(
            internal::split_levels(sk, stage, pos, spatial ? ns : nr, max_innermost));
    }
    // Leaf of (spatial axis a, level l): a * ns + l; (reduction axis b, level l): after them.
    std::vector<int> order;
    std::vector<std::vector<int>> levels;
    int sl = 0, rl = 0;
    for (char c : structure) {
        if (c == 'S') {
            levels.emplace_back();
            for (int a = 0; a < n_sp; ++a) {
                levels.back().push_back(static_cast<int>(order.size()));
                order.push_back(a * ns + sl);
            }
            ++sl;
        } else {
            for (int b = 0; b < n_rd; ++b) order.push_back(n_sp * ns + b * nr + rl);
            ++rl;
        }
    }
    s.reorder(stage, order);
    SketchStage& info = sk.stages[stage];
    info.kind = SketchStageKind::Tiled;
    info.levels = levels;
    info.unroll = true;
}

std::vector<Sketch> generate_sketches(const SearchTask& task, const SketchOptions& options) {
    internal::check_tiling_structure(options.cpu_tiling);
    internal::check_tiling_structure(options.gpu_tiling);
    DAGAnalysis dag(task.dag().outputs);
    SketchContext ctx{task, dag, options.cpu_tiling, options.gpu_tiling, options.tensor_core_tf32};
    std::vector<SketchRule> rules = options.rules;
    for (SketchRule& r : builtin_sketch_rules(task.target())) rules.push_back(std::move(r));

    Sketch first(task.initial_schedule());
    std::vector<std::pair<Sketch, int>> walk = {{first, first.schedule.stages().size() - 1}};
    std::vector<Sketch> done;
    std::set<std::string> seen;
    while (!walk.empty()) {
        std::vector<std::pair<Sketch, int>> next;
        for (auto& [sk, stage] : walk) {
            if (stage < 0) {
                if (seen.insert(sk.schedule.to_json()).second) done.push_back(std::move(sk));
                continue;
            }
            for (const SketchRule& rule : rules) {
                RuleCondition c = RuleCondition::Skip;
                std::vector<std::pair<Sketch, int>> made;
                try {
                    c = rule.condition(ctx, sk, stage);
                    if (c == RuleCondition::Skip) continue;
                    made = rule.apply(ctx, sk, stage);
                } catch (const ScheduleError&) {
                    continue;  // the rule does not fit this stage after all
                }
                for (auto& m : made) next.push_back(std::move(m));
                if (c == RuleCondition::ApplyAndSkipRest) break;
            }
        }
        walk = std::move(next);
    }
    return done;
}

}  // namespace tessel
