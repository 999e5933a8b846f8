// The GPU row-group sketches (SketchRowRules.cpp, AnnotateRows.cpp): a softmax on a cuda target
// gets a sketch with its max and sum computed at the output's row (and one with the input's row in
// shared memory), a GEMM and a CPU softmax none; their random annotations compute the softmax in
// the SPMD interpreter (race detector on) at odd shapes and compile through NVRTC; and the
// tutorial's block-per-row schedule (tutorials/06_gpu_softmax.py, step 2: 512 threads, 128-bit
// accesses, the row in shared memory, one kernel) is among the annotations of the 8192 x 8192
// task.
#include <algorithm>
#include <random>
#include <set>

#include "auto_schedule/SearchTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

SearchTask softmax_task(std::vector<int64_t> shape, const std::string& target) {
    int64_t axis = static_cast<int64_t>(shape.size()) - 1;
    return SearchTask("op.softmax", {shape, axis, Float(32)}, Target(target));
}

bool has_rule(const Sketch& sk, const std::string& rule) {
    return std::any_of(sk.trace.begin(), sk.trace.end(), [&](const std::string& t) {
        return t.size() >= rule.size() && t.compare(t.size() - rule.size(), rule.size(), rule) == 0;
    });
}

// The indices of the sketches that applied `rule`.
std::vector<int> sketches_with(const SearchSpace& space, const std::string& rule) {
    std::vector<int> out;
    for (size_t k = 0; k < space.sketches().size(); ++k)
        if (has_rule(space.sketches()[k], rule)) out.push_back(static_cast<int>(k));
    return out;
}

TEST(RowSketch, SoftmaxOnCudaComputesItsReductionsAtTheRow) {
    SearchSpace space(softmax_task({37, 1000}, kCudaCompileTarget));
    std::vector<int> rows = sketches_with(space, "row_block");
    ASSERT_EQ(rows.size(), 2u);  // the row in shared memory or not
    EXPECT_EQ(sketches_with(space, "row_fetch").size(), 1u);
    for (int k : rows) {
        const Sketch& sk = space.sketches()[k];
        EXPECT_EQ(std::count(sk.trace.begin(), sk.trace.end(), "softmax.max: row_reduction") +
                      std::count(sk.trace.begin(), sk.trace.end(), "softmax.sum: row_reduction"),
                  2);
    }
    // The other sketches stay: one kernel per reduction, one thread or a block a row.
    EXPECT_GE(space.sketches().size(), rows.size() + 4);
    SearchSpace cpu(softmax_task({37, 1000}, "llvm"));
    EXPECT_TRUE(sketches_with(cpu, "row_block").empty());
    SearchTask gemm("op.matmul",
                    {int64_t(64), int64_t(64), int64_t(64), int64_t(0), int64_t(0), Float(32)},
                    Target(kCudaCompileTarget));
    for (const Sketch& sk : generate_sketches(gemm)) EXPECT_FALSE(has_rule(sk, "row_block"));
}

// Annotations of the row sketches, drawn until `count` are complete (each must be: no rejection).
std::vector<SearchState> row_samples(const SearchSpace& space, int count, uint64_t seed) {
    std::vector<int> rows = sketches_with(space, "row_block");
    std::vector<SearchState> out;
    if (rows.empty()) {
        ADD_FAILURE() << space.task().key() << ": no row sketch";
        return out;
    }
    std::mt19937_64 rng(seed);
    for (int i = 0; i < count; ++i) {
        std::string why;
        std::optional<SearchState> s = space.annotate(rows[i % rows.size()], rng, &why);
        EXPECT_TRUE(s.has_value()) << why;
        if (s) out.push_back(std::move(*s));
    }
    return out;
}

TEST(RowSketch, SamplesComputeTheSoftmaxAtOddShapes) {
    // Rows that no thread count divides; rows not a multiple of 4 (no 128-bit accesses); three
    // dimensions (the rows fused; several a block); a layer norm (two sums, gamma and beta).
    std::vector<SearchTask> tasks = {
        softmax_task({37, 1000}, kCudaCompileTarget), softmax_task({5, 333}, kCudaCompileTarget),
        softmax_task({3, 5, 64}, kCudaCompileTarget),
        SearchTask("op.layer_norm", {std::vector<int64_t>{9, 100}, Float(32)},
                   Target(kCudaCompileTarget))};
    for (const SearchTask& task : tasks) {
        SearchSpace space(task);
        for (const SearchState& s : row_samples(space, 3, 7)) {
            SCOPED_TRACE(s.schedule.to_python());
            GpuProgram p = gpu_program(task.key(), s.schedule, reduction_length(task));
            EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 3)));
            if (has_cuda_backend()) {
                EXPECT_NO_THROW(compile_for_gpu(p));
            }
        }
    }
}

