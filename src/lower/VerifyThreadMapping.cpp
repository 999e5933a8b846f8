// VerifyThreadMapping (see include/tessel/lower/VerifyThreadMapping.h).
#include "tessel/lower/VerifyThreadMapping.h"

#include <map>
#include <sstream>

#include "tessel/arith/Simplify.h"
#include "tessel/ir/Equality.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/te/Operation.h"

namespace tessel {

namespace {

[[noreturn]] void fail(const Schedule& s, int stage, const std::string& message) {
    std::ostringstream os;
    os << "lower: stage '" << s.stages()[stage].name() << "': " << message << "\n  loop nest of '"
       << s.stages()[stage].name() << "':\n"
       << s.loop_nest_string(stage);
    throw ScheduleError(os.str());
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
            if (is_launch_axis(t.iters[id].annotation))
                axes[t.iters[id].annotation] = st.attach_stage;
            if (id == st.attach_iter) break;
        }
        // A cross-thread reduction's thread-bound reduction loops enclose its whole reduction
        // nest once lowered (the all-reduce needs every thread), so a stage attached at any of
        // its reduction loops is inside them, wherever they stand in the leaf order.
        if (t.iters[st.attach_iter].kind == IterKind::Reduction) {
            for (int id : t.leaf) {
                const Iterator& r = t.iters[id];
                if (r.kind == IterKind::Reduction && is_launch_axis(r.annotation))
                    axes[r.annotation] = st.attach_stage;
            }
        }
        i = st.attach_stage;
    }
    return axes;
}

// The stage whose nest opens stage i's kernel: the outermost stage of its attach chain computed
// outside any launch-bound loop (i itself when no launch-bound loop encloses it).
int root_of(const Schedule& s, int i) {
    for (size_t hops = 0; hops <= s.stages().size(); ++hops) {
        if (enclosing_axes(s, i).empty()) return i;
        i = s.stages()[i].attach_stage;
    }
    return i;
}

struct AxisUse {
    int stage;
    std::string loop;
    Expr extent;
};

// Stages whose buffer every thread of the block sees (the kernel's root stage, writing global
// memory, and shared stages) must bind every thread axis of the block: the threads along an
// unbound axis would all compute, and write, the same elements. Blocks hold at most 1024 threads;
// CPU-parallel loops have no place in a kernel.
void check_coverage(const Schedule& s, const std::map<int, std::map<IterAnnotation, AxisUse>>& k,
                    int max_threads) {
    for (const auto& [root, axes] : k) {
        int64_t threads = 1;
        for (const auto& [a, use] : axes)
            if (auto e = as_const_int(use.extent); e && is_thread_axis(a)) threads *= *e;
        if (threads > max_threads) {
            std::ostringstream os;
            os << "the kernel's blocks have " << threads
               << " threads (the product of its threadIdx extents), more than the " << max_threads
               << " a block may have";
            fail(s, root, os.str());
        }
    }
    for (int i = 0; i < static_cast<int>(s.stages().size()); ++i) {
        const Stage& st = s.stages()[i];
        if (st.attach == AttachKind::Inlined || !as_compute(st.op)) continue;
        auto kernel = k.find(root_of(s, i));
        if (kernel == k.end()) continue;
        for (int id : st.leaf) {
            if (st.iters[id].annotation == IterAnnotation::Parallel)
                fail(s, i,
                     "loop '" + st.iters[id].name +
                         "' is parallel inside a GPU kernel; CPU threads have no place there "
                         "(bind it to a thread axis instead)");
        }
        // A tensorized stage runs in the warps (ir/Fragment.h): threadIdx.x must be a warp.
        const bool warp = st.tensorize_iter >= 0;
        if (warp) {
            auto x = kernel->second.find(IterAnnotation::ThreadX);
            // No stage binding threadIdx.x: the lanes are implicit (schedule_ops adds them).
            auto e = x == kernel->second.end() ? std::optional<int64_t>(32)
                                               : as_const_int(x->second.extent);
            for (int id : st.leaf)
                if (st.iters[id].annotation == IterAnnotation::ThreadX)
                    fail(s, i,
                         "loop '" + st.iters[id].name +
                             "' is bound to threadIdx.x, but the "
                             "stage is tensorized: its intrinsic runs on the 32 lanes of a warp, "
                             "which are threadIdx.x");
            if (!e || *e != 32)
                fail(s, i,
                     "the stage is tensorized (its intrinsic runs on the 32 lanes of a warp), so "
                     "the kernel's threadIdx.x extent must be 32, but it is " +
                         (x == kernel->second.end() ? std::string("1 (no stage binds it)")
                                                    : to_string(x->second.extent)));
        }
        // A tma() stage is copied by one thread of the block (its loops are not bound), and so is
        // a tma_store() stage's copy out of shared memory.
        bool everyone =
            (i == kernel->first && !st.tma_store) || (st.scope == StorageScope::Shared && !st.tma);
        if (!everyone) continue;
        for (const auto& [a, use] : kernel->second) {
            auto e = as_const_int(use.extent);
            if (!is_thread_axis(a) || (e && *e == 1)) continue;
            bool bound = false;
            for (int id : st.leaf) bound = bound || st.iters[id].annotation == a;
            if (bound || (warp && a == IterAnnotation::ThreadX)) continue;
            std::ostringstream os;
            os << "the kernel's blocks have " << to_string(use.extent) << " threads along "
               << annotation_name(a) << " (stage '" << s.stages()[use.stage].name()
               << "' binds it), but this stage, whose "
               << (i == kernel->first ? "global" : "shared")
               << " buffer every thread of the block writes, binds none of its loops to it: "
                  "those threads would all compute the same elements. Bind one of its loops to "
               << annotation_name(a);
            fail(s, i, os.str());
        }
    }
}

}  // namespace

