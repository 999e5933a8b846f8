// JSON DAGs referring to variables outside their scope, to later operations, or declaring a
// variable twice.
#include "error/DagJson.h"
#include "error/ExpectDSLError.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;
using tessel::testing::valid_dag_json;

TEST(ErrorDagJsonUndeclaredVariable, Throws) {
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0]["a"]["indices"][0]["id"] = 99;
            dag_from_json(j.dump());
        },
        {"at ops[2].body[0].a.indices[0]", "variable 99 is not declared here"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            // B reads S's axis variable: declared, but only inside S.
            j["ops"][2]["body"][0]["a"]["indices"][0]["id"] = j["ops"][1]["axis"][0];
            dag_from_json(j.dump());
        },
        {"not declared here"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][1]["body"][0]["source"][0]["a"]["tensor"] = {2, 0};  // S reads B
            dag_from_json(j.dump());
        },
        {"at ops[1].body[0].source[0].a.tensor", "operation index 2 refers to no earlier"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][1]["axis"][0] = j["ops"][1]["reduce_axis"][0]["id"];
            dag_from_json(j.dump());
        },
        {"at ops[1]", "declared twice"});
}
