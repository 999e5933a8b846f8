// JSON DAGs that are not JSON, not objects, or miss fields or have fields of the wrong type.
#include "error/DagJson.h"
#include "error/ExpectDSLError.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;
using tessel::testing::valid_dag_json;

TEST(ErrorDagJsonMalformed, Throws) {
    expect_dsl_error([] { dag_from_json("{\"format\": \"tessel.dag\", "); },
                     {"dag_from_json", "malformed JSON"});
    expect_dsl_error([] { dag_from_json("[1, 2]"); }, {"dag_from_json", "JSON object"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j.erase("ops");
            dag_from_json(j.dump());
        },
        {"dag_from_json", "missing field 'ops'"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][1]["body"] = "S(i) * 2";
            dag_from_json(j.dump());
        },
        {"dag_from_json", "at ops[1]", "field 'body'", "wrong type"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][0]["shape"][0]["value"] = 4.5;
            dag_from_json(j.dump());
        },
        {"at ops[0].shape[0]", "field 'value'", "expected an integer"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["outputs"][0] = {7, 0};
            dag_from_json(j.dump());
        },
        {"at outputs[0]", "operation index 7"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["inputs"] = nlohmann::json::array();
            dag_from_json(j.dump());
        },
        {"dag_from_json", "placeholder 'A'", "missing from the inputs"});
}
