// JSON DAGs naming node kinds, operation kinds, intrinsics or dtypes that do not exist, or nodes
// a tensor expression cannot hold (where it cannot hold them).
#include "error/DagJson.h"
#include "error/ExpectDSLError.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;
using tessel::testing::valid_dag_json;

TEST(ErrorDagJsonUnknownNode, Throws) {
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0]["node"] = "Shuffle";  // B's body: S(i) + 1
            dag_from_json(j.dump());
        },
        {"at ops[2].body[0]", "unknown expression node 'Shuffle'", "TensorRead"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0]["node"] = "Load";
            dag_from_json(j.dump());
        },
        {"unknown expression node 'Load'"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][1]["kind"] = "scan";
            dag_from_json(j.dump());
        },
        {"at ops[1]", "unknown operation kind 'scan'"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0] = {{"node", "Call"}, {"op", "exp3"}, {"args", {}}};
            dag_from_json(j.dump());
        },
        {"at ops[2].body[0]", "unknown intrinsic 'exp3'"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][2]["body"][0] = {{"node", "Call"}, {"op", "thread_barrier"}, {"args", {}}};
            dag_from_json(j.dump());
        },
        {"thread_barrier", "cannot occur in a tensor expression"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            nlohmann::json read = j["ops"][1]["body"][0]["source"][0]["a"];  // A[i, k]
            j["ops"][2]["shape"][0] = read;  // B's extent reads a tensor
            dag_from_json(j.dump());
        },
        {"at ops[2].shape[0]", "a TensorRead outside a compute's body"});
    expect_dsl_error(
        [] {
            nlohmann::json j = valid_dag_json();
            j["ops"][0]["dtype"] = "float33";
            dag_from_json(j.dump());
        },
        {"at ops[0]", "float33"});
}
