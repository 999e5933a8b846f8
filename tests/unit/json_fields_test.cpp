// The typed JSON-field reader (support/JsonFields.h): each type it reads, a missing field, a wrong
// type, a value out of range, unknown fields and names, over nlohmann::json and ordered_json alike;
// then one problem as each of its callers words it (a job, a tuning record, a search task, the DAG
// reader, the measurement protocol).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/JsonFields.h"
#include "tessel/Error.h"
#include "tessel/auto_schedule/measure/MeasureRunner.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/tuner/Job.h"
#include "tessel/te/Operation.h"
#include "tessel/te/Serialize.h"

using namespace tessel;

// (A named namespace: the unit tests are compiled as unity batches.)
namespace json_fields_test {

using namespace tessel::internal;
using Kind = FieldProblem::Kind;

enum class Colour { Red, Green };

std::optional<Colour> colour_from_name(const std::string& s) {
    if (s == "red") return Colour::Red;
    if (s == "green") return Colour::Green;
    return std::nullopt;
}

const char* kDoc = R"({"n": 7, "neg": -3, "big": 18446744073709551615, "x": 2.5, "flag": true,
                      "s": "hi", "list": [1, 2], "obj": {"k": 1}, "c": "green"})";

// Reads every type from `text` as JSON type J; no problem may be reported.
template <typename J>
void reads_every_type() {
    J j = J::parse(kDoc);
    std::vector<FieldProblem> problems;
    BasicJsonFields<J> f(j, "doc", [&](const FieldProblem& p) { problems.push_back(p); });
    int n = 0;
    int64_t neg = 0;
    uint64_t big = 0;
    double x = 0;
    bool flag = false;
    std::string s;
    Colour c = Colour::Red;
    EXPECT_TRUE(f.integer("n", n, 0, 10, kRequired));
    EXPECT_TRUE(f.integer("neg", neg, -5, 5));
    EXPECT_TRUE(f.unsigned_integer("big", big, kRequired));
    EXPECT_TRUE(f.number("x", x, 0, 3));
    EXPECT_TRUE(f.number("n", x, 0, 10));  // an integer is a number
    EXPECT_TRUE(f.boolean("flag", flag));
    EXPECT_TRUE(f.text("s", s, kRequired));
    EXPECT_TRUE(f.choice("c", c, colour_from_name, "a colour"));
    ASSERT_NE(f.array("list"), nullptr);
    EXPECT_EQ(f.array("list")->size(), 2u);
    std::optional<BasicJsonFields<J>> obj = f.fields("obj", kRequired);
    ASSERT_TRUE(obj.has_value());
    int k = 0;
    EXPECT_TRUE(obj->integer("k", k, 0, 1));
    EXPECT_EQ(obj->name("k"), "doc.obj.k");
    int item = 0;
    EXPECT_TRUE(f.integer_item((*f.array("list"))[1], "an item", item, 0, 5));
    f.only({"n", "neg", "big", "x", "flag", "s", "list", "obj", "c"});
    f.require({"n", "s"});
    EXPECT_TRUE(problems.empty()) << describe(problems[0]);
    EXPECT_EQ(n, 7);
    EXPECT_EQ(neg, -3);
    EXPECT_EQ(big, 18446744073709551615ull);
    EXPECT_DOUBLE_EQ(x, 7.0);
    EXPECT_TRUE(flag);
    EXPECT_EQ(s, "hi");
    EXPECT_EQ(c, Colour::Green);
    EXPECT_EQ(k, 1);
    EXPECT_EQ(item, 2);
}

