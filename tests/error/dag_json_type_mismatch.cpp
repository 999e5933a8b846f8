// JSON DAGs whose expressions are ill-typed: what the DSL would refuse, and what only make()
// would catch.
#include "error/DagJson.h"
#include "error/ExpectDSLError.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;
using tessel::testing::valid_dag_json;

TEST(ErrorDagJsonTypeMismatch, Throws) {
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0]["b"]["dtype"] = "float64";  // S(i) + 1.0 (f64)
            dag_from_json(j.dump());
        },
        {"at ops[2].body[0]", "Add of mismatched types float32 and float64"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0]["node"] = "And";
            dag_from_json(j.dump());
        },
        {"And of operands of type float32"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][0]["shape"][0]["value"] = 300;
            j["ops"][0]["shape"][0]["dtype"] = "int8";
            dag_from_json(j.dump());
        },
        {"at ops[0].shape[0]", "IntImm 300 does not fit int8"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][0]["shape"][0]["value"] = -4;
            dag_from_json(j.dump());
        },
        {"placeholder 'A'", "extents must be positive"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0]["a"]["indices"][0] = {
                {"node", "FloatImm"}, {"dtype", "float32"}, {"value", 1.0}};
            dag_from_json(j.dump());
        },
        {"at ops[2].body[0].a", "compute 'B'"});
}
