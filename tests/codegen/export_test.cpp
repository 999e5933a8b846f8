// Ahead-of-time export: a matmul + bias + ReLU kernel exported as a shared library, an object file
// and a C header; a plain C program links them with libtessel_runtime alone (no LLVM), calls the
// kernel with raw pointers and checks the result against its own loops.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tessel/codegen/Export.h"
#include "tessel/driver/Build.h"
#include "tessel/ir/IROperator.h"
#include "tessel/te/Operation.h"

using namespace tessel;

namespace {

// C[n,48] = relu(A[n,32] B[32,48] + bias[48]), n symbolic; D is the product.
struct DenseRelu {
    Tensor A, B, bias, D, C;
};
DenseRelu dense_relu_dag(bool constant_b) {
    Var n("n");
    DenseRelu t;
    t.A = placeholder({n, 32}, Float(32), "A");
    t.B = placeholder({32, 48}, Float(32), "B", constant_b);
    t.bias = placeholder({48}, Float(32), "bias");
    IterVar k = reduce_axis(Range(0, 32), "k");
    t.D = compute(
        {n, 48}, [&](Var i, Var j) { return sum(t.A(i, k.var()) * t.B(k.var(), j), {k}); }, "D");
    t.C = compute(
        {n, 48}, [&](Var i, Var j) { return max(t.D(i, j) + t.bias(j), 0.0f); }, "C");
    return t;
}

// The kernel `dense_relu(A[n,32], B[32,48], bias[48], C[n,48])`.
Module dense_relu() {
    auto [A, B, bias, D, C] = dense_relu_dag(false);
    Schedule s = create_schedule({C});
    int d = s.stage_of(D), c = s.stage_of(C);
    s.split(d, 1, 16);
    s.reorder(d, {0, 1, 3, 2});  // i, j.outer, k, j.inner
    s.vectorize(d, 3);
    s.parallel(d, 0);
    s.split(c, 1, 8);
    s.vectorize(c, 2);
    return build(s, {A, B, bias, C}, "llvm", "dense_relu");
}

// dense_relu with B constant and laid out once in panels [48 / 16][32][16]: the module holds
// `dense_packed` (taking B_packed in B's place) and `dense_packed_pre_transform(B, B_packed)`.
Module dense_packed() {
    auto [A, B, bias, D, C] = dense_relu_dag(/*constant_b=*/true);
    Schedule s = create_schedule({C});
    int d = s.stage_of(D);
    int pack = s.cache_read(s.stage_of(B), "global", {d});
    d = s.stage_of(D);
    s.storage_split(pack, 1, 16);        // [k, j / 16, j % 16]
    s.storage_reorder(pack, {1, 0, 2});  // [j / 16, k, j % 16]
    s.pre_transform(pack);
    s.split(d, 1, 16);
    s.reorder(d, {0, 1, 3, 2});
    s.vectorize(d, 3);
    return build(s, {A, B, bias, C}, "llvm", "dense_packed");
}

const char* kPackedConsumer = R"(
#include <math.h>
#include <stdio.h>
#include "dense_packed.h"

int main(void) {
    enum { N = 5, K = 32, M = 48 };
    static float a[N * K], b[K * M], b_packed[K * M], bias[M], c[N * M];
    for (int i = 0; i < N * K; ++i) a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int i = 0; i < K * M; ++i) b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (int j = 0; j < M; ++j) bias[j] = 0.1f;
    if (dense_packed_pre_transform_call(b, b_packed) != 0) return 1;
    if (b_packed[16] != b[M]) { printf("not in panels\n"); return 1; }  /* [0][1][0] = B[1][0] */
    if (dense_packed_call(a, b_packed, bias, c, N) != 0) return 1;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < M; ++j) {
            double acc = 0.1;
            for (int k = 0; k < K; ++k) acc += (double)a[i * K + k] * b[k * M + j];
            if (acc < 0) acc = 0;
            if (fabs(acc - c[i * M + j]) > 1e-4) { printf("mismatch\n"); return 1; }
        }
    printf("ok\n");
    return 0;
}
)";

const char* kConsumer = R"(
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "dense_relu.h"

int main(void) {
    enum { N = 37, K = 32, M = 48 };
    static float a[N * K], b[K * M], bias[M], c[N * M];
    for (int i = 0; i < N * K; ++i) a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int i = 0; i < K * M; ++i) b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (int j = 0; j < M; ++j) bias[j] = (float)(j % 5) / 10.0f - 0.2f;
    if (dense_relu_call(a, b, bias, c, N) != 0) { printf("kernel failed\n"); return 1; }
    int positives = 0;
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < M; ++j) {
            double acc = 0;
            for (int k = 0; k < K; ++k) acc += (double)a[i * K + k] * b[k * M + j];
            acc += bias[j];
            if (acc < 0) acc = 0;
            positives += acc > 0;
            if (fabs(acc - c[i * M + j]) > 1e-4) {
                printf("mismatch at %d,%d: %f vs %f\n", i, j, c[i * M + j], acc);
                return 1;
            }
        }
    }
    printf("ok %d\n", positives);
    return positives > 0 ? 0 : 1;
}
)";

