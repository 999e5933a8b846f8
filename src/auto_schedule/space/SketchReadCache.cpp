// The GPU register read-cache rule, cache_read_local: a tiled stage's shared tiles are also copied
// into registers ("local" scope) at its innermost reduction loop, a thread's slice of each tile per
// step of the reduction, as tutorials/05_gpu_gemm.py step 4 does with AL and BL (MetaSchedule's
// MultiLevelTiling reads through "local" caches the same way with reuse_read). Annotation
// (AnnotateReadCache.cpp) vectorises the copies and chooses the shared tiles' layouts.
//
// The rule is tried on a producer right after cache_read_shared made its shared tile. The first
// producer of a tiled stage decides for all of them: the sketch branches into one without read
// caches (the plain sketch, unchanged) and one with them; the stage's other producers follow that
// decision (SketchStage::read_caches), so a GEMM gets two sketches, not four.
#include "SketchUtil.h"
#include "tessel/auto_schedule/space/Sketch.h"

namespace tessel::internal {

namespace {

// The shared tile `st`'s fetch is copied into (its SharedFetch reader), or -1.
int shared_tile_of(const Sketch& sk, int st) {
    for (int r : direct_readers(sk.schedule, st))
        if (sk.stages[r].kind == SketchStageKind::SharedFetch) return r;
    return -1;
}

// The tiled stage shared tile `shared` is computed in, when it may take read caches; or -1.
int read_cache_consumer(const Sketch& sk, int shared) {
    const Stage& st = sk.schedule.stage(shared);
    if (st.attach != AttachKind::At) return -1;
    const SketchStage& info = sk.stages[st.attach_stage];
    if (info.kind != SketchStageKind::Tiled || info.read_cache_at < 0 ||
        info.read_caches == ReadCaches::Without)
        return -1;
    for (int r : direct_readers(sk.schedule, shared))
        if (sk.stages[r].kind == SketchStageKind::ReadCache) return -1;  // it has its cache
    return st.attach_stage;
}

RuleCondition read_cache_condition(const SketchContext& ctx, const Sketch& sk, int st) {
    SketchStageKind k = sk.stages[st].kind;
    if (!ctx.gpu() || (k != SketchStageKind::Plain && k != SketchStageKind::Placeholder))
        return RuleCondition::Skip;
    int shared = shared_tile_of(sk, st);
    return shared >= 0 && read_cache_consumer(sk, shared) >= 0 ? RuleCondition::ApplyAndSkipRest
                                                               : RuleCondition::Skip;
}

// Inserts the register copy of shared tile `shared` read by tiled stage `consumer`, computed at
// the consumer's innermost reduction loop. The shared tile goes to the root meanwhile: computed
// at the consumer, it could not lose its read to a cache at the root (cache_read refuses to
// break an attachment), and it is computed at its loop again once its cache is inside it.
void add_read_cache(Sketch& sk, int shared, int consumer) {
    Schedule& s = sk.schedule;
    const int fetch_at = sk.stages[consumer].fetch_at;
    s.compute_root(shared);
    int local = s.cache_read(shared, "local", {consumer});
    insert_sketch_stage(sk, local);
    if (consumer >= local) ++consumer;
    s.compute_at(local, consumer, sk.stages[consumer].read_cache_at);
    s.compute_at(shared, consumer, fetch_at);
    sk.stages[local].kind = SketchStageKind::ReadCache;
    sk.stages[consumer].read_caches = ReadCaches::With;
    sk.trace.push_back(s.stage(local).name() + ": cache_read_local");
}

std::vector<std::pair<Sketch, int>> read_cache_apply(const SketchContext&, const Sketch& in,
                                                     int st) {
    int shared = shared_tile_of(in, st);
    int consumer = read_cache_consumer(in, shared);
    std::vector<std::pair<Sketch, int>> out;
    if (in.stages[consumer].read_caches == ReadCaches::Undecided) {
        Sketch without = in;  // first: the plain sketch keeps its place among the sketches
        without.stages[consumer].read_caches = ReadCaches::Without;
        out.push_back({std::move(without), st});
    }
    Sketch with = in;
    add_read_cache(with, shared, consumer);
    out.push_back({std::move(with), st});  // the producer itself goes on through the rules
    return out;
}

}  // namespace

SketchRule read_cache_rule() {
    return {"cache_read_local", read_cache_condition, read_cache_apply};
}

}  // namespace tessel::internal