void verify_thread_mapping(const Schedule& s, int max_threads_per_block,
                           const std::vector<StageBounds>* bounds) {
    std::vector<std::vector<Expr>> extents;
    bool any = false;
    for (const Stage& st : s.stages())
        for (int id : st.leaf) any = any || is_launch_axis(st.iters[id].annotation);
    if (!any) return;
    extents = bounds ? leaf_extents(s, *bounds) : s.infer_extents();
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
            if (is_block_axis(a) && !outer.empty()) {
                os << "loop '" << it.name << "' is bound to " << annotation_name(a)
                   << ", but the stage is computed inside a kernel (inside another stage's "
                      "blockIdx/threadIdx loops); only a kernel's root stage binds blockIdx";
                fail(s, i, os.str());
            }
            if (is_block_axis(a) && seen_thread) {
                os << "loop '" << it.name << "' is bound to " << annotation_name(a)
                   << " inside a threadIdx-bound loop; blockIdx loops must be outside the "
                      "threadIdx loops (reorder them)";
                fail(s, i, os.str());
            }
            seen_thread = seen_thread || !is_block_axis(a);
            // (A stage computed by reverse_compute_at writes its tiles of a global tensor.)
            if (!is_block_axis(a) && !outer.empty() && st.scope != StorageScope::Shared &&
                it.kind != IterKind::Reduction && !st.attach_after) {
                os << "loop '" << it.name << "' is bound to " << annotation_name(a)
                   << ", but the stage's buffer is private to each thread (it is computed inside "
                      "a kernel and its scope is not shared): each thread would compute only its "
                      "share of its own copy. set_scope it to shared, or leave its loops unbound";
                fail(s, i, os.str());
            }
            // A shared stage computed inside threadIdx loops may bind the same thread axes: the
            // block's threads fill it together (a cooperative fetch), each thread taking its own
            // iteration, as in TVM; bound inference relaxes its region over those loops.
            bool cooperative = st.scope == StorageScope::Shared && a != IterAnnotation::VThread;
            if (auto o = outer.find(a); o != outer.end() && !cooperative) {
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
               << " here (loop '" << it.name << "'), but extent " << to_string(use->second.extent)
               << " in stage '" << s.stages()[use->second.stage].name() << "' (loop '"
               << use->second.loop
               << "') of the same kernel; every stage of one kernel must agree on thread extents";
            fail(s, i, os.str());
        }
    }
    check_coverage(s, kernels, max_threads_per_block);
}

}  // namespace tessel
