// Steps as data, for every step kind: JSON round trip, replay with byte-identical lowered IR,
// to_python lines, and the same IR from tools/tessel-lower in other processes. Also the workload
// key: equal for the same DAG built twice under other names, different for another DAG.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tessel/ir/IROperator.h"
#include "tessel/lower/Lower.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

// The operator of tools/tessel-lower (names included: the printed IR must match it).
struct Workload {
    Tensor A, B, Bs, C, R;
    int bs = 0, c = 0, r = 0;  // stage indices
    explicit Workload(const std::string& suffix = "", int m = 48) {
        // A constant (a weight), for pre_transform's case.
        A = placeholder({64, 32}, Float(32), "A" + suffix, /*constant=*/true);
        B = placeholder({32, m}, Float(32), "B" + suffix);
        Bs = compute(
            {32, m}, [&](Var k, Var j) { return B(k, j) * 0.5f; }, "Bs" + suffix);
        IterVar k = reduce_axis({0, 32}, "k" + suffix);
        C = compute(
            {64, m}, [&](Var i, Var j) { return sum(A(i, k) * Bs(k, j), {k}); }, "C" + suffix);
        R = compute(
            {64, m}, [&](Var i, Var j) { return max(C(i, j), 0.0f); }, "R" + suffix);
    }
    Schedule schedule() {
        Schedule s = create_schedule({R});
        bs = s.stage_of(Bs);
        c = s.stage_of(C);
        r = s.stage_of(R);
        return s;
    }
    std::string lowered(const Schedule& s) const {
        std::ostringstream os;
        os << "# workload " << std::hex << s.workload_key() << "\n"
           << to_string(lower(s, {A, B, R}, "main", LowerOptions{}));
        return os.str();
    }
};

// A GPU kernel of R's 16-row blocks, C computed per block, A's 16 x 8 tile copied into shared
// memory at C's k.outer by the block's 16 threads; returns A.shared's stage (1).
int shared_tile_of_a(Schedule& s, const Workload& w) {
    s.split(w.r, 0, 16);
    s.bind(w.r, 0, IterAnnotation::BlockX);
    s.bind(w.r, 1, IterAnnotation::ThreadX);
    s.compute_at(w.c, w.r, 1);
    int as = s.cache_read(0, "shared", {w.c});
    int c = w.c + 1;
    s.split(c, 2, 8);  // C: i0 i1 k.outer k.inner
    s.compute_at(as, c, 2);
    s.split(as, 0, 16);  // the block's 16 rows, one per thread
    s.bind(as, 1, IterAnnotation::ThreadX);
    return as;
}

// One schedule per step kind: the steps to apply, and lines to_python must print.
struct StepCase {
    const char* name;
    std::function<void(Schedule&, const Workload&)> apply;
    std::vector<std::string> python;
};

