// dag_to_json refuses a body that holds a node a tensor expression cannot hold.
#include "error/ExpectDSLError.h"
#include "tessel/te/Operation.h"
#include "tessel/te/Serialize.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;

TEST(ErrorDagJsonUnwritableNode, Throws) {
    Buffer buf("buf", Float(32), {Expr(4)});
    Tensor B = compute(
        {4}, [&](Var i) { return BufferLoad::make(buf, {i}); }, "B");
    expect_dsl_error([&] { dag_to_json(std::vector<Tensor>{B}); },
                     {"dag_to_json", "operation 'B'", "BufferLoad"});
    expect_dsl_error([] { dag_to_json(std::vector<Tensor>{}); }, {"dag_to_json", "no output"});
}
