// VerifyThreadMapping (see include/tessel/lower/VerifyThreadMapping.h).
#include "tessel/lower/VerifyThreadMapping.h"

#include <map>
#include <sstream>

#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IRPrinter.h"

namespace tessel {

namespace {

bool is_launch_axis(IterAnnotation a) {
    return a >= IterAnnotation::BlockX && a <= IterAnnotation::ThreadZ;
}
bool is_block_axis(IterAnnotation a) {
    return a >= IterAnnotation::BlockX && a <= IterAnnotation::BlockZ;
}

[[noreturn]] void fail(const Schedule& s, int stage, const std::string& message) {
    std::ostringstream os;
    os << "lower: stage '" << s.stages()[stage].name() << "': " << message << "\n  loop nest of '"
       << s.stages()[stage].name() << "':\n"
       << s.loop_nest_string(stage);
    throw ScheduleError(os.str());
}

// The root stage of stage i's kernel chain (i itself when it is a root).
int root_of(const Schedule& s, int i) {
    for (size_t hops = 0; hops <= s.stages().size() && s.stages()[i].attach == AttachKind::At;
         ++hops)
        i = s.stages()[i].attach_stage;
    return i;
}

// The axes bound by the loops enclosing stage i's nest (its targets' loops at and outside the
// attach points).
std::map<IterAnnotation, int> enclosing_axes(const Schedule& s, int i) {
    std::map<IterAnnotation, int> axes;
    for (size_t hops = 0; hops <= s.stages().size() && s.stages()[i].attach == AttachKind::At;
         ++hops) {
        const Stage& st = s.stages()[i];
        const Stage& t = s.stages()[st.attach_stage];
        for (int id : t.leaf) {
            if (is_launch_axis(t.iters[id].annotation)) axes[t.iters[id].annotation] = st.attach_stage;
            if (id == st.attach_iter) break;
        }
        i = st.attach_stage;
    }
    return axes;
}

struct AxisUse {
    int stage;
    std::string loop;
    Expr extent;
};

}  // namespace

void verify_thread_mapping(const Schedule& s) {
    std::vector<std::vector<Expr>> extents;
    bool any = false;
    for (const Stage& st : s.stages())
        for (int id : st.leaf) any = any || is_launch_axis(st.iters[id].annotation);
    if (!any) return;
    extents = s.infer_extents();
    // Per kernel root, per axis: the first loop bound to it.
    std::map<int, std::map<IterAnnotation, AxisUse>> kernels;
    for (int i = 0; i < static_cast<int>(s.stages().size()); ++i) {
        const Stage& st = s.stages()[i];
        if (st.attach == AttachKind::Inlined) continue;
        std::map<IterAnnotation, int> outer = enclosing_axes(s, i);
        bool seen_thread = false;
        for (size_t pos = 0; pos < st.leaf.size(); ++pos) {
            const Iterator& it = st.iters[st.leaf[pos]];
            IterAnnotation a = it.annotation;
            if (!is_launch_axis(a)) continue;
            std::ostringstream os;
            if (is_block_axis(a) && st.attach == AttachKind::At) {
                os << "loop '" << it.name << "' is bound to " << annotation_name(a)
                   << ", but the stage is computed inside another stage's loops; only a kernel's "
                      "root stage binds blockIdx";
                fail(s, i, os.str());
            }
            if (is_block_axis(a) && seen_thread) {
                os << "loop '" << it.name << "' is bound to " << annotation_name(a)
                   << " inside a threadIdx-bound loop; blockIdx loops must be outside the "
                      "threadIdx loops (reorder them)";
                fail(s, i, os.str());
            }
            seen_thread = seen_thread || !is_block_axis(a);
            if (auto o = outer.find(a); o != outer.end()) {
                os << "loop '" << it.name << "' is bound to " << annotation_name(a)
                   << ", which an enclosing loop of stage '" << s.stages()[o->second].name()
                   << "' binds already";
                fail(s, i, os.str());
            }
            Expr ext = simplify(extents[i][pos]);
            auto& axes = kernels[root_of(s, i)];
            auto [use, fresh] = axes.emplace(a, AxisUse{i, it.name, ext});
            if (fresh || structural_equal(use->second.extent, ext)) continue;
            os << "thread axis " << annotation_name(a) << " has extent " << to_string(ext)
               << " here (loop '" << it.name << "'), but extent "
               << to_string(use->second.extent) << " in stage '"
               << s.stages()[use->second.stage].name() << "' (loop '" << use->second.loop
               << "') of the same kernel; every stage of one kernel must agree on thread extents";
            fail(s, i, os.str());
        }
    }
}

}  // namespace tessel
