#include <gtest/gtest.h>

#include "tessel/ir/Equality.h"
#include "tessel/ir/Hash.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/te/Operation.h"
#include "tessel/te/PrintDAG.h"

using namespace tessel;

TEST(PrintDAG, MatmulListsPlaceholdersThenComputeWithFlops) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = placeholder({8, 4}, Float(32), "B");
    IterVar k = reduce_axis(Range(0, 8), "k");
    Tensor C = compute(
        {16, 4}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    EXPECT_EQ(
        dag_to_string({C}),
        "A = placeholder((16, 8), float32)\n"
        "B = placeholder((8, 4), float32)\n"
        "C[i0, i1] = sum(A[i0, k] * B[k, i1], axis=[k in range(0, 8)])  # float32, 1024 flops\n");
}

TEST(PrintDAG, HandlesOfOneOutputShareANameHashAndEquality) {
    Tensor A = placeholder({4}, Float(32), "A");
    Tensor again = op_output(A.op(), 0);
    ASSERT_FALSE(again.same_as(A));  // op_output makes a fresh handle ...
    Var i("i");
    Expr x = A(i) + again(i);
    EXPECT_EQ(to_string(x), "A[i] + A[i]");  // ... but it is the same tensor
    EXPECT_TRUE(structural_equal(A(i), again(i)));
    EXPECT_EQ(structural_hash(A(i) * A(i)), structural_hash(A(i) * again(i)));
    Tensor other = placeholder({4}, Float(32), "A");
    EXPECT_NE(structural_hash(A(i) * A(i)), structural_hash(A(i) * other(i)));
    EXPECT_EQ(to_string(A(i) + other(i)), "A[i] + A_1[i]");
}
