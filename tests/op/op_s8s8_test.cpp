// int8 x int8 products on a CPU whose dot-product unit is uint8 x int8 (op/Matmul.h's `target`):
// matmul, dense and batch_matmul built for a VNNI CPU are the +128-shifted product minus the
// compensation, run by the default schedule on vpdpbusd, and give exactly the int32 results of
// the plain product (int64 arithmetic here, wrapped to int32) on odd shapes, with inputs at -128
// and 127; without a target, on a CPU without VNNI and on a GPU the product stays plain.
#include "op/OpTestUtil.h"
#include "tessel/op/Matmul.h"

namespace tessel::testing {
// A namespace of its own: the test files of this binary are compiled together (unity build).
namespace op_s8s8_test {

constexpr const char* kVnni = "llvm -mcpu=cascadelake";
constexpr const char* kNoVnni = "llvm -mcpu=skylake-avx512";

// Random int8 values with the extremes forced in: the first element -128, the second 127, and
// every fifth alternately -128 and 127.
HostArray int8_values(std::vector<int64_t> shape, uint64_t seed) {
    HostArray a = HostArray::random(Int(8), std::move(shape), seed, -128, 127);
    for (int64_t f = 0; f < a.size(); ++f) {
        if (f == 0 || f % 10 == 5) a.set_int(f, -128);
        if (f == 1 || f % 10 == 0) a.set_int(f, f == 0 ? -128 : 127);
    }
    return a;
}

// The plain product in int64, wrapped to int32 as the IR's int32 sums wrap: C[b, i, j] of A
// (batch_a, rows, K) or (.., K, rows) and B (batch_b, K, cols) or (.., cols, K).
struct Product {
    int64_t batch, m, n, k;
    bool ta, tb;
    int64_t batch_a, batch_b;
};

std::vector<int64_t> plain_product(const Product& p, const HostArray& a, const HostArray& b) {
    std::vector<int64_t> out;
    for (int64_t bt = 0; bt < p.batch; ++bt)
        for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j) {
                int64_t s = 0;
                const int64_t ba = p.batch_a == 1 ? 0 : bt, bb = p.batch_b == 1 ? 0 : bt;
                for (int64_t k = 0; k < p.k; ++k) {
                    int64_t x = a.get_int(ba * p.m * p.k + (p.ta ? k * p.m + i : i * p.k + k));
                    int64_t y = b.get_int(bb * p.n * p.k + (p.tb ? j * p.k + k : k * p.n + j));
                    s += x * y;
                }
                out.push_back(static_cast<int64_t>(static_cast<int32_t>(s)));
            }
    return out;
}

// Stage names of the computation of `out`.
std::vector<std::string> stage_names(const Tensor& out) {
    std::vector<std::string> names;
    const Schedule s = create_schedule({out});
    for (const Stage& st : s.stages()) names.push_back(st.name());
    return names;
}

// The default schedule of `out` for `target` in the loop interpreter and, with LLVM, the JIT on
// the given inputs, against the plain product; returns the lowered IR.
std::string expect_exact(const Tensor& a, const Tensor& b, const Tensor& out, const Product& p,
                         const std::string& target) {
    SCOPED_TRACE(target);
    Schedule s = op::default_schedule_rules({out}, Target(target));
    std::vector<Tensor> args = {a, b, out};
    std::vector<HostArray> arrays = {int8_values(const_shape(a), 3), int8_values(const_shape(b), 4),
                                     HostArray(Int(32), const_shape(out))};
    const std::vector<int64_t> want = plain_product(p, arrays[0], arrays[1]);
    LoweredFunc f = lower(s, args);
    std::vector<HostArray*> ptrs = {&arrays[0], &arrays[1], &arrays[2]};
    run_lowered(f, ptrs);
    auto check = [&](const char* what) {
        int bad = 0;
        for (int64_t x = 0; x < arrays[2].size() && bad < 3; ++x)
            if (arrays[2].get_int(x) != want[static_cast<size_t>(x)]) {
                ++bad;
                ADD_FAILURE() << what << ": element " << x << " is " << arrays[2].get_int(x)
                              << ", the plain product's " << want[static_cast<size_t>(x)];
            }
    };
    check("loop interpreter");
    if (has_llvm_backend()) {
        arrays[2] = HostArray(Int(32), const_shape(out));
        if (run_jit(s, args, arrays, "")) check("JIT");
    }
    return to_string(f);
}

TEST(OpS8S8, OnVnniTheShiftedProductIsThePlainOneExactly) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    // (batch, m, n, k, transpose_a, transpose_b, batch_a, batch_b): odd rows and reductions;
    // whole vectors of columns and rows with a divisor of 4 to 12 (the default's dot path), and
    // 13 x 35 (not: the plain GEMM of the shifted DAG).
    const Product cases[] = {
        {1, 15, 48, 20, false, false, 1, 1}, {1, 13, 35, 27, false, false, 1, 1},
        {1, 9, 32, 36, true, false, 1, 1},   {1, 21, 48, 12, false, true, 1, 1},
        {3, 5, 16, 8, false, false, 3, 1},   {2, 6, 32, 20, false, true, 1, 2},
    };
    for (const Product& p : cases) {
        const bool batched = p.batch > 1;
        std::vector<int64_t> sa = p.ta ? std::vector<int64_t>{p.k, p.m}
                                       : std::vector<int64_t>{p.m, p.k},
                             sb = p.tb ? std::vector<int64_t>{p.n, p.k}
                                       : std::vector<int64_t>{p.k, p.n};
        if (batched) sa.insert(sa.begin(), p.batch_a), sb.insert(sb.begin(), p.batch_b);
        std::vector<Expr> ea, eb;
        for (int64_t e : sa) ea.push_back(make_const(Int(32), e));
        for (int64_t e : sb) eb.push_back(make_const(Int(32), e));
        Tensor a = placeholder(ea, Int(8), "a"), b = placeholder(eb, Int(8), "b");
        SCOPED_TRACE(::testing::PrintToString(sa) + " x " + ::testing::PrintToString(sb));
        Tensor vnni = batched ? op::batch_matmul(a, b, p.ta, p.tb, std::nullopt, "c", Target(kVnni))
                              : op::matmul(a, b, p.ta, p.tb, std::nullopt, "c", Target(kVnni));
        EXPECT_EQ(stage_names(vnni),
                  (std::vector<std::string>{"a", "c.a_shift", "b", "c.dot", "c.b_sum", "c"}));
        EXPECT_EQ(vnni.dtype(), Int(32));
        std::string ir = expect_exact(a, b, vnni, p, kVnni);
        if (p.n % 16 == 0) {
            EXPECT_NE(ir.find("dot_product(16, 4,"), std::string::npos) << ir;
        }
        // Without VNNI (and without a target) the plain product, also exact.
        Tensor plain = batched
                           ? op::batch_matmul(a, b, p.ta, p.tb, std::nullopt, "c", Target(kNoVnni))
                           : op::matmul(a, b, p.ta, p.tb, std::nullopt, "c", Target(kNoVnni));
        EXPECT_EQ(stage_names(plain), (std::vector<std::string>{"a", "b", "c"}));
        expect_exact(a, b, plain, p, kNoVnni);
    }
}