// mutate_row_threads moves every stage of the row group to one new thread count, and the
// mutated state still computes the softmax.
TEST(RowSketch, MutationChangesTheRowsThreads) {
    SearchTask task = softmax_task({37, 1000}, kCudaCompileTarget);
    SearchSpace space(task);
    std::mt19937_64 rng(3);
    int checked = 0;
    for (const SearchState& s : row_samples(space, 6, 11)) {
        std::vector<std::string> kinds = space.mutations(s);
        ASSERT_NE(std::find(kinds.begin(), kinds.end(), "mutate_row_threads"), kinds.end());
        std::optional<SearchState> m;
        for (int k = 0; k < 20 && !(m && m->origin == "mutate_row_threads"); ++k)
            m = space.mutate(s, rng);
        if (!m || m->origin != "mutate_row_threads") continue;
        std::set<int64_t> before, after;
        for (const SearchState* st : {&s, const_cast<const SearchState*>(&*m)}) {
            const std::vector<Step>& steps = st->schedule.steps();
            for (size_t i = st->sketch_steps; i + 1 < steps.size(); ++i) {
                const auto* split = std::get_if<SplitStep>(&steps[i]);
                const auto* bind = std::get_if<AnnotateStep>(&steps[i + 1]);
                if (split && bind && bind->annotation == IterAnnotation::ThreadX)
                    (st == &s ? before : after).insert(split->factor);
            }
        }
        ASSERT_EQ(before.size(), 1u);
        ASSERT_EQ(after.size(), 1u);
        EXPECT_NE(*before.begin(), *after.begin());
        if (checked++ < 2) {
            SCOPED_TRACE(m->schedule.to_python());
            GpuProgram p = gpu_program(task.key(), m->schedule, 1000);
            EXPECT_NO_THROW(check_in_interpreter(p, make_gpu_data(p, 5)));
        }
    }
    EXPECT_GE(checked, 2);
}

// The annotation values of a row state: the threads of its row (threadIdx.x split factor), its
// vector width (the output's first split when vectorised), rows a block (threadIdx.y).
struct RowChoice {
    int64_t threads = 0, vector = 1;
    bool rows_on_y = false;
};

RowChoice row_choice(const SearchState& s, int first_step) {
    RowChoice c;
    const std::vector<Step>& steps = s.schedule.steps();
    for (size_t i = first_step; i < steps.size(); ++i) {
        if (const auto* b = std::get_if<AnnotateStep>(&steps[i])) {
            c.rows_on_y = c.rows_on_y || b->annotation == IterAnnotation::ThreadY;
            if (b->annotation == IterAnnotation::Vectorize && c.threads == 0) {
                const auto& split = std::get<SplitStep>(steps[i - 1]);
                c.vector = split.factor;
            }
            if (b->annotation == IterAnnotation::ThreadX && c.threads == 0)
                c.threads = std::get<SplitStep>(steps[i - 1]).factor;
        }
    }
    return c;
}

TEST(RowSketch, TheTutorialsBlockPerRowScheduleIsReachable) {
    SearchTask task = softmax_task({8192, 8192}, kCudaCompileTarget);
    SearchSpace space(task);
    std::vector<int> fetch = sketches_with(space, "row_fetch");
    ASSERT_EQ(fetch.size(), 1u);
    int steps = static_cast<int>(space.sketches()[fetch[0]].schedule.steps().size());
    std::mt19937_64 rng(1);
    std::optional<SearchState> found;
    for (int i = 0; i < 400 && !found; ++i) {
        std::optional<SearchState> s = space.annotate(fetch[0], rng);
        ASSERT_TRUE(s.has_value());
        RowChoice c = row_choice(*s, steps);
        if (c.threads == 512 && c.vector == 4 && !c.rows_on_y) found = std::move(s);
    }
    ASSERT_TRUE(found.has_value()) << "no 512-thread, float4, block-per-row annotation";
    if (!has_cuda_backend()) GTEST_SKIP() << "no CUDA backend: the kernel is not compiled";
    GpuProgram p = gpu_program("softmax", found->schedule, 8192);
    std::string cu = compile_for_gpu(p).get_source("cu");
    SCOPED_TRACE(found->schedule.to_python() + "\n" + cu);
    size_t kernels = 0;
    for (size_t at = cu.find("__global__"); at != std::string::npos;
         at = cu.find("__global__", at + 1))
        ++kernels;
    EXPECT_EQ(kernels, 1u);  // max, sum and the output in one kernel
    EXPECT_NE(cu.find("__launch_bounds__(512)"), std::string::npos);
    EXPECT_NE(cu.find("float x_shared[8192]"), std::string::npos);  // the row, staged once
    EXPECT_NE(cu.find("float4"), std::string::npos);
    EXPECT_NE(cu.find("tsl_shfl_xor(0x"), std::string::npos);
}

}  // namespace
