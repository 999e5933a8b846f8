// Candidates built ahead of their measurement (MeasureInput::built, build_modules(): a cluster's
// daemon builds while its nodes time, docs/distributed.md): the module travels inside the
// request's JSON as base64 and is timed as it was built, a build failure made elsewhere is the
// candidate's, and the simulated worker builds for real when asked (simulate_builds).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tessel/Error.h"
#include "tessel/auto_schedule/measure/MeasureRunner.h"
#include "tessel/driver/Build.h"

#include "auto_schedule/measure/MeasureInternal.h"
#include "measure/MeasureTestUtil.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// A request whose one candidate carries `built`, through JSON and back.
MeasureRequest round_trip(const SearchTask& task, const Schedule& s, const BuiltModule& built,
                          const MeasureOptions& o) {
    MeasureInput in{s};
    in.built = std::make_shared<BuiltModule>(built);
    return measure_request_from_json(measure_request_to_json(make_measure_request(task, {in}, o)));
}

}  // namespace

TEST(MeasurePrebuilt, ModulesOfEveryLengthSurviveTheRequestsJson) {
    SearchTask task = small_matmul_task(16);
    Schedule s = good_schedule(task);
    for (size_t n = 0; n < 8; ++n) {
        BuiltModule b;
        for (size_t i = 0; i < n; ++i) b.module.push_back(static_cast<uint8_t>(251 - 37 * i));
        if (n == 0) {
            b.error = MeasureError::BuildError;  // an empty module only with its error
            b.message = "the backend said no";
        }
        b.seconds = 0.25 + static_cast<double>(n);
        MeasureRequest r = round_trip(task, s, b, fast_options());
        ASSERT_EQ(r.candidates.size(), 1u);
        ASSERT_TRUE(r.candidates[0].built);
        EXPECT_EQ(r.candidates[0].built->module, b.module) << n << " bytes";
        EXPECT_EQ(r.candidates[0].built->error, b.error);
        EXPECT_EQ(r.candidates[0].built->message, b.message);
        EXPECT_EQ(r.candidates[0].built->seconds, b.seconds);
    }
    // Absent: the measuring end builds.
    MeasureRequest plain = measure_request_from_json(
        measure_request_to_json(make_measure_request(task, {{s}}, fast_options())));
    EXPECT_FALSE(plain.candidates[0].built);
    // Malformed modules are refused with the field named, not decoded into garbage.
    auto j = nlohmann::json::parse(
        measure_request_to_json(make_measure_request(task, {{s}}, fast_options())));
    for (const char* bad : {"QUJD?", "QUJ", "Q=JD", "QU==QUJD", "=AAA"}) {
        j["candidates"][0]["built"] = {
            {"error", "none"}, {"message", ""}, {"module", bad}, {"seconds", 0.1}};
        EXPECT_THROW(measure_request_from_json(j.dump()), RuntimeError) << bad;
    }
    j["candidates"][0]["built"] = {
        {"error", "none"}, {"message", ""}, {"module", ""}, {"seconds", 0.1}};
    EXPECT_THROW(measure_request_from_json(j.dump()), RuntimeError);
    j["candidates"][0]["built"] = {{"error", "none"}, {"message", ""}, {"module", "QUJD"}};
    EXPECT_THROW(measure_request_from_json(j.dump()), RuntimeError);
}

TEST(MeasurePrebuilt, AModuleBuiltElsewhereIsTimedAsItWasBuilt) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task();
    MeasureOptions o = fast_options();
    Schedule s = good_schedule(task);
    std::vector<BuiltModule> built = build_modules(task, {{s}}, o);
    ASSERT_EQ(built.size(), 1u);
    ASSERT_EQ(built[0].error, MeasureError::None) << built[0].message;
    ASSERT_FALSE(built[0].module.empty());
    built[0].seconds = 123.5;  // a build time no build here takes: the result shows it was used

    MeasureRequest r = round_trip(task, s, built[0], o);
    LocalMeasureRunner runner(o);
    std::vector<MeasureResult> got = runner.run(r);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_TRUE(got[0].ok()) << got[0].error_message;
    EXPECT_EQ(got[0].build_seconds, 123.5);
    EXPECT_GT(got[0].mean_cost(), 0);

    // A module of another task's kernel is checked like any other: wrong, not trusted.
    SearchTask other = small_matmul_task(32);
    std::vector<BuiltModule> wrong = build_modules(other, {{good_schedule(other)}}, o);
    ASSERT_EQ(wrong[0].error, MeasureError::None);
    MeasureResult bad = runner.run(round_trip(task, s, wrong[0], o))[0];
    EXPECT_FALSE(bad.ok());

    // A build that failed where it ran is the candidate's error, with its message.
    BuiltModule failed;
    failed.error = MeasureError::BuildTimeout;
    failed.message = "the build took longer than 15 s";
    failed.seconds = 15;
    MeasureResult f = runner.run(round_trip(task, s, failed, o))[0];
    EXPECT_EQ(f.error, MeasureError::BuildTimeout);
    EXPECT_EQ(f.error_message, failed.message);
    EXPECT_EQ(f.build_seconds, 15);
}

TEST(MeasurePrebuilt, TheSimulatedWorkerBuildsWhenAsked) {
    if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";
    SearchTask task = small_matmul_task();
    MeasureOptions o = fast_options();
    o.simulate_ms = 1;
    o.worker_path = "/nonexistent/tessel-measure";  // never started: nothing is run
    o.allow_test_faults = true;
    Schedule s = good_schedule(task);
    MeasureInput good{s};
    MeasureInput hanging{s, CandidateOrigin::Manual, TestFault::BuildHang};
    // Without builds, both are "measured": nothing is built.
    std::vector<MeasureResult> plain = Measurer(o).measure(task, {good, hanging});
    ASSERT_TRUE(plain[0].ok() && plain[1].ok());
    EXPECT_EQ(plain[0].build_seconds, 0);
    // With them, the good one's build took time (a limit a sanitizer build of it keeps to)...
    o.simulate_builds = true;
    EXPECT_TRUE(measure_options_from_json(measure_options_to_json(o)).simulate_builds);
    o.build_timeout_seconds = 60;
    std::vector<MeasureResult> built = Measurer(o).measure(task, {good, good});
    ASSERT_TRUE(built[0].ok()) << built[0].error_message;
    EXPECT_GT(built[0].build_seconds, 0);
    EXPECT_EQ(built[0].costs, plain[0].costs);
    // A schedule given twice in one request is built once (its copy's build took no time).
    ASSERT_TRUE(built[1].ok()) << built[1].error_message;
    EXPECT_EQ(built[1].build_seconds, 0);
    EXPECT_EQ(built[1].costs, plain[0].costs);
    // ...and the hanging one is a build timeout, under a short limit not to wait long.
    o.build_timeout_seconds = 0.2;
    std::vector<MeasureResult> hung = Measurer(o).measure(task, {hanging});
    EXPECT_EQ(hung[0].error, MeasureError::BuildTimeout);
    EXPECT_TRUE(hung[0].costs.empty());
    EXPECT_TRUE(internal::wait_for_build_threads(30));  // the abandoned build, before exit
}
