// Jobs (auto_schedule/tuner/Job.h): what a job file may say, every problem of a bad one listed
// before any work, hostile files refused without a crash, and the network presets as tasks.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "daemon/DaemonTestUtil.h"
#include "tessel/auto_schedule/task/Workload.h"
#include "tessel/auto_schedule/tuner/Job.h"
#include "tessel/op/Networks.h"
#include "tessel/te/Serialize.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

std::vector<std::string> problems_of(const std::string& text) {
    try {
        parse_job(text);
    } catch (const JobError& e) {
        return e.problems();
    }
    return {};
}

}  // namespace

TEST(Job, ASmallJobParsesWithItsDefaults) {
    Job job = parse_job(small_job(2, 40));
    EXPECT_EQ(job.trials, 40);
    EXPECT_EQ(job.tuning.measurements_per_round, 8);
    EXPECT_EQ(job.strategy, "gradient");
    EXPECT_EQ(job.tuning.seed, 5u);
    ASSERT_EQ(job.tasks.size(), 2u);
    EXPECT_EQ(job.tasks[1].workload, "matmul");
    EXPECT_EQ(job.tasks[1].weight, 2);
    // "float32" became a dtype: the task's key does not depend on the spelling.
    EXPECT_TRUE(std::holds_alternative<Type>(job.tasks[0].params[3]));
    EXPECT_EQ(job.tuning.population, 64);
    EXPECT_EQ(job.cost_model, "shared");
    EXPECT_TRUE(job.tuning.measure_default);
    EXPECT_EQ(job.tuning.restart_after, 0);
    EXPECT_EQ(job.tuning.measure.min_repeat_ms, 1);
    EXPECT_NE(job.target.find("-num-cores=2"), std::string::npos);  // canonical
}

// A task may mark inputs constant (the layout-rewrite option): its search task's DAG has them
// constant, and the job's JSON round-trips the names; an unknown name or a non-list is a problem.
TEST(Job, TasksMayMarkInputsConstant) {
    const std::string b =
        make_workload("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)})
            .inputs.at(1)
            .op()
            ->name;
    std::string text = small_job(1, 8);
    const std::string weight = R"("weight": 1})";
    std::string with = text;
    with.replace(with.find(weight), weight.size(), R"("weight": 1, "constant": [")" + b + R"("]})");
    Job job = parse_job(with);
    ASSERT_EQ(job.tasks.size(), 1u);
    EXPECT_EQ(job.tasks[0].constant, std::vector<std::string>{b});
    std::vector<SearchTask> tasks = job_search_tasks(job);
    EXPECT_EQ(tasks[0].constant(), std::vector<std::string>{b});
    EXPECT_NE(tasks[0].key(), job_search_tasks(parse_job(text))[0].key());
    EXPECT_EQ(parse_job(job_to_json(job)).tasks[0].constant, job.tasks[0].constant);
    std::string unknown = text;
    unknown.replace(unknown.find(weight), weight.size(), R"("weight": 1, "constant": ["nope"]})");
    std::vector<std::string> p = problems_of(unknown);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("tasks[0].constant"), std::string::npos) << p[0];
    EXPECT_NE(p[0].find("'nope'"), std::string::npos) << p[0];
    std::string bad = text;
    bad.replace(bad.find(weight), weight.size(), R"("weight": 1, "constant": "B"})");
    p = problems_of(bad);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("list of input names"), std::string::npos) << p[0];
}

// A task made from a DAG (a model's fused group: ts.auto_schedule.extract_tasks of a model graph)
// carries its DAG; its search task is the DAG's, keyed by its hash, and the job round-trips.
TEST(Job, ATaskMayCarryItsDag) {
    TensorDAG dag = make_workload("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)});
    const std::string b = dag.inputs.at(1).op()->name;
    auto job_of = [](const std::string& task) {
        return R"({"format_version": 1, "target": "llvm", "trials": 4, "tasks": [)" + task + "]}";
    };
    std::string task = R"({"dag": )" + dag_to_json(dag) + R"(, "weight": 3})";
    Job job = parse_job(job_of(task));
    ASSERT_EQ(job.tasks.size(), 1u);
    EXPECT_TRUE(job.tasks[0].workload.empty());
    EXPECT_EQ(job.tasks[0].weight, 3);
    std::vector<SearchTask> tasks = job_search_tasks(job);
    EXPECT_TRUE(tasks[0].workload_name().empty());
    EXPECT_EQ(tasks[0].dag_hash(), SearchTask(dag, Target("llvm")).dag_hash());
    EXPECT_EQ(tasks[0].key().rfind("[\"dag:", 0), 0u) << tasks[0].key();
    Job again = parse_job(job_to_json(job));
    EXPECT_EQ(job_search_tasks(again)[0].key(), tasks[0].key());
    // constant marks apply to the DAG (and so to its key)
    std::string constant = R"({"dag": )" + dag_to_json(dag) + R"(, "constant": [")" + b + R"("]})";
    Job marked = parse_job(job_of(constant));
    EXPECT_NE(job_search_tasks(marked)[0].key(), tasks[0].key());
    EXPECT_EQ(job_search_tasks(parse_job(job_to_json(marked)))[0].key(),
              job_search_tasks(marked)[0].key());
    // problems: the same DAG twice, a DAG with a workload, a DAG that does not read
    std::vector<std::string> p = problems_of(job_of(task + ", " + task));
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("listed twice"), std::string::npos) << p[0];
    p = problems_of(job_of(R"({"dag": )" + dag_to_json(dag) + R"(, "workload": "matmul"})"));
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("not both"), std::string::npos) << p[0];
    p = problems_of(job_of(R"({"dag": {"format": "tessel.dag", "version": 1}})"));
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("tasks[0].dag"), std::string::npos) << p[0];
}