std::vector<StepCase> step_cases() {
    return {
        {"split",
         [](Schedule& s, const Workload& w) {
             s.split(w.c, 0, 8);
             s.split_nparts(w.r, 1, 5, TailStrategy::ShiftInwards);
             s.split(w.bs, 1, 7, TailStrategy::RoundUp);
         },
         {"s.split(3, 0, factor=8)  # C: i0",
          "s.split(4, 1, nparts=5, tail=\"shift_inwards\")  # R: i1",
          "s.split(2, 1, factor=7, tail=\"round_up\")  # Bs: i1"}},
        {"fuse",
         [](Schedule& s, const Workload& w) {
             s.fuse(w.r, {0, 1});
         },
         {"s.fuse(4, [0, 1])  # R"}},
        {"reorder",
         [](Schedule& s, const Workload& w) {
             s.reorder(w.c, {2, 0, 1});
         },
         {"s.reorder(3, [2, 0, 1])  # C"}},
        {"annotate",
         [](Schedule& s, const Workload& w) {
             s.split(w.c, 1, 8);
             s.vectorize(w.c, 2);
             s.parallel(w.c, 0);
             s.unroll(w.r, 1);
         },
         {"s.vectorize(3, 2)  # C: i1.inner", "s.parallel(3, 0)  # C: i0",
          "s.unroll(4, 1)  # R: i1"}},
        {"pragma",
         [](Schedule& s, const Workload& w) { s.pragma_auto_unroll(w.c, 16); },
         {"s.pragma(3, \"auto_unroll_max_step\", 16)  # C"}},
        {"compute_at",
         [](Schedule& s, const Workload& w) {
             s.tile(w.r, 0, 1, 16, 8);
             s.compute_at(w.c, w.r, 1);
             s.compute_at(w.bs, w.c, 1);
         },
         {"s.compute_at(3, 4, 1)  # C at R's i1.outer", "s.compute_at(2, 3, 1)  # Bs at C's i1"}},
        {"compute_inline",
         [](Schedule& s, const Workload& w) { s.compute_inline(w.bs); },
         {"s.compute_inline(2)  # Bs"}},
        {"compute_root",
         [](Schedule& s, const Workload& w) {
             s.compute_at(w.c, w.r, 0);
             s.compute_root(w.c);
         },
         {"s.compute_root(3)  # C"}},
        {"pre_transform",
         [](Schedule& s, const Workload& w) {
             int pack = s.cache_read(0, "global", {w.c});
             s.storage_split(pack, 1, 8);
             s.storage_reorder(pack, {1, 0, 2});
             s.split(pack, 1, 8);
             s.vectorize(pack, 2);
             s.pre_transform(pack);
         },
         {"s.pre_transform(1)  # A.global"}},
        {"set_scope",
         [](Schedule& s, const Workload& w) {
             s.split(w.r, 0, 16);
             s.bind(w.r, 0, IterAnnotation::BlockX);
             s.bind(w.r, 1, IterAnnotation::ThreadX);
             s.compute_at(w.c, w.r, 1);
             s.set_scope(w.c, StorageScope::Local);
         },
         {"s.bind(4, 0, \"blockIdx.x\")  # R: i0.outer",
          "s.bind(4, 1, \"threadIdx.x\")  # R: i0.inner", "s.set_scope(3, \"local\")  # C"}},
        {"cache_read",
         [](Schedule& s, const Workload& w) {
             int as = s.cache_read(0, "shared", {w.c});
             s.compute_at(as, s.stage_of(w.C), 0);
         },
         {"s.cache_read(0, \"shared\", [3])  # A", "s.compute_at(1, 4, 0)  # A.shared at C's i0"}},
        {"cache_write",
         [](Schedule& s, const Workload& w) {
             int cl = s.cache_write(w.c, "local");
             s.compute_at(cl, s.stage_of(w.C), 1);
         },
         {"s.cache_write(3, \"local\")  # C", "s.compute_at(3, 4, 1)  # C.local at C's i1"}},
        {"storage_split",
         [](Schedule& s, const Workload& w) { s.storage_split(w.bs, 1, 16); },
         {"s.storage_split(2, 1, 16)  # Bs"}},
        {"storage_reorder",
         [](Schedule& s, const Workload& w) {
             s.storage_reorder(w.c, {1, 0});
         },
         {"s.storage_reorder(3, [1, 0])  # C"}},
        {"storage_align",
         [](Schedule& s, const Workload& w) { s.storage_align(w.c, 0, 16, 3); },
         {"s.storage_align(3, 0, 16, 3)  # C"}},
        {"follow_split",
         [](Schedule& s, const Workload& w) {
             s.split(w.r, 0, 8);
             s.follow_split(w.c, 0, 0);
         },
         {"s.follow_split(3, 0, 0)  # C: i0 as step 0"}},
        {"follow_fused_split",
         [](Schedule& s, const Workload& w) {
             s.split(w.r, 0, 4);
             s.split(w.r, 2, 2);
             s.follow_fused_split(w.c, 0, {0, 1});
         },
         {"s.follow_fused_split(3, 0, [0, 1])  # C: i0 as the product of steps [0, 1]"}},
        {"double_buffer",
         [](Schedule& s, const Workload& w) {
             int as = shared_tile_of_a(s, w);
             s.double_buffer(as);
         },
         {"s.compute_at(1, 4, 2)  # A.shared at C's k.outer", "s.double_buffer(1)  # A.shared"}},
        {"pipeline",
         [](Schedule& s, const Workload& w) {
             int as = shared_tile_of_a(s, w);
             s.pipeline(as, 3);
         },
         {"s.compute_at(1, 4, 2)  # A.shared at C's k.outer", "s.pipeline(1, 3)  # A.shared"}},
        {"tma",
         [](Schedule& s, const Workload& w) {
             int as = shared_tile_of_a(s, w);
             s.tma(as);
         },
         {"s.compute_at(1, 4, 2)  # A.shared at C's k.outer", "s.tma(1)  # A.shared"}},
        {"reverse_compute_at",  // R after each 16-row tile of C
         [](Schedule& s, const Workload& w) {
             s.split(w.c, 0, 16);
             s.reverse_compute_at(w.r, w.c, 0);
         },
         {"s.reverse_compute_at(4, 3, 0)  # R at C's i0.outer"}},
        {"warp_specialize",
         [](Schedule& s, const Workload& w) {
             int as = shared_tile_of_a(s, w);
             s.tma(as);
             s.warp_specialize(as);
         },
         {"s.tma(1)  # A.shared", "s.warp_specialize(1)  # A.shared"}},
        {"tma_store",  // R's 16-row tiles computed into R.shared by 16 threads, stored by TMA
         [](Schedule& s, const Workload& w) {
             s.cache_write(w.r, "shared");  // 4 = R.shared, 5 = R
             s.split(5, 0, 16);
             s.bind(5, 0, IterAnnotation::BlockX);
             s.compute_at(4, 5, 0);
             s.bind(4, 0, IterAnnotation::ThreadX);
             s.tma_store(5);
         },
         {"s.tma_store(5)  # R"}},
        {"storage_swizzle",  // A.shared: 16 x 8 floats, rows of 2 chunks
         [](Schedule& s, const Workload& w) {
             int as = shared_tile_of_a(s, w);
             s.storage_swizzle(as, 2);
         },
         {"s.storage_swizzle(1, 2)  # A.shared"}},
        {"tensorize",  // C on tf32 tensor cores: 16 x 8 tiles, one per block
         [](Schedule& s, const Workload&) {
             s.cache_write(3, "warp");        // 3 = C.warp, 4 = C, 5 = R
             s.cache_read(0, "shared", {3});  // 1 = A.shared: C.warp at 4
             s.cache_read(1, "warp", {4});    // 2 = A.shared.warp: C.warp at 5
             s.cache_read(4, "warp", {5});    // 5 = Bs.warp: C.warp 6, C 7
             s.split(7, 0, 16);
             s.split(7, 2, 8);
             s.reorder(7, {0, 2, 1, 3});
             s.bind(7, 0, IterAnnotation::BlockX);
             s.tensorize(7, 2, "store_c");
             s.compute_at(6, 7, 1);
             s.split(6, 2, 8);
             s.reorder(6, {2, 0, 1, 3});
             s.tensorize(6, 1, "mma_m16n8k8_tf32");
             s.compute_at(2, 6, 0);
             s.tensorize(2, 0, "load_a8");
             s.compute_at(5, 6, 0);
             s.tensorize(5, 0, "load_b8");
             s.compute_at(1, 6, 0);
             s.fuse(1, {0, 1});
             s.split(1, 0, 32);
             s.bind(1, 1, IterAnnotation::ThreadX);
         },
         {"s.tensorize(7, 2, \"store_c\")  # C: i0.inner",
          "s.tensorize(6, 1, \"mma_m16n8k8_tf32\")  # C.warp: i0"}},
        {"rfactor",
         [](Schedule& s, const Workload& w) {
             s.split(w.c, 2, 8);
             s.rfactor(w.c, 3, 0);
         },
         {"s.rfactor(3, 3, 0)  # C: k.inner"}},
        {"reindex",  // C over (j, i) fused into one axis: C.reindex[64 * j + i]
         [](Schedule& s, const Workload& w) {
             const int p = s.reindex(w.c, {1, 0, 2}, {2, 1});
             s.split(p, 0, 16);
         },
         {"s.reindex(3, [1, 0, 2], [2, 1])  # C"}},
    };
}