TEST(OpS8S8, DenseAndTheTargetsThatKeepThePlainProduct) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU names imply features only with LLVM";
    Tensor x = placeholder({11, 24}, Int(8), "x"), w = placeholder({32, 24}, Int(8), "w");
    Tensor y = op::dense(x, w, Tensor(), op::Activation::None, std::nullopt, "y", Target(kVnni));
    EXPECT_EQ(stage_names(y),
              (std::vector<std::string>{"x", "y.a_shift", "w", "y.dot", "y.b_sum", "y"}));
    expect_exact(x, w, y, {1, 11, 32, 24, false, true, 1, 1}, kVnni);
    // No target, a GPU, uint8 x int8 (the unit's own product), an int64 accumulator: plain.
    for (const Tensor& t :
         {op::matmul(x, w, false, true),
          op::matmul(x, w, false, true, std::nullopt, "c", Target("cuda -arch=sm_90")),
          op::matmul(x, w, false, true, Int(64), "c", Target(kVnni))})
        EXPECT_EQ(stage_names(t).size(), 3u) << t.dtype();
    Tensor u = placeholder({11, 24}, UInt(8), "u");
    EXPECT_EQ(stage_names(op::matmul(u, w, false, true, std::nullopt, "c", Target(kVnni))).size(),
              3u);
}

}  // namespace op_s8s8_test
}  // namespace tessel::testing