// "constant_weights" marks each network layer's weights (PresetLayer::weights) constant.
TEST(Job, ANetworksWeightsMayBeConstant) {
    const std::string head =
        R"({"format_version": 1, "target": "llvm -num-cores=2", "trials": 1, )";
    Job plain = parse_job(head + R"("network": "resnet50"})");
    Job packed = parse_job(head + R"("network": "resnet50", "constant_weights": true})");
    ASSERT_EQ(packed.tasks.size(), plain.tasks.size());
    int marked = 0, winograd = 0;
    for (size_t i = 0; i < packed.tasks.size(); ++i) {
        EXPECT_TRUE(plain.tasks[i].constant.empty());
        const std::string& workload = packed.tasks[i].workload;
        const bool weighted = workload == "op.conv2d_nchw" || workload == "op.dense" ||
                              workload == "op.conv2d_nchw_winograd";
        EXPECT_EQ(packed.tasks[i].constant,
                  weighted ? std::vector<std::string>{"w"} : std::vector<std::string>{});
        marked += weighted;
        // Constant weights: the 3 x 3 stride-1 convolutions by Winograd (op::blocked_layers with
        // block 0); the other layers as the plain job's.
        if (workload == "op.conv2d_nchw_winograd") {
            ++winograd;
            EXPECT_EQ(plain.tasks[i].workload, "op.conv2d_nchw");
        } else {
            EXPECT_EQ(workload, plain.tasks[i].workload);
        }
        EXPECT_EQ(packed.tasks[i].params, plain.tasks[i].params);
    }
    EXPECT_EQ(marked, 24);
    EXPECT_EQ(winograd, 4);  // 64 x 56^2, 128 x 28^2, 256 x 14^2, 512 x 7^2
    EXPECT_EQ(job_search_tasks(packed)[0].constant(), std::vector<std::string>{"w"});  // conv 7 x 7
    std::vector<std::string> p = problems_of(head + R"("tasks": [], "constant_weights": true})");
    ASSERT_FALSE(p.empty());
    EXPECT_NE(p[0].find("constant_weights"), std::string::npos) << p[0];
}

// "layout": "NCHW<b>c" puts a network's convolutions on blocked activations (op::blocked_layers),
// and the blocked tasks survive the round trip.
TEST(Job, ANetworksLayoutBlocksItsConvolutions) {
    const std::string head =
        R"({"format_version": 1, "target": "llvm -num-cores=2", "trials": 1, "network": "resnet50", )";
    Job job = parse_job(head + R"("layout": "NCHW16c", "constant_weights": true})");
    EXPECT_EQ(job.layout, "NCHW16c");
    std::vector<op::PresetLayer> expected =
        op::blocked_layers(op::network_preset("resnet50"), 16, true);
    ASSERT_EQ(job.tasks.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(job.tasks[i].workload, expected[i].workload);
        EXPECT_EQ(job.tasks[i].params, expected[i].params);
    }
    EXPECT_EQ(job.tasks[0].workload, "op.conv2d_nchwc");
    EXPECT_EQ(job.tasks[0].constant, std::vector<std::string>{"w"});
    // Constant weights: the 3 x 3 stride-1 convolutions by Winograd (op::blocked_layers);
    // without, conv2d_nchwc.
    EXPECT_EQ(job.tasks[3].workload, "op.conv2d_nchwc_winograd");
    EXPECT_EQ(parse_job(head + R"("layout": "NCHW16c"})").tasks[3].workload, "op.conv2d_nchwc");
    Job again = parse_job(job_to_json(job));
    ASSERT_EQ(again.tasks.size(), job.tasks.size());
    EXPECT_EQ(job_search_tasks(again)[0].key(), job_search_tasks(job)[0].key());
    EXPECT_EQ(job_search_tasks(again)[0].constant(), std::vector<std::string>{"w"});

    std::vector<std::string> p = problems_of(head + R"("layout": "NHWC"})");
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("layout: layout 'NHWC'"), std::string::npos) << p[0];
    p = problems_of(
        R"({"format_version": 1, "target": "llvm", "trials": 1, "tasks": [], "layout": "NCHW8c"})");
    ASSERT_FALSE(p.empty());
    EXPECT_NE(p[0].find("give a network"), std::string::npos) << p[0];
}