// Runs tools/tessel-lower with `steps_json` as its argument; returns its standard output.
std::string run_tool(const std::string& steps_json) {
    std::string cmd = std::string(TESSEL_LOWER_TOOL) + " '" + steps_json + "'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe) return "popen failed";
    std::string out;
    std::array<char, 4096> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
    return out;
}

}  // namespace

TEST(ScheduleSteps, EveryKindIsCovered) {
    std::vector<std::string> kinds;
    for (const StepCase& k : step_cases()) kinds.push_back(k.name);
    EXPECT_EQ(kinds.size(), std::variant_size_v<Step>);
}

TEST(ScheduleSteps, JsonRoundTrip) {
    for (const StepCase& k : step_cases()) {
        SCOPED_TRACE(k.name);
        Workload w;
        Schedule s = w.schedule();
        k.apply(s, w);
        std::string json = steps_to_json(s.steps());
        EXPECT_NE(json.find(std::string("\"kind\":\"") + k.name + "\""), std::string::npos) << json;
        std::vector<Step> back = steps_from_json(json);
        EXPECT_EQ(back, s.steps()) << json;
        EXPECT_EQ(steps_to_json(back), json);
    }
}

TEST(ScheduleSteps, ReplayGivesIdenticalIR) {
    for (const StepCase& k : step_cases()) {
        SCOPED_TRACE(k.name);
        Workload w;
        Schedule s = w.schedule();
        k.apply(s, w);
        Schedule again = replay({w.R}, steps_from_json(steps_to_json(s.steps())));
        EXPECT_EQ(again.steps(), s.steps());
        EXPECT_EQ(w.lowered(again), w.lowered(s));
        Schedule from_record = schedule_from_json({w.R}, s.to_json());
        EXPECT_EQ(w.lowered(from_record), w.lowered(s));
    }
}

