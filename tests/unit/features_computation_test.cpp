// Features, group 1a: the operations a store performs, by kind, times the iterations of the loops
// around it. Values worked out by hand from the printed IR.
#include "unit/FeaturesTestUtil.h"

#include <functional>
#include <map>

#include "tessel/ir/IROperator.h"

using namespace tessel;
using tessel::testing::raw_features;
using tessel::testing::RawFeatures;

namespace {

// One store in a 16 x 8 nest (128 executions) computing `body(a)` of a float input element a.
RawFeatures elementwise(const std::function<Expr(Expr)>& body) {
    Tensor A = placeholder({16, 8}, Float(32), "A");
    Tensor B = compute(
        {16, 8}, [&](Var i, Var j) { return body(A(i, j)); }, "B");
    return raw_features(create_schedule({B}), {A, B});
}

const char* const kCounts[] = {
    "float_mad",     "float_addsub",    "float_mul",        "float_divmod",
    "float_cmp",     "float_math_func", "float_other_func", "int_mad",
    "int_addsub",    "int_mul",         "int_divmod",       "int_cmp",
    "int_math_func", "int_other_func",  "bool_op",          "select_op"};

// Every count is zero except those listed (per execution; the features hold 128 times that).
void expect_counts(const RawFeatures& f, std::map<std::string, double> per_execution) {
    for (const char* name : kCounts) EXPECT_FEATURE(f, 0, name, 128 * per_execution[name]);
}

}  // namespace

TEST(FeaturesComputation, MultiplyAddAndCompare) {
    // max(a * 2 + 1, 0): one multiply-add (a * b + c contracts), one float compare.
    RawFeatures f = elementwise([](Expr a) { return max(a * 2.0f + 1.0f, 0.0f); });
    ASSERT_EQ(f.m.rows, 1);
    expect_counts(f, {{"float_mad", 1}, {"float_cmp", 1}});
}

TEST(FeaturesComputation, AddSubMulDiv) {
    // (a - 1) * (a + 2) / a: a sub, an add, a mul, a div; no multiply-add (the Mul is not an
    // operand of an Add).
    RawFeatures f = elementwise([](Expr a) { return (a - 1.0f) * (a + 2.0f) / a; });
    expect_counts(f, {{"float_addsub", 2}, {"float_mul", 1}, {"float_divmod", 1}});
}

TEST(FeaturesComputation, MathOtherSelectAndBool) {
    // select(a > 0 && a < 1, exp(a), floor(a)): two float compares, one and, one select, one
    // math function (exp), one other function (floor).
    RawFeatures f =
        elementwise([](Expr a) { return select(a > 0.0f && a < 1.0f, exp(a), floor(a)); });
    expect_counts(f, {{"float_cmp", 2},
                      {"bool_op", 1},
                      {"select_op", 1},
                      {"float_math_func", 1},
                      {"float_other_func", 1}});
}

TEST(FeaturesComputation, IntegerOperationsAndIndexArithmetic) {
    // D[i] = I[i] * 3 + I[15 - i] // 2 over int32: one integer multiply-add, one floor division,
    // and the index 15 - i, one integer subtraction. 16 executions.
    Tensor I = placeholder({16}, Int(32), "I");
    Tensor D = compute(
        {16}, [&](Var i) { return I(i) * 3 + floordiv(I(15 - i), 2); }, "D");
    RawFeatures f = raw_features(create_schedule({D}), {I, D});
    ASSERT_EQ(f.m.rows, 1);
    EXPECT_FEATURE(f, 0, "int_mad", 16);
    EXPECT_FEATURE(f, 0, "int_divmod", 16);
    EXPECT_FEATURE(f, 0, "int_addsub", 16);
    EXPECT_FEATURE(f, 0, "int_mul", 0);
    EXPECT_FEATURE(f, 0, "float_mad", 0);
}

TEST(FeaturesComputation, ReductionRowsAndCounts) {
    // A 16^3 GEMM lowers to two stores: the init C = 0 (256 executions, nothing computed) and the
    // update C = C + A * B (4096 executions, one float multiply-add each).
    tessel::testing::Gemm g(16);
    RawFeatures f = raw_features(create_schedule({g.C}), g.args());
    ASSERT_EQ(f.m.rows, 2);
    EXPECT_FEATURE(f, 0, "float_mad", 0);
    EXPECT_FEATURE(f, 0, "outer_prod", 256);
    EXPECT_FEATURE(f, 1, "float_mad", 4096);
    EXPECT_FEATURE(f, 1, "float_addsub", 0);
    EXPECT_FEATURE(f, 1, "float_mul", 0);
    EXPECT_FEATURE(f, 1, "outer_prod", 4096);
}