// Each bad read reports one problem and leaves its destination alone.
template <typename J>
void reports_each_problem() {
    J j = J::parse(kDoc);
    std::vector<FieldProblem> problems;
    BasicJsonFields<J> f(j, "doc", [&](const FieldProblem& p) { problems.push_back(p); });
    int n = -1;
    EXPECT_FALSE(f.integer("absent", n, 0, 10));  // optional: no problem
    EXPECT_TRUE(problems.empty());
    EXPECT_FALSE(f.integer("absent", n, 0, 10, kRequired));
    EXPECT_FALSE(f.integer("x", n, 0, 10));           // 2.5 is no integer
    EXPECT_FALSE(f.integer("n", n, 0, 5));            // above
    EXPECT_FALSE(f.integer("neg", n, 0, 5));          // below
    EXPECT_FALSE(f.integer("big", n, 0, 1ll << 40));  // does not fit int
    uint64_t u = 0;
    EXPECT_FALSE(f.unsigned_integer("neg", u));
    double d = -1;
    EXPECT_FALSE(f.number("s", d, 0, 1));
    EXPECT_FALSE(f.number("x", d, 0, 1));
    bool b = false;
    EXPECT_FALSE(f.boolean("n", b));
    std::string s = "kept";
    EXPECT_FALSE(f.text("list", s));
    EXPECT_EQ(f.array("obj"), nullptr);
    EXPECT_EQ(f.object("list"), nullptr);
    Colour c = Colour::Red;
    EXPECT_FALSE(f.choice("s", c, colour_from_name, "a colour"));
    f.only({"n"});
    EXPECT_EQ(n, -1);
    EXPECT_EQ(u, 0u);
    EXPECT_EQ(d, -1);
    EXPECT_EQ(s, "kept");
    EXPECT_EQ(c, Colour::Red);

    std::vector<std::string> said;
    for (const FieldProblem& p : problems) said.push_back(describe(p));
    std::vector<std::string> expected = {
        "missing field 'doc.absent'",
        "doc.x must be an integer, got 2.5",
        "doc.n must be in [0, 5], got 7",
        "doc.neg must be in [0, 5], got -3",
        "doc.big must be in [0, 1099511627776], got 18446744073709551615",
        "doc.neg must be in [0, 18446744073709551615], got -3",
        "doc.s must be a number, got \"hi\"",
        "doc.x must be in [0.0, 1.0], got 2.5",
        "doc.n must be true or false, got 7",
        "doc.list must be a string, got [1,2]",
        "doc.obj must be an array, got {\"k\":1}",
        "doc.list must be an object, got [1,2]",
        "doc.s must be a colour, got \"hi\"",
    };
    for (const char* unknown : {"big", "c", "flag", "list", "neg", "obj", "s", "x"})
        expected.push_back(std::string("unknown field doc.") + unknown);
    if (std::is_same_v<J, nlohmann::ordered_json>) {  // the document's order, not sorted
        expected.resize(expected.size() - 8);
        for (const char* unknown : {"neg", "big", "x", "flag", "s", "list", "obj", "c"})
            expected.push_back(std::string("unknown field doc.") + unknown);
    }
    EXPECT_EQ(said, expected);

    // What a reporter gets besides the words: the kind, the key, above or below the range.
    ASSERT_GE(problems.size(), 5u);
    EXPECT_EQ(problems[0].kind, Kind::Missing);
    EXPECT_EQ(problems[0].key, "absent");
    EXPECT_EQ(problems[1].kind, Kind::WrongType);
    EXPECT_EQ(problems[1].expected, JsonType::Integer);
    EXPECT_EQ(problems[1].type_name, "number");
    EXPECT_TRUE(problems[2].above);
    EXPECT_FALSE(problems[3].above);
    EXPECT_TRUE(problems[4].above);  // beyond int: above
}

}  // namespace json_fields_test

TEST(JsonFields, ReadsEveryTypeOverBothJsonTypes) {
    json_fields_test::reads_every_type<nlohmann::json>();
    json_fields_test::reads_every_type<nlohmann::ordered_json>();
}

TEST(JsonFields, ReportsMissingWrongTypeAndOutOfRangeOverBothJsonTypes) {
    json_fields_test::reports_each_problem<nlohmann::json>();
    json_fields_test::reports_each_problem<nlohmann::ordered_json>();
}

TEST(JsonFields, ListItemsAndNonObjects) {
    using namespace tessel::internal;
    using Kind = FieldProblem::Kind;
    nlohmann::json j = nlohmann::json::parse(R"([1.5, "x", -1])");
    std::vector<FieldProblem> problems;
    JsonFields f(j, "costs", [&](const FieldProblem& p) { problems.push_back(p); });
    double d = 0;
    EXPECT_TRUE(f.number_item(j[0], "a cost", d, 0, 10));
    EXPECT_EQ(d, 1.5);
    EXPECT_FALSE(f.number_item(j[1], "a cost", d, 0, 10));
    EXPECT_FALSE(f.number_item(j[2], "a cost", d, 0, 10));
    int n = 0;
    EXPECT_FALSE(f.integer("a", n, 0, 1, kRequired));  // an array has no fields: reported once
    EXPECT_FALSE(f.integer("b", n, 0, 1, kRequired));
    f.only({});
    ASSERT_EQ(problems.size(), 3u);
    EXPECT_FALSE(problems[0].field);
    EXPECT_EQ(problems[0].key, "a cost");
    EXPECT_EQ(describe(problems[0]), "a cost must be a number, got \"x\"");
    EXPECT_EQ(describe(problems[1]), "a cost must be in [0.0, 10.0], got -1");
    EXPECT_EQ(problems[2].kind, Kind::NotAnObject);
    EXPECT_EQ(problems[2].key, "a");
    EXPECT_EQ(describe(problems[2]), "costs must be an object");
}