TEST(Job, ANetworkPresetBecomesItsLayersWeightedByTheirCounts) {
    Job job = parse_job(R"({"format_version": 1, "target": "llvm", "trials_per_task": 128,
                            "network": "resnet50"})");
    std::vector<op::PresetLayer> layers = op::network_preset("resnet50");
    ASSERT_EQ(job.tasks.size(), layers.size());
    EXPECT_EQ(job.trials, 128 * static_cast<int64_t>(layers.size()));
    double convs = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
        EXPECT_EQ(job.tasks[i].workload, layers[i].workload);
        EXPECT_EQ(job.tasks[i].weight, layers[i].count);
        if (layers[i].workload == "op.conv2d_nchw") convs += job.tasks[i].weight;
    }
    EXPECT_EQ(convs, 53);  // ResNet-50's convolutions
    // The tasks of a preset and listed ones together; the round trip keeps them all.
    job.cost_model = "per-task";
    job.tuning.measure_default = false;
    job.tuning.restart_after = 192;
    Job again = parse_job(job_to_json(job));
    EXPECT_EQ(again.cost_model, "per-task");
    EXPECT_FALSE(again.tuning.measure_default);
    EXPECT_EQ(again.tuning.restart_after, 192);
    EXPECT_EQ(again.tasks.size(), job.tasks.size());
    EXPECT_EQ(again.trials, job.trials);
    EXPECT_EQ(job_search_tasks(again)[3].key(), job_search_tasks(job)[3].key());
}

TEST(Job, EveryProblemIsListed) {
    std::vector<std::string> p = problems_of(R"({
        "format_version": 1, "target": "nonsense", "trials": 0,
        "strategy": "greedy", "colour": "blue", "measurements_per_round": 1.5,
        "tasks": [{"workload": "op.nothing", "params": []},
                  {"workload": "matmul", "params": [16, 16, "float32"]},
                  {"workload": "matmul", "params": [16, 16, -4, "float32"]},
                  {"workload": "matmul", "params": [8, 8, 8, "float32"], "weight": -1},
                  {"params": [1]}, 7],
        "search": {"population": "many", "cost_model": "global", "restart_after": -5},
        "measure": {"run_timeout": 0},
        "cluster": {"address": "head", "fallback": "sometimes"}})");
    std::string all;
    for (const std::string& s : p) all += s + "\n";
    EXPECT_EQ(p.size(), 17u) << all;
    for (const char* needle :
         {"target", "trials must be in [1", "strategy", "unknown field colour",
          "measurements_per_round must be an integer", "unknown workload 'op.nothing'", "tasks[1]",
          "tasks[2]", "tasks[3].weight", "tasks[4]: no workload", "tasks[5] must be",
          "search.population", "cost_model must be \"shared\" or \"per-task\", got \"global\"",
          "search.restart_after", "measure.run_timeout", "cluster.fallback must be",
          "address \"head\" is not"})
        EXPECT_NE(all.find(needle), std::string::npos) << needle << " in\n" << all;
}

