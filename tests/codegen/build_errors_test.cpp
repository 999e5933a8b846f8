// Errors of build() and of calling a built kernel: bad targets, bad arguments.
#include <gtest/gtest.h>

#include "codegen/CodegenTestUtil.h"

using namespace tessel;

namespace {

Schedule add_schedule(Tensor* A, Tensor* C) {
    *A = placeholder({16}, Float(32), "A");
    Tensor a = *A;
    *C = compute(
        {16}, [&](Var i) { return a(i) + 1.0f; }, "C");
    return create_schedule({*C});
}

}  // namespace

TEST(BuildErrors, BadTargetStrings) {
    Tensor A, C;
    Schedule s = add_schedule(&A, &C);
    for (const char* target :
         {"opencl", "llvmx", "llvm -mcpu=not-a-cpu", "llvm -mattr=+nonsense", "llvm -mattr=avx2",
          "llvm -O3", "cuda -arch=90", "cuda -arch=sm_x", "cuda -O3", "cudax"}) {
        SCOPED_TRACE(target);
        EXPECT_THROW(build(s, {A, C}, target), CompileError);
    }
    try {
        build(s, {A, C}, "cuda -arch=sm90");
        ADD_FAILURE() << "no error";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("'sm90'"), std::string::npos) << e.what();
    }
}

TEST(BuildErrors, GoodTargetStrings) {
    Tensor A, C;
    Schedule s = add_schedule(&A, &C);
    for (const char* target : {"llvm", "llvm -mcpu=x86-64", "llvm -mattr=+sse4.2",
                               "llvm -mcpu=x86-64 -mattr=+sse4.2,-avx"}) {
        SCOPED_TRACE(target);
        tessel::testing::expect_jit_matches_reference(s, 1, target);
    }
}

TEST(BuildErrors, ArgumentsAreCheckedByTheRuntime) {
    Tensor A, C;
    Schedule s = add_schedule(&A, &C);
    Module m = build(s, {A, C});
    NDArray a = NDArray::empty({16}, float32()), c = NDArray::empty({16}, float32());
    NDArray wrong = NDArray::empty({15}, float32());
    EXPECT_THROW(m.get("main")({a}), RuntimeError);
    EXPECT_THROW(m.get("main")({a, wrong}), RuntimeError);
    EXPECT_THROW(m.get("main")({a, NDArray::empty({16}, int32())}), RuntimeError);
    EXPECT_THROW(m.get("main")({a, a}), RuntimeError);  // the output overlaps the input
    m.get("main")({a, c});
}

TEST(BuildErrors, ModuleSourcesAndSaveLoad) {
    Tensor A, C;
    Schedule s = add_schedule(&A, &C);
    Module m = build(s, {A, C});
    EXPECT_NE(m.get_source("ll").find("define"), std::string::npos);
    EXPECT_FALSE(m.get_source("asm").empty());
    Module loaded = Module::load(m.save());
    NDArray a = NDArray::empty({16}, float32()), c = NDArray::empty({16}, float32());
    for (int i = 0; i < 16; ++i) a.data_as<float>()[i] = float(i);
    loaded.get("main")({a, c});
    for (int i = 0; i < 16; ++i) EXPECT_EQ(c.data_as<float>()[i], float(i) + 1.0f);
}

TEST(BuildErrors, ThreadBoundIRNeedsAGpuTarget) {
    Tensor A, C;
    Schedule s = add_schedule(&A, &C);
    int c = s.stage_of(C);
    s.split(c, 0, 4);
    s.bind(c, 0, IterAnnotation::BlockX);
    s.bind(c, 1, IterAnnotation::ThreadX);
    try {
        build(s, {A, C}, "llvm");
        ADD_FAILURE() << "the llvm backend accepted thread-bound IR";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("blockIdx.x"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("needs a GPU target"), std::string::npos) << e.what();
    }
    // A bare barrier (IR built by hand) is refused the same way.
    Stmt body = Evaluate::make(Call::make(Intrinsic::thread_barrier, {}));
    LoweredFunc f{"barrier", {}, body};
    try {
        build(f, "llvm");
        ADD_FAILURE() << "the llvm backend accepted a barrier";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("needs a GPU target"), std::string::npos) << e.what();
    }
}