TEST(JsonFields, LongValuesAreCutAndCollectIntoKeepsGoing) {
    using namespace tessel::internal;
    nlohmann::json j = {{"s", std::string(100, 'a')}, {"n", "1"}};
    std::vector<std::string> problems;
    JsonFields f(j, "", collect_into(problems));
    int n = 0;
    f.integer("s", n, 0, 1);
    f.integer("n", n, 0, 1);
    f.problem("and the caller's own words");
    ASSERT_EQ(problems.size(), 3u);
    EXPECT_EQ(problems[0], "s must be an integer, got \"" + std::string(39, 'a') + "...");
    EXPECT_EQ(problems[1], "n must be an integer, got \"1\"");
    EXPECT_EQ(problems[2], "and the caller's own words");
}

// One kind of problem (a field of the wrong type) as each caller words it.
TEST(JsonFields, EachCallerWordsItsProblems) {
    // A job: every problem collected, by path, with the value.
    try {
        parse_job(R"({"format_version": 1, "target": "llvm", "trials": "many",
                      "tasks": [{"workload": "matmul", "params": [8, 8, 8, "float32"]}]})");
        ADD_FAILURE() << "a job with trials \"many\" was accepted";
    } catch (const JobError& e) {
        ASSERT_EQ(e.problems().size(), 1u) << e.what();
        EXPECT_EQ(e.problems()[0], "trials must be an integer, got \"many\"");
    }

    // A tuning record: skipped with a reason that names the field but not its value.
    SearchTask task("matmul", {int64_t(8), int64_t(8), int64_t(8), Float(32)}, Target("llvm"));
    Schedule s = task.initial_schedule();
    MeasureResult result;
    result.costs = {1e-3};
    nlohmann::json record = nlohmann::json::parse(
        record_to_json(make_record(task, {s, CandidateOrigin::Random}, result, 1, 0)));
    std::string why;
    record["task"]["hardware"]["num_cores"] = "sixteen";
    EXPECT_FALSE(record_from_json(record.dump(), &why).has_value());
    EXPECT_EQ(why, "field 'num_cores' is not an integer");
    record["task"]["hardware"]["num_cores"] = -4;
    EXPECT_FALSE(record_from_json(record.dump(), &why).has_value());
    EXPECT_EQ(why, "field 'num_cores' out of range");
    record["task"]["hardware"]["num_cores"] = 4;
    record["result"]["costs"] = {1e-3, "fast"};
    EXPECT_FALSE(record_from_json(record.dump(), &why).has_value());
    EXPECT_EQ(why, "a cost is not a number");
    record["result"]["costs"] = {1e-3};
    record["task"]["params"] = "8,8,8";
    EXPECT_FALSE(record_from_json(record.dump(), &why).has_value());
    EXPECT_EQ(why, "field 'params' is not a list");

    // A search task: a DSLError naming the function and the field.
    nlohmann::json t = nlohmann::json::parse(task.to_json());
    t["workload"] = 3;
    try {
        SearchTask::from_json(t.dump());
        ADD_FAILURE() << "a task whose workload is 3 was accepted";
    } catch (const DSLError& e) {
        EXPECT_STREQ(e.what(), "SearchTask.from_json: field 'workload' is missing or not a string");
    }
    t = nlohmann::json::parse(task.to_json());
    t["hardware"]["warp_size"] = true;
    try {
        SearchTask::from_json(t.dump());
        ADD_FAILURE() << "a task whose warp size is true was accepted";
    } catch (const DSLError& e) {
        EXPECT_STREQ(e.what(),
                     "SearchTask.from_json: hardware.warp_size must be an integer, got true");
    }

    // The DAG reader: a DSLError at its JSON path, with the type found.
    nlohmann::json dag = nlohmann::json::parse(dag_to_json(task.dag()));
    dag["ops"][0]["name"] = nlohmann::json::array();
    try {
        dag_from_json(dag.dump());
        ADD_FAILURE() << "a placeholder named [] was accepted";
    } catch (const DSLError& e) {
        EXPECT_STREQ(e.what(),
                     "dag_from_json: at ops[0]: field 'name' has the wrong type: "
                     "expected a string, got array");
    }

    // The measurement protocol: a RuntimeError naming the field.
    nlohmann::json r = nlohmann::json::parse(measure_result_to_json(result));
    r["run_seconds"] = "soon";
    try {
        measure_result_from_json(r.dump());
        ADD_FAILURE() << "a result whose run time is \"soon\" was accepted";
    } catch (const RuntimeError& e) {
        EXPECT_STREQ(e.what(), "measurement JSON: field 'run_seconds' has the wrong type");
    }
}
