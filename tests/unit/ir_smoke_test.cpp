#include <gtest/gtest.h>

#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

using namespace tessel;

TEST(IRSmoke, BuildAndSubstitute) {
    Var x("x"), y("y");
    Expr e = x * 2 + y;
    EXPECT_EQ(e.type(), Int(32));
    Expr s = substitute(e, x, Expr(3));
    EXPECT_FALSE(s.same_as(e));
    EXPECT_TRUE(uses_var(e, x));
    EXPECT_FALSE(uses_var(s, x));
    EXPECT_THROW(x + Var("f", Float(32)), DSLError);
}
