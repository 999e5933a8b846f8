// Shared by the daemon's tests: a fresh folder per test, small jobs of real tasks that tune in
// seconds, and tessel-tune run as a subprocess (waited for, or killed).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tessel/Target.h"
#include "tessel/auto_schedule/cost_model/CostModel.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/driver/Build.h"

namespace tessel::testing {

namespace fs = std::filesystem;

/// An empty folder for the running test.
inline fs::path fresh_dir() {
    const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
    fs::path dir = fs::temp_directory_path() / "tessel_daemon_tests" /
                   (std::string(t->test_suite_name()) + "." + t->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

inline std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_file(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

/// A job of `tasks` small matmuls (n = 16, 24, 32, ...), `trials` in all, rounds of `per_round`,
/// a small search and timing of `min_repeat_ms` a candidate.
/// A 16^3 float32 matmul for a 2-core CPU: a task that measures in milliseconds.
inline SearchTask small_task() {
    return SearchTask("matmul", {int64_t(16), int64_t(16), int64_t(16), Float(32)},
                      Target("llvm -num-cores=2"));
}

inline std::string small_job(int tasks, int64_t trials, int per_round = 8,
                             double min_repeat_ms = 1) {
    std::ostringstream os;
    os << R"({"format_version": 1, "target": "llvm -num-cores=2", "trials": )" << trials
       << R"(, "measurements_per_round": )" << per_round << R"(, "seed": 5, "tasks": [)";
    for (int i = 0; i < tasks; ++i)
        os << (i ? ", " : "") << R"({"workload": "matmul", "params": [)" << 16 + 8 * i << ", "
           << 16 + 8 * i << ", 16, \"float32\"], \"weight\": " << i + 1 << "}";
    os << R"(], "search": {"population": 64, "generations": 1, "min_programs": 8,
           "num_threads": 1}, "measure": {"build_threads": 1, "build_timeout": 20,
           "run_timeout": 5, "min_repeat_ms": )"
       << min_repeat_ms << "}}";
    return os.str();
}

#define TESSEL_SKIP_UNLESS_TUNING_RUNS()                                                     \
    do {                                                                                     \
        if (!has_llvm_backend()) GTEST_SKIP() << "CPU candidates need the LLVM backend";     \
        if (!CostModel::available()) GTEST_SKIP() << "the tuner's cost model needs XGBoost"; \
    } while (0)

/// tessel-tune started as a subprocess, its output in files of `dir`.
class Tool {
public:
    Tool(std::vector<std::string> args, const fs::path& dir, const std::string& tag,
         std::map<std::string, std::string> env = {}, const fs::path& cwd = {})
        : out_(dir / (tag + ".out")), err_(dir / (tag + ".err")) {
        args.insert(args.begin(), TESSEL_TUNE_TOOL);
        if (!env.count("TESSEL_MEASURE_WORKER")) env["TESSEL_MEASURE_WORKER"] = TESSEL_MEASURE_TOOL;
        pid_ = fork();
        if (pid_ == 0) {
            setpgid(0, 0);  // not in the test's process group: ^C and kill apart
            int o = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            int e = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(o, 1);
            dup2(e, 2);
            if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
            for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
    }
    ~Tool() {
        if (pid_ > 0 && status_ < 0) {
            kill(pid_, SIGKILL);
            wait_exit(10);
        }
    }
    pid_t pid() const { return pid_; }
    void signal(int sig) { kill(pid_, sig); }
    /// The exit status (128 + signal when killed); -1 when it runs past `seconds` (then killed).
    int wait_exit(double seconds = 300) {
        if (status_ >= 0) return status_;
        auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (true) {
            int st = 0;
            pid_t r = waitpid(pid_, &st, WNOHANG);
            if (r == pid_) {
                status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                return status_;
            }
            if (std::chrono::steady_clock::now() > until) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &st, 0);
                status_ = 1000;
                return -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    std::string out() const { return read_file(out_); }
    std::string err() const { return read_file(err_); }

private:
    fs::path out_, err_;
    pid_t pid_ = -1;
    int status_ = -1;
};

/// Runs tessel-tune to its end: {exit status, stdout, stderr}.
struct ToolRun {
    int status;
    std::string out, err;
};
inline ToolRun run_tool(const std::vector<std::string>& args, const fs::path& dir,
                        const std::string& tag, std::map<std::string, std::string> env = {},
                        const fs::path& cwd = {}) {
    Tool t(args, dir, tag, std::move(env), cwd);
    int s = t.wait_exit();
    return {s, t.out(), t.err()};
}

/// PIDs of the processes whose argv[0] is `program`.
inline std::vector<pid_t> processes_running(const std::string& program) {
    std::vector<pid_t> out;
    for (const auto& e : fs::directory_iterator("/proc")) {
        std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmd = read_file(e.path() / "cmdline");
        if (cmd.substr(0, cmd.find('\0')) == program) out.push_back(std::stoi(name));
    }
    return out;
}

}  // namespace tessel::testing
