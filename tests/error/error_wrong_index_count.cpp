// Indexing a tensor with the wrong number of indices.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorWrongIndexCount, TooFew) {
    Tensor A = placeholder({4, 8}, Float(32), "A");
    expect_dsl_error([&] { compute({4}, [&](Var i) { return A(i); }, "B"); },
                     {"compute 'B'", "tensor 'A'", "2 dimensions", "1 index"});
}

TEST(ErrorWrongIndexCount, TooMany) {
    Tensor A = placeholder({4}, Float(32), "A");
    Var i("i"), j("j");
    expect_dsl_error([&] { A(i, j, 0); }, {"tensor 'A'", "1 dimension", "3 indices"});
}