TEST(Job, AClusterFieldNamesWhereTheJobMeasures) {
    auto with = [](const std::string& cluster) {
        std::string j = small_job(1, 8);
        return j.substr(0, j.rfind('}')) + ", \"cluster\": " + cluster + "}";
    };
    Job none = parse_job(small_job(1, 8));
    EXPECT_EQ(none.cluster.address, "");
    EXPECT_EQ(none.cluster.fallback, "local");
    EXPECT_EQ(nlohmann::json::parse(job_to_json(none)).count("cluster"), 0u);
    Job plain = parse_job(with(R"("10.0.0.1:6379")"));
    EXPECT_EQ(plain.cluster.address, "10.0.0.1:6379");
    EXPECT_EQ(plain.cluster.fallback, "local");
    EXPECT_EQ(plain.cluster.build, "auto");
    Job full = parse_job(
        with(R"({"address": "ray://head.example:10001", "fallback": "wait", "build": "daemon"})"));
    EXPECT_EQ(full.cluster.address, "ray://head.example:10001");
    EXPECT_EQ(full.cluster.fallback, "wait");
    EXPECT_EQ(full.cluster.build, "daemon");
    Job again = parse_job(job_to_json(full));
    EXPECT_EQ(again.cluster.address, full.cluster.address);
    EXPECT_EQ(again.cluster.fallback, "wait");
    EXPECT_EQ(again.cluster.build, "daemon");
    EXPECT_EQ(parse_job(with(R"({"address": "auto", "fallback": "fail"})")).cluster.address,
              "auto");
    EXPECT_EQ(parse_job(with(R"({"address": "[::1]:6379"})")).cluster.address, "[::1]:6379");
    // Each bad value is a problem naming the field, listed with the job's others.
    struct Bad {
        const char* cluster;
        const char* needle;
    };
    for (const Bad& b : std::vector<Bad>{
             {"7", "cluster must be an object {address, fallback, build} or an address string"},
             {R"("head")", "address \"head\" is not the Ray head's HOST:PORT"},
             {R"("head:0")", "address \"head:0\" is not"},
             {R"("head:65536")", "is not"},
             {R"("head:63 79")", "is not"},
             {R"(":6379")", "is not"},
             {R"({"fallback": "wait"})", "cluster: no address"},
             {R"({"address": 6379})", "cluster.address"},
             {R"({"address": "h:1", "fallback": "later"})",
              "cluster.fallback must be \"local\", \"wait\" or \"fail\", got \"later\""},
             {R"({"address": "h:1", "build": "gpu"})",
              "cluster.build must be \"auto\", \"daemon\" or \"nodes\", got \"gpu\""},
             {R"({"address": "h:1", "colour": "blue"})", "unknown field cluster.colour"}}) {
        std::vector<std::string> p = problems_of(with(b.cluster));
        ASSERT_EQ(p.size(), 1u) << b.cluster;
        EXPECT_NE(p[0].find(b.needle), std::string::npos) << b.cluster << ": " << p[0];
    }
}

TEST(Job, HostileFilesAreRefusedWithoutACrash) {
    const std::vector<std::string> hostile = {
        "",
        "[]",
        "null",
        "{",
        std::string(100000, '[') + std::string(100000, ']'),
        R"({"format_version": 1, "target": "llvm", "trials": 1e999, "tasks": []})",
        R"({"format_version": 1, "target": "llvm", "trials": NaN, "tasks": []})",
        R"({"format_version": 1, "target": "llvm", "trials": 99999999999999999999999, "tasks": []})",
        R"({"format_version": 1, "target": "llvm", "trials": 10, "tasks": {"a": 1}})",
        R"({"format_version": 1, "target": 7, "trials": 10, "tasks": [{"workload": 1, "params": 2}]})",
        R"({"format_version": 2, "target": "llvm", "trials": 10, "network": "vgg"})",
        R"({"format_version": 1, "target": "llvm", "trials": 10, "tasks": [{"workload": "matmul",
            "params": [16, 16, 16, {"dtype": "float99"}]}]})",
        R"({"format_version": 1, "target": "llvm", "trials": 10, "tasks": [{"workload": "matmul",
            "params": [16, 16, 16, "float32"]}, {"workload": "matmul", "params": [16, 16, 16,
            "float32"]}]})",
        std::string("{\"format_version\": 1, \"name\": \"") + std::string(5 << 20, 'x') + "\"}",
        "{\"format_version\": 1, \"target\": \"llvm\xff\xfe\", \"trials\": 1}",
    };
    for (size_t i = 0; i < hostile.size(); ++i) {
        try {
            parse_job(hostile[i], "hostile");
            ADD_FAILURE() << "hostile job " << i << " was accepted";
        } catch (const JobError& e) {
            EXPECT_FALSE(e.problems().empty()) << i;
            EXPECT_NE(std::string(e.what()).find("hostile"), std::string::npos) << i;
        }
    }
}

TEST(Job, LoadJobNamesTheJobAfterItsFile) {
    fs::path dir = fresh_dir();
    write_file(dir / "resnet_cpu.json", small_job(1, 8));
    Job job = load_job((dir / "resnet_cpu.json").string());
    EXPECT_EQ(job.name, "resnet_cpu");
    EXPECT_THROW(load_job((dir / "missing.json").string()), JobError);
}

