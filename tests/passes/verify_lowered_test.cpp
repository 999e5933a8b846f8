// VerifyLowered: each kind of violation is caught, with the offending IR in the message.
#include <gtest/gtest.h>

#include "../unit/ir_test_util.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/VerifyLowered.h"

namespace tessel {
namespace {

class VerifyLoweredTest : public ::testing::Test {
protected:
    Buffer A{"A", Float(32), {64}};
    Var i{"i"};
    Expr load(Expr index, Type t = Float(32)) { return Load::make(t, A->data, std::move(index)); }
    Stmt loop(Stmt body, ForKind kind = ForKind::Serial, Expr extent = 64) {
        return For::make(i, 0, std::move(extent), kind, std::move(body));
    }
    /// Expects verify_lowered to throw an InternalError whose message contains each fragment.
    void expect_violation(const Stmt& body, const std::vector<std::string>& fragments) {
        try {
            verify_lowered(LoweredFunc{"f", {A}, body});
            FAIL() << "expected a violation in\n" << body;
        } catch (const InternalError& e) {
            std::string msg = e.what();
            for (const std::string& f : fragments)
                EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
        }
    }
};

TEST_F(VerifyLoweredTest, AValidFunctionPasses) {
    Var T("T", Handle()), x("x"), n("n");
    Buffer S("S", Float(32), {n});
    Stmt body = Allocate::make(
        T, Float(32), {4}, StorageScope::Local,
        Seq::make({loop(LetStmt::make(x, i + 1, Store::make(A->data, load(i) * 2.0f, i))),
                   For::make(i, 0, n, ForKind::Parallel, Store::make(S->data, 0.0f, i)),
                   Store::make(T, Broadcast::make(1.0f, 4), Ramp::make(0, 1, 4)),
                   Evaluate::make(Call::make(Intrinsic::thread_barrier, {}))}));
    EXPECT_NO_THROW(verify_lowered(LoweredFunc{"f", {A, S}, body}));
}

TEST_F(VerifyLoweredTest, UnflattenedAccessesAndTensorExpressions) {
    expect_violation(loop(BufferStore::make(A, 1.0f, {i})), {"BufferStore left", "A[i] = 1.0f"});
    expect_violation(loop(Store::make(A->data, BufferLoad::make(A, {i}), i)), {"BufferLoad left"});
    Tensor t = test::make_tensor("T", {64});
    expect_violation(loop(Store::make(A->data, TensorRead::make(t, {i}), i)),
                     {"tensor read left", "T[i]"});
    IterVar k = test::make_reduce_axis("k", 0, 4);
    Expr sum = Reduce::make(test::sum_reducer(), {load(k.var())}, {k}, const_true(), 0);
    expect_violation(loop(Store::make(A->data, sum, i)), {"reduction left"});
}

TEST_F(VerifyLoweredTest, LoopKindsAndExtents) {
    expect_violation(loop(Store::make(A->data, 1.0f, i), ForKind::Vectorized),
                     {"vectorized loop left", "for i in vectorized(0, 64)"});
    expect_violation(loop(Store::make(A->data, 1.0f, i), ForKind::Unrolled),
                     {"unrolled loop left"});
    expect_violation(loop(Store::make(A->data, 1.0f, i), ForKind::Serial, -1),
                     {"loop of negative extent"});
}

TEST_F(VerifyLoweredTest, UndefinedAndRedefinedVariables) {
    Var j("j"), B("B", Handle());
    expect_violation(loop(Store::make(A->data, 1.0f, j)), {"variable used before", "j"});
    expect_violation(loop(Store::make(B, 1.0f, i)), {"undefined buffer B", "B[i] = 1.0f"});
    expect_violation(Seq::make({loop(Evaluate::make(0)), Store::make(A->data, 1.0f, i)}),
                     {"variable used before"});
    expect_violation(loop(loop(Store::make(A->data, 1.0f, i))), {"bound again"});
    Var x("x");
    expect_violation(LetStmt::make(x, 1, Store::make(A->data, 1.0f, Let::make(x, 2, x))),
                     {"bound again"});
    // Sequential reuse of one variable (as unrolled copies of a loop have) is fine.
    EXPECT_NO_THROW(verify_lowered(LoweredFunc{
        "f", {A}, Seq::make({loop(Store::make(A->data, 1.0f, i)), loop(Evaluate::make(0))})}));
}

TEST_F(VerifyLoweredTest, AccessTypesMatchTheBuffer) {
    expect_violation(loop(Store::make(A->data, 1, i)), {"access of int32 to buffer A of float32"});
    expect_violation(loop(Store::make(A->data, cast(Float(32), load(i, Int(32))), i)),
                     {"access of int32"});
}

TEST_F(VerifyLoweredTest, BarrierOnlyAsAnEvaluate) {
    Expr barrier = Call::make(Intrinsic::thread_barrier, {});
    expect_violation(loop(Store::make(A->data, cast(Float(32), barrier), i)),
                     {"impure call outside an Evaluate", "thread_barrier()"});
    expect_violation(loop(Evaluate::make(barrier + 1)), {"impure call outside an Evaluate"});
}

}  // namespace
}  // namespace tessel