TEST(ScheduleSteps, ReplayOnTheSameDagBuiltAgain) {
    for (const StepCase& k : step_cases()) {
        SCOPED_TRACE(k.name);
        Workload w, w2;
        Schedule s = w.schedule();
        k.apply(s, w);
        Schedule again = schedule_from_json({w2.R}, s.to_json());
        EXPECT_EQ(w2.lowered(again), w.lowered(s));
    }
}

TEST(ScheduleSteps, ToPythonLines) {
    for (const StepCase& k : step_cases()) {
        SCOPED_TRACE(k.name);
        Workload w;
        Schedule s = w.schedule();
        k.apply(s, w);
        std::string py = s.to_python();
        EXPECT_NE(py.find("def apply_schedule(s):"), std::string::npos) << py;
        EXPECT_NE(py.find("0=A 1=B 2=Bs 3=C 4=R"), std::string::npos) << py;
        for (const std::string& line : k.python)
            EXPECT_NE(py.find("    " + line + "\n"), std::string::npos)
                << "missing: " << line << "\n"
                << py;
    }
}

TEST(ScheduleSteps, ToPythonWithoutSteps) {
    Workload w;
    Schedule s = w.schedule();
    EXPECT_NE(s.to_python().find("def apply_schedule(s):\n    pass\n"), std::string::npos);
}

TEST(ScheduleSteps, CrossProcessDeterminism) {
    for (const StepCase& k : step_cases()) {
        SCOPED_TRACE(k.name);
        Workload w;
        Schedule s = w.schedule();
        k.apply(s, w);
        std::string json = steps_to_json(s.steps());
        std::string first = run_tool(json), second = run_tool(json);
        EXPECT_EQ(first, second);
        EXPECT_EQ(first, w.lowered(s));
    }
}

TEST(ScheduleSteps, WorkloadKeyIgnoresNames) {
    Workload w, renamed("_renamed");
    EXPECT_EQ(dag_hash({w.R}), dag_hash({renamed.R}));
    EXPECT_EQ(w.schedule().workload_key(), renamed.schedule().workload_key());
}

TEST(ScheduleSteps, WorkloadKeyDiffersForAnotherDag) {
    Workload w, wider("", 49);
    EXPECT_NE(dag_hash({w.R}), dag_hash({wider.R}));
    // Same shapes, another body.
    Tensor X = placeholder({8}, Float(32), "X");
    Tensor Y1 = compute(
        {8}, [&](Var i) { return X(i) + 1.0f; }, "Y");
    Tensor Y2 = compute(
        {8}, [&](Var i) { return X(i) * 1.0f; }, "Y");
    Tensor Y3 = compute(
        {8}, [&](Var i) { return X(7 - i) + 1.0f; }, "Y");
    EXPECT_NE(dag_hash({Y1}), dag_hash({Y2}));
    EXPECT_NE(dag_hash({Y1}), dag_hash({Y3}));
    // Same structure, another dtype.
    Tensor Xh = placeholder({8}, Float(16), "X");
    Tensor Yh = compute(
        {8}, [&](Var i) { return Xh(i) + make_const(Float(16), 1.0); }, "Y");
    EXPECT_NE(dag_hash({Y1}), dag_hash({Yh}));
}
