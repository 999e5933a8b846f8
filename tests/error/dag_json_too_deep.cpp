// A JSON DAG nested deeper than dag_from_json reads: an error, not a stack overflow.
#include "error/DagJson.h"
#include "error/ExpectDSLError.h"

using namespace tessel;
using tessel::testing::expect_dsl_error;
using tessel::testing::valid_dag_json;

namespace {
// The valid DAG with B's body, S(i) + 1, wrapped in `levels` Not nodes.
std::string nested_dag(int levels) {
    nlohmann::json j = valid_dag_json();
    std::string body = j["ops"][2]["body"][0].dump();
    std::string deep;
    for (int i = 0; i < levels; ++i) deep += "{\"node\":\"Not\",\"a\":";
    deep += body;
    deep += std::string(levels, '}');
    std::string text = j.dump();
    std::string marker = "\"body\":[" + body + "]";
    size_t at = text.find(marker);
    EXPECT_NE(at, std::string::npos);
    text.replace(at, marker.size(), "\"body\":[" + deep + "]");
    return text;
}
}  // namespace

TEST(ErrorDagJsonTooDeep, Throws) {
    // Too deep for the JSON parser: refused before parsing.
    expect_dsl_error([] { dag_from_json(nested_dag(100000)); },
                     {"dag_from_json", "the JSON is nested deeper than"});
    // Within the parser's limit, too deep an expression.
    expect_dsl_error(
        [] { dag_from_json(nested_dag(kMaxJsonExprDepth + 1)); },
        {"dag_from_json", "expressions nested deeper than " + std::to_string(kMaxJsonExprDepth)});
}
