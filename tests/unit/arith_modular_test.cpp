// Modular analysis: residue classes of integer expressions.
#include <gtest/gtest.h>

#include "tessel/arith/Modular.h"
#include "tessel/ir/IROperator.h"

using namespace tessel;

namespace {
void expect_mod(const ModularSet& m, int64_t coeff, int64_t base, int line) {
    EXPECT_EQ(m.coeff, coeff) << "line " << line << " (base " << m.base << ")";
    EXPECT_EQ(m.base, base) << "line " << line << " (coeff " << m.coeff << ")";
}
#define EXPECT_MOD(m, c, b) expect_mod((m), (c), (b), __LINE__)
}  // namespace

TEST(ArithModular, Basics) {
    Var i("i"), j("j"), k("k");
    EXPECT_MOD(modular_set_of(Expr(7)), 0, 7);
    EXPECT_MOD(modular_set_of(i), 1, 0);
    EXPECT_MOD(modular_set_of(i * 8 + 4), 8, 4);
    EXPECT_MOD(modular_set_of(i * 8 - 4), 8, 4);
    EXPECT_MOD(modular_set_of(i * 8 + j * 12), 4, 0);
    EXPECT_MOD(modular_set_of(i * 6 + j * 4 + 1), 2, 1);
    EXPECT_MOD(modular_set_of((i * 4 + 2) * 3), 12, 6);
    EXPECT_MOD(modular_set_of((i * 4 + 2) * (j * 2)), 4, 0);
    EXPECT_MOD(modular_set_of((i * 16 + 8) / 4), 4, 2);
    EXPECT_MOD(modular_set_of((i * 16 + 8) / 3), 1, 0);
    EXPECT_MOD(modular_set_of((i * 16 + 5) % 8), 0, 5);
    EXPECT_MOD(modular_set_of((i * 6 + 5) % 4), 2, 1);
    EXPECT_MOD(modular_set_of(min(i * 8 + 2, j * 4 + 2)), 4, 2);
    EXPECT_MOD(modular_set_of(select(i < j, i * 6, j * 9 + 3)), 3, 0);
    EXPECT_MOD(modular_set_of(Ramp::make(i * 8, Expr(4), 4)), 4, 0);
    EXPECT_MOD(modular_set_of(Broadcast::make(i * 8 + 1, 4)), 8, 1);
    EXPECT_MOD(modular_set_of(0 - i * 8 + 3), 8, 3);
    Var t("t");
    EXPECT_MOD(modular_set_of(Let::make(t, i * 4, t * 2 + 1)), 8, 1);
}

TEST(ArithModular, Scope) {
    Var i("i"), j("j");
    ModularScope s{{i.get(), ModularSet(4, 1)}, {j.get(), ModularSet(6, 3)}};
    EXPECT_MOD(modular_set_of(i, s), 4, 1);
    EXPECT_MOD(modular_set_of(i * 2, s), 8, 2);
    EXPECT_MOD(modular_set_of(i + j, s), 2, 0);
    EXPECT_MOD(modular_set_of(i * j, s), 6, 3);  // 24ab + 12a + 6b + 3
}

TEST(ArithModular, Wrapping) {
    // uint8 wraps modulo 256: facts modulo 8 survive, facts modulo 3 do not.
    Var p("p", UInt(8));
    EXPECT_MOD(modular_set_of(p * make_const(UInt(8), int64_t(8))), 8, 0);
    EXPECT_MOD(modular_set_of(p * make_const(UInt(8), int64_t(3))), 1, 0);
    EXPECT_MOD(
        modular_set_of(p * make_const(UInt(8), int64_t(24)) + make_const(UInt(8), int64_t(4))), 8,
        4);
    // Truncating casts keep residues modulo powers of two up to the target width.
    Var i("i");
    EXPECT_MOD(modular_set_of(cast(Int(8), i * 512 + 4)), 256, 4);
    EXPECT_MOD(modular_set_of(cast(Int(64), i * 6 + 2)), 6, 2);
}

TEST(ArithModular, Union) {
    EXPECT_EQ(modular_union(ModularSet(8, 2), ModularSet(12, 6)), ModularSet(4, 2));
    EXPECT_EQ(modular_union(ModularSet::constant(3), ModularSet::constant(7)), ModularSet(4, 3));
    EXPECT_EQ(modular_union(ModularSet::constant(3), ModularSet::constant(3)),
              ModularSet::constant(3));
    EXPECT_TRUE(modular_union(ModularSet(2, 0), ModularSet(2, 1)).is_everything());
}
