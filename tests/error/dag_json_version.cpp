// A JSON DAG of another format, or of a format version this build does not read.
#include "error/DagJson.h"
#include "error/ExpectDSLError.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;
using tessel::testing::valid_dag_json;

TEST(ErrorDagJsonVersion, Throws) {
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["version"] = kDagJsonVersion + 1;
            dag_from_json(j.dump());
        },
        {"dag_from_json", "unsupported format version 2", "reads version 1"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["format"] = "tessel.steps";
            dag_from_json(j.dump());
        },
        {"dag_from_json", "field 'format'", "tessel.steps"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j.erase("version");
            dag_from_json(j.dump());
        },
        {"dag_from_json", "missing field 'version'"});
}
