// A comm_reducer without an identity element.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

namespace {
std::vector<Expr> add(const std::vector<Expr>& l, const std::vector<Expr>& r) {
    return {l[0] + r[0]};
}
}  // namespace

TEST(ErrorCommReducerWithoutIdentity, NoIdentityFunction) {
    expect_dsl_error([] { comm_reducer("mysum", add, nullptr); }, {"reducer 'mysum'", "identity"});
}

TEST(ErrorCommReducerWithoutIdentity, NoIdentityValues) {
    Reducer r = comm_reducer("mysum", add, [](const std::vector<Type>&) {
        return std::vector<Expr>{};
    });
    Tensor A = placeholder({4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error([&] { r(A(k), {k}); }, {"reducer 'mysum'", "no identity"});
}

TEST(ErrorCommReducerWithoutIdentity, UndefinedIdentity) {
    Reducer r = comm_reducer("mysum", add, [](const std::vector<Type>&) {
        return std::vector<Expr>{Expr()};
    });
    Tensor A = placeholder({4}, Float(32), "A");
    IterVar k = reduce_axis({0, 4}, "k");
    expect_dsl_error([&] { compute({1}, [&](Var) { return r(A(k), {k}); }, "S"); },
                     {"compute 'S'", "reducer 'mysum'", "no identity"});
}
