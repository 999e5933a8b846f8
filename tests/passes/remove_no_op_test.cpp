// RemoveNoOp: statements that do nothing disappear.
#include <gtest/gtest.h>

#include "tessel/ir/Equality.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/RemoveNoOp.h"

namespace tessel {
namespace {

Stmt nop() {
    return Evaluate::make(0);
}

class RemoveNoOpTest : public ::testing::Test {
protected:
    Var A{"A", Handle()}, T{"T", Handle()}, i{"i"}, n{"n"};
    Stmt store = Store::make(A, 1.0f, i);
    void expect(const Stmt& in, const Stmt& expected) {
        Stmt out = remove_no_op(in);
        EXPECT_TRUE(structural_equal(out, expected)) << "in:\n" << in << "out:\n" << out;
    }
};

TEST_F(RemoveNoOpTest, Loops) {
    expect(For::make(i, 0, 0, ForKind::Serial, store), nop());
    expect(For::make(i, 0, -3, ForKind::Serial, store), nop());
    expect(For::make(i, 0, n, ForKind::Serial, nop()), nop());
    expect(For::make(i, 0, n, ForKind::Serial, Evaluate::make(i + 1)), nop());
    Stmt keep = For::make(i, 0, n, ForKind::Serial, store);
    EXPECT_TRUE(remove_no_op(keep).same_as(keep));
}

TEST_F(RemoveNoOpTest, Conditionals) {
    expect(IfThenElse::make(const_false(), store), nop());
    expect(IfThenElse::make(const_false(), nop(), store), store);
    expect(IfThenElse::make(const_true(), store, nop()), store);
    expect(IfThenElse::make(i < n, nop(), nop()), nop());
    expect(IfThenElse::make(i < n, store, nop()), IfThenElse::make(i < n, store));
    expect(IfThenElse::make(i < n, nop(), store), IfThenElse::make(!(i < n), store));
}

TEST_F(RemoveNoOpTest, EvaluatesAssertsAndSelfStores) {
    expect(Evaluate::make(3), nop());
    expect(Evaluate::make(Load::make(Float(32), A, i) * 2.0f), nop());
    Stmt barrier = Evaluate::make(Call::make(Intrinsic::thread_barrier, {}));
    EXPECT_TRUE(remove_no_op(barrier).same_as(barrier));
    expect(AssertStmt::make(const_true(), "never"), nop());
    Stmt a = AssertStmt::make(i < n, "i in range");
    EXPECT_TRUE(remove_no_op(a).same_as(a));
    expect(Store::make(A, Load::make(Float(32), A, i + 1), i + 1), nop());
    Stmt shift = Store::make(A, Load::make(Float(32), A, i + 1), i);
    EXPECT_TRUE(remove_no_op(shift).same_as(shift));
}

TEST_F(RemoveNoOpTest, SequencesLetsAttrsAndAllocations) {
    expect(Seq::make({nop(), store, Evaluate::make(1), nop()}), store);
    expect(Seq::make({nop(), For::make(i, 0, 0, ForKind::Serial, store)}), nop());
    Var x("x");
    expect(LetStmt::make(x, i + 1, nop()), nop());
    expect(AttrStmt::make("pragma_x", 1, Seq::make({nop(), nop()})), nop());
    expect(Allocate::make(T, Float(32), {16}, StorageScope::Local, store), store);
    expect(Allocate::make(T, Float(32), {16}, StorageScope::Local, Store::make(T, 1.0f, 0)),
           Allocate::make(T, Float(32), {16}, StorageScope::Local, Store::make(T, 1.0f, 0)));
    expect(Allocate::make(T, Float(32), {16}, StorageScope::Local, nop()), nop());
}

TEST_F(RemoveNoOpTest, NestedNoOpsCollapse) {
    Var j("j");
    Stmt in = For::make(
        i, 0, n, ForKind::Serial,
        Seq::make({For::make(j, 0, 4, ForKind::Serial, IfThenElse::make(const_false(), store)),
                   LetStmt::make(Var("x"), i, Evaluate::make(0))}));
    expect(in, nop());
}

}  // namespace
}  // namespace tessel
