// Annotation of a blocked-tile sketch (SketchBlocked.cpp): the register check of the tile the
// lengths drew. The lengths are drawn as every sketch's (fill_tile_sizes) and mutated as every
// tile group's; the sketch made the loops parallel, unrolled and vectorised.
#include "AnnotateUtil.h"

namespace tessel::internal {

void annotate_blocked(AnnotateContext& a) {
    const Schedule& s = a.schedule;
    for (int q = 0; q < static_cast<int>(s.stages().size()); ++q) {
        if (a.sketch.stages[q].kind != SketchStageKind::BlockedOutput) continue;
        // The output's last leaves: [..., m blocks, ut columns, block (vectorised)].
        const Stage& st = s.stage(q);
        const int n = static_cast<int>(st.leaf.size());
        if (n < 3) continue;
        auto leaf = [&](int pos) {
            return st.iters[st.leaf[static_cast<size_t>(pos)]].const_extent().value_or(0);
        };
        const int64_t lanes = a.space.task().target().vector_lanes(op_output(st.op, 0).dtype());
        if (lanes <= 0 || leaf(n - 1) % lanes != 0) continue;
        check_register_tile(s, q, "blocked", leaf(n - 2), leaf(n - 3) * (leaf(n - 1) / lanes),
                            lanes);
    }
}

}  // namespace tessel::internal