std::string run(const std::string& command) {
    std::string out;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (!p) return "popen failed";
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    int status = pclose(p);
    if (status != 0) out += "\n[exit status " + std::to_string(status) + "]";
    return out;
}

class ExportTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/tessel-export-test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { run("rm -rf " + dir_); }
    std::string dir_;
};

}  // namespace

TEST_F(ExportTest, CConsumerLinksTheLibraryAndTheRuntimeOnly) {
#ifdef TESSEL_SANITIZED_BUILD
    GTEST_SKIP() << "the runtime archive is instrumented; a plain C consumer cannot link it";
#endif
    Module m = dense_relu();
    export_library(m, dir_ + "/libdense_relu.so");
    export_object(m, dir_ + "/dense_relu.o");
    export_header(m, dir_ + "/dense_relu.h");
    std::ofstream(dir_ + "/consumer.c") << kConsumer;
    std::string compile = run("cc -std=c11 -Wall -Werror -I" + dir_ + " -c " + dir_ +
                              "/consumer.c -o " + dir_ + "/consumer.o");
    ASSERT_EQ(compile, "") << c_header(m);
    std::string runtime = TESSEL_RUNTIME_ARCHIVE;
    // Against the shared library.
    std::string link = run("c++ -o " + dir_ + "/consumer_so " + dir_ + "/consumer.o -L" + dir_ +
                           " -ldense_relu -Wl,-rpath," + dir_ + " " + runtime + " -lpthread -lm");
    ASSERT_EQ(link, "");
    EXPECT_EQ(run(dir_ + "/consumer_so").substr(0, 3), "ok ");
    // Against the object file.
    link = run("c++ -o " + dir_ + "/consumer_o " + dir_ + "/consumer.o " + dir_ + "/dense_relu.o " +
               runtime + " -lmvec -lm -lpthread");
    ASSERT_EQ(link, "");
    EXPECT_EQ(run(dir_ + "/consumer_o").substr(0, 3), "ok ");
    // Neither consumer loads LLVM.
    for (const char* exe : {"/consumer_so", "/consumer_o"}) {
        std::string ldd = run("ldd " + dir_ + exe);
        EXPECT_EQ(ldd.find("LLVM"), std::string::npos) << ldd;
        EXPECT_NE(ldd.find("libc.so"), std::string::npos) << ldd;
    }
}

// Layout rewrite: the header declares the kernel and its pre_transform, and a C program runs
// the transform once and the kernel on the packed weight.
TEST_F(ExportTest, HeaderHasTheKernelAndItsPreTransform) {
#ifdef TESSEL_SANITIZED_BUILD
    GTEST_SKIP() << "the runtime archive is instrumented; a plain C consumer cannot link it";
#endif
    Module m = dense_packed();
    std::string h = c_header(m);
    EXPECT_NE(h.find("dense_packed_pre_transform_call(const float* B, float* B_packed)"),
              std::string::npos)
        << h;
    EXPECT_NE(h.find("dense_packed_call(const float* A, const float* B_packed, const float* bias, "
                     "float* C, int64_t n)"),
              std::string::npos)
        << h;
    export_object(m, dir_ + "/dense_packed.o");
    export_header(m, dir_ + "/dense_packed.h");
    std::ofstream(dir_ + "/packed.c") << kPackedConsumer;
    std::string compile = run("cc -std=c11 -Wall -Werror -I" + dir_ + " -c " + dir_ +
                              "/packed.c -o " + dir_ + "/packed.o");
    ASSERT_EQ(compile, "") << h;
    std::string link = run("c++ -o " + dir_ + "/packed " + dir_ + "/packed.o " + dir_ +
                           "/dense_packed.o " + TESSEL_RUNTIME_ARCHIVE + " -lmvec -lm -lpthread");
    ASSERT_EQ(link, "");
    EXPECT_EQ(run(dir_ + "/packed"), "ok\n");
}

TEST_F(ExportTest, HeaderDeclaresTypedEntryPoints) {
    std::string h = c_header(dense_relu());
    EXPECT_NE(h.find("int32_t dense_relu(void* const* args, const int64_t* shape_vars);"),
              std::string::npos)
        << h;
    EXPECT_NE(h.find("dense_relu_call(const float* A, const float* B, const float* bias, float* C, "
                     "int64_t n)"),
              std::string::npos)
        << h;
    EXPECT_NE(h.find("float32[n, 32]"), std::string::npos) << h;
}

TEST_F(ExportTest, BadNamesAndCompilersAreCompileErrors) {
    Tensor A = placeholder({8}, Float(32), "A");
    Tensor B = compute(
        {8}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    Module main_kernel = build(s, {A, B});  // named "main": would clash with a C program's main
    EXPECT_THROW(export_object(main_kernel, dir_ + "/x.o"), CompileError);
    Module bad_name = build(s, {A, B}, "llvm", "add-one");
    EXPECT_THROW(c_header(bad_name), CompileError);
    Module ok = build(s, {A, B}, "llvm", "add_one");
    setenv("CC", "/nonexistent/cc", 1);
    EXPECT_THROW(export_library(ok, dir_ + "/libx.so"), CompileError);
    unsetenv("CC");
    EXPECT_THROW(export_object(ok, "/nonexistent-dir/x.o"), RuntimeError);
}