TEST(Job, TaskLogNamesAreStableAndDistinct) {
    Job job = parse_job(small_job(3, 8));
    std::vector<SearchTask> tasks = job_search_tasks(job);
    EXPECT_NE(task_log_name(tasks[0]), task_log_name(tasks[1]));
    EXPECT_EQ(task_log_name(tasks[0]), task_log_name(job_search_tasks(job)[0]));
    EXPECT_EQ(task_log_name(tasks[0]).rfind("matmul-", 0), 0u);
    EXPECT_EQ(task_log_name(tasks[0]).size(), std::string("matmul-").size() + 16 + 6);
}

TEST(Job, TheTuningFieldsAreTheDescribedOnes) {
    // Every TuningOptions search field and MeasureOptions measure field is a job field, written
    // back by job_to_json and read again to an equal value (TuningOptions::fields).
    Job job = parse_job(small_job(1, 8));
    job.tuning.mutation_prob = 0.5;
    job.tuning.remeasure_limit = 5;
    job.tuning.measure.build_threads = 3;
    nlohmann::json j = nlohmann::json::parse(job_to_json(job));
    for (const char* name : {"population", "generations", "mutation_prob", "eps_greedy",
                             "remeasure_top", "remeasure_limit", "measure_default", "restart_after",
                             "num_threads", "min_programs", "cost_model"})
        EXPECT_TRUE(j["search"].contains(name)) << name;
    for (const char* name : {"number", "repeat", "min_repeat_ms", "flush_cache", "build_timeout",
                             "run_timeout", "build_threads"})
        EXPECT_TRUE(j["measure"].contains(name)) << name;
    EXPECT_FALSE(j["measure"].contains("worker_path"));  // not a job field
    EXPECT_EQ(j["measurements_per_round"], 8);
    Job again = parse_job(job_to_json(job));
    EXPECT_EQ(again.tuning.mutation_prob, 0.5);
    EXPECT_EQ(again.tuning.remeasure_limit, 5);
    EXPECT_EQ(again.tuning.measure.build_threads, 3);
    // A field outside the description is a problem, named with its path.
    std::vector<std::string> p = problems_of(R"({"format_version": 1, "target": "llvm",
        "trials": 8, "tasks": [{"workload": "matmul", "params": [4, 4, 4, "float32"]}],
        "search": {"population": 0, "worker_path": "x"}, "measure": {"repeats": 2}})");
    ASSERT_EQ(p.size(), 3u);
    EXPECT_NE(p[0].find("unknown field search.worker_path"), std::string::npos) << p[0];
    EXPECT_NE(p[1].find("search.population must be in [1, 1048576], got 0"), std::string::npos)
        << p[1];
    EXPECT_NE(p[2].find("unknown field measure.repeats"), std::string::npos) << p[2];
}

TEST(Job, SearchAheadIsATopLevelFlagWrittenBackAndChecked) {
    Job job = parse_job(small_job(1, 8));
    EXPECT_FALSE(job.tuning.search_ahead);
    job.tuning.search_ahead = true;
    nlohmann::json j = nlohmann::json::parse(job_to_json(job));
    EXPECT_EQ(j["search_ahead"], true);
    EXPECT_TRUE(parse_job(job_to_json(job)).tuning.search_ahead);
    j["search_ahead"] = "yes";
    std::vector<std::string> p = problems_of(j.dump());
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("search_ahead"), std::string::npos) << p[0];
    j["search_ahead"] = 1;
    EXPECT_EQ(problems_of(j.dump()).size(), 1u);
}

TEST(Job, OverridesAreMergedOverTheFileAndCheckedWithIt) {
    fs::path dir = fresh_dir();
    write_file(dir / "j.json", small_job(2, 40));
    Job job = load_job((dir / "j.json").string(),
                       R"({"seed": 9, "search": {"population": 32}, "measure": {"number": 2}})");
    EXPECT_EQ(job.tuning.seed, 9u);
    EXPECT_EQ(job.tuning.population, 32);
    EXPECT_EQ(job.tuning.measure.number, 2);
    EXPECT_EQ(job.tuning.measure.min_repeat_ms, 1);  // the file's, untouched
    EXPECT_EQ(job.tuning.measurements_per_round, 8);
    try {
        load_job((dir / "j.json").string(), R"({"search": {"generations": -1}})");
        ADD_FAILURE() << "a bad override was accepted";
    } catch (const JobError& e) {
        ASSERT_EQ(e.problems().size(), 1u);
        EXPECT_NE(e.problems()[0].find("search.generations"), std::string::npos);
    }
    EXPECT_THROW(load_job((dir / "j.json").string(), "[1]"), JobError);
}
