// CUDA codegen: declarations in hand-written lowered IR that unrolled copies produce (the same
// Allocate or LetStmt twice in one sequence, a variable bound again inside its own binding,
// distinct variables of one name, a vector let next to a variable named like its lanes) give
// valid C: every Allocate and LetStmt has a C scope of its own, and the names differ where
// they must (regression/issue_cuda_duplicate_declaration_test.cpp has the fuzzer's cases).
#include <gtest/gtest.h>

#include "codegen/CudaTestUtil.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// for t in threadIdx.x(0, 64): body(t)
LoweredFunc one_block(const Buffer& c, const Var& t, const Stmt& body) {
    return LoweredFunc{"f", {c}, For::make(t, 0, 64, ForKind::ThreadBound, body, "threadIdx.x")};
}

// tmp[0] = value; C[index] = tmp[0]
Stmt through_local(const Var& tmp, const Buffer& c, const Expr& index, const Expr& value) {
    Stmt body = Seq::make(
        {Store::make(tmp, value, 0), Store::make(c->data, Load::make(Float(32), tmp, 0), index)});
    return Allocate::make(tmp, Float(32), {1}, StorageScope::Local, body);
}

size_t count(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
    return n;
}

void expect_nvrtc_compiles(const std::string& src) {
    if (!internal::has_nvrtc()) return;
    try {
        internal::nvrtc_compile(src, "sm_90", {});
    } catch (const std::exception& e) {
        ADD_FAILURE() << e.what() << "\n" << src;
    }
}

}  // namespace

TEST(CudaDeclarationScopes, SameAllocateAndLetTwiceInOneSequence) {
    Buffer c("C", Float(32), {256});
    Var t("t"), tmp("tmp", Handle()), x("x");
    Stmt copy0 = LetStmt::make(x, t * 4, through_local(tmp, c, x, 1.0f));
    Stmt copy1 = LetStmt::make(x, t * 4 + 1, through_local(tmp, c, x, 2.0f));
    std::string src =
        internal::codegen_cuda(split_for_cuda(one_block(c, t, Seq::make({copy0, copy1}))), {}, {})
            .source;
    EXPECT_EQ(count(src, "float tmp[1];"), 2u) << src;
    expect_nvrtc_compiles(src);
}

TEST(CudaDeclarationScopes, RebindingInsideItsOwnBodyAndDistinctVarsOfOneName) {
    Buffer c("C", Float(32), {256});
    Var t("t"), tmp("tmp", Handle()), other("tmp", Handle()), x("x");
    // let x = t * 4 in { let x = x + 1 in C[x] = 1; C[x] = 2 }: the second store sees the outer x.
    Stmt inner = LetStmt::make(x, x + 1, Store::make(c->data, 1.0f, x));
    Stmt outer = LetStmt::make(x, t * 4, Seq::make({inner, Store::make(c->data, 2.0f, x)}));
    Stmt nested = Allocate::make(other, Float(32), {1}, StorageScope::Local,
                                 through_local(tmp, c, t * 4 + 2, Load::make(Float(32), other, 0)));
    std::string src =
        internal::codegen_cuda(split_for_cuda(one_block(c, t, Seq::make({outer, nested}))), {}, {})
            .source;
    EXPECT_TRUE(contains(src, "float tmp[1];")) << src;
    EXPECT_TRUE(contains(src, "float tmp_1[1];")) << src;
    expect_nvrtc_compiles(src);
}

TEST(CudaDeclarationScopes, VectorLetLanesDoNotTakeAnotherVariablesName) {
    Buffer c("C", Int(32), {256});
    Var t("t"), x("x", Int(32, 4)), y("x_l0");
    // let x = ramp(t, 1, 4) in let x_l0 = t + 7 in C[ramp(t * 4, 1, 4)] = x + broadcast(x_l0)
    Expr value = x + Broadcast::make(y, 4);
    Stmt store = Store::make(c->data, value, Ramp::make(t * 4, 1, 4));
    Stmt body = LetStmt::make(x, Ramp::make(t, 1, 4), LetStmt::make(y, t + 7, store));
    std::string src = internal::codegen_cuda(split_for_cuda(one_block(c, t, body)), {}, {}).source;
    EXPECT_EQ(count(src, " x_l0 = "), 1u) << src;  // lane 0 of x and the variable x_l0 differ
    expect_nvrtc_compiles(src);
}
