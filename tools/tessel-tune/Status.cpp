// Progress and status (docs/daemon.md, "Watching"): the progress line and task table of a job,
// the status file the daemon replaces atomically after every round, and `tessel-tune status`,
// which reads it.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "Commands.h"
#include "LockFile.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

namespace tessel::tune_tool {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string fixed(double v, int digits) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

double number_or_nan(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}

// Whether `pid` is a live tessel-tune.
bool tessel_tune_alive(long pid) {
    if (pid <= 0 || kill(static_cast<pid_t>(pid), 0) != 0) return false;
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    return name == "tessel-tune";
}

std::vector<std::string> job_files(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".json" && e.path().filename().string()[0] != '.' &&
            e.path().filename().string().find(".result.") == std::string::npos)
            out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string first_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

void print_job(const json& job) {
    std::cout << "job " << job.value("job", std::string("?")) << ": "
              << job.value("trials", int64_t(0)) << "/" << job.value("budget", int64_t(0))
              << " trials, weighted latency " << fixed(number_or_nan(job, "weighted_latency_ms"), 3)
              << " ms, " << fixed(number_or_nan(job, "trials_per_second"), 2) << " trials/s, ETA "
              << format_duration(number_or_nan(job, "eta_seconds")) << "\n";
    std::printf("  %7s %7s %12s %10s  %s\n", "weight", "trials", "best (ms)", "GFLOP/s", "task");
    for (const json& t : job.value("tasks", json::array()))
        std::printf("  %7s %7lld %12s %10s  %s\n", fixed(number_or_nan(t, "weight"), 0).c_str(),
                    static_cast<long long>(t.value("trials", int64_t(0))),
                    fixed(number_or_nan(t, "best_ms"), 4).c_str(),
                    fixed(number_or_nan(t, "best_gflops"), 2).c_str(),
                    t.value("name", std::string("?")).c_str());
}

// The cluster the running job measures on, a line per node (docs/distributed.md).
void print_cluster(const json& c) {
    const json nodes = c.value("nodes", json::array());
    std::cout << "cluster " << c.value("address", std::string("?")) << ": "
              << c.value("state", std::string("?")) << ", " << nodes.size() << " nodes";
    std::string message = c.value("message", std::string());
    std::cout << (message.empty() ? "" : " (" + message + ")") << "\n";
    for (const json& n : nodes) {
        if (!n.is_object()) continue;
        std::string why = n.value("message", std::string());
        std::printf("  %-16s %-10s %3lld actors %7lld measured  %s\n",
                    n.value("address", std::string("?")).c_str(),
                    n.value("state", std::string("?")).c_str(),
                    static_cast<long long>(n.value("actors", int64_t(0))),
                    static_cast<long long>(n.value("measured", int64_t(0))), why.c_str());
    }
}

}  // namespace

std::string default_spool() {
    const char* env = std::getenv("TESSEL_TUNE_SPOOL");
    return env && *env ? env : "/var/lib/tessel-tune";
}

std::string progress_line(const JobProgress& p) {
    std::ostringstream os;
    os << p.job << ": " << p.trials << "/" << p.budget << " trials, weighted latency "
       << fixed(p.weighted_latency * 1e3, 3) << " ms";
    if (p.last_step) {
        const TaskSchedulerStep& s = *p.last_step;
        const JobTaskProgress& t = p.tasks[static_cast<size_t>(s.task)];
        os << " | round " << s.step << ": " << t.name << " (" << s.why << ") " << s.outcome.measured
           << " trials, best " << fixed(t.best_seconds * 1e3, 4) << " ms";
        if (t.best_gflops > 0) os << ", " << fixed(t.best_gflops, 1) << " GFLOP/s";
    }
    os << " | " << format_duration(p.elapsed_seconds) << " elapsed, "
       << fixed(p.trials_per_second, 2) << " trials/s, ETA " << format_duration(p.eta_seconds);
    return os.str();
}

std::string task_table(const JobProgress& p) {
    std::ostringstream os;
    char line[128];
    std::snprintf(line, sizeof line, "%7s %7s %12s %10s  %s\n", "weight", "trials", "best (ms)",
                  "GFLOP/s", "task");
    os << line;
    for (const JobTaskProgress& t : p.tasks) {
        std::snprintf(line, sizeof line, "%7s %7lld %12s %10s  ", fixed(t.weight, 0).c_str(),
                      static_cast<long long>(t.trials), fixed(t.best_seconds * 1e3, 4).c_str(),
                      fixed(t.best_gflops, 2).c_str());
        os << line << t.name << "\n";
    }
    os << "weighted latency: " << fixed(p.weighted_latency * 1e3, 4) << " ms\n";
    return os.str();
}

std::string job_progress_json(const JobProgress& p) {
    auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    json tasks = json::array();
    for (const JobTaskProgress& t : p.tasks)
        tasks.push_back({{"name", t.name},
                         {"key", t.key},
                         {"log", t.log_file},
                         {"weight", t.weight},
                         {"trials", t.trials},
                         {"rounds", t.rounds},
                         {"best_ms", finite(t.best_seconds * 1e3)},
                         {"best_gflops", t.best_gflops}});
    return json{{"job", p.job},
                {"trials", p.trials},
                {"budget", p.budget},
                {"resumed_trials", p.resumed_trials},
                {"weighted_latency_ms", finite(p.weighted_latency * 1e3)},
                {"elapsed_seconds", p.elapsed_seconds},
                {"trials_per_second", p.trials_per_second},
                {"eta_seconds", finite(p.eta_seconds)},
                {"tasks", std::move(tasks)}}
        .dump();
}

void write_file_atomically(const std::string& path, const std::string& text) {
    std::string tmp = path + ".tmp";
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        TESSEL_THROW(RuntimeError) << "cannot write '" << tmp << "': " << std::strerror(errno);
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            TESSEL_THROW(RuntimeError) << "cannot write '" << tmp << "': " << std::strerror(errno);
        }
        done += static_cast<size_t>(n);
    }
    bool ok = fsync(fd) == 0;
    close(fd);
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0)
        TESSEL_THROW(RuntimeError) << "cannot replace '" << path << "': " << std::strerror(errno);
    std::string dir = fs::path(path).parent_path().string();
    int dfd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

int status_command(const std::string& spool, bool as_json) {
    fs::path dir(spool);
    if (!fs::is_directory(dir)) {
        std::cerr << "tessel-tune status: no spool folder '" << spool << "'\n";
        return kNoInput;
    }
    long pid = lock_file_pid((dir / "daemon.lock").string());
    bool alive = tessel_tune_alive(pid);
    json status;
    {
        std::ifstream in(dir / "status.json");
        if (in) status = json::parse(in, nullptr, false);
        if (status.is_discarded()) status = json();
    }
    if (as_json) {
        json out = status.is_object() ? status : json::object();
        out["daemon_alive"] = alive;
        std::cout << out.dump(2) << "\n";
        return kOk;
    }
    std::cout << "spool " << spool << ": daemon "
              << (alive ? "running (pid " + std::to_string(pid) + ")" : std::string("not running"))
              << "\n";
    if (status.is_object() && status.contains("job") && status["job"].is_object()) {
        std::cout << (alive ? "" : "last ");
        print_job(status["job"]);
        if (status.contains("cluster") && status["cluster"].is_object())
            print_cluster(status["cluster"]);
    } else if (alive) {
        std::cout << "idle: no job running\n";
    }
    std::vector<std::string> queue = job_files(dir / "queue");
    std::cout << "queue: " << queue.size() << (queue.empty() ? "" : " (");
    for (size_t i = 0; i < queue.size(); ++i) std::cout << (i ? ", " : "") << queue[i];
    std::cout << (queue.empty() ? "" : ")") << "\n";
    for (const std::string& f : job_files(dir / "done")) {
        fs::path result = dir / "done" / (fs::path(f).stem().string() + ".result.json");
        std::ifstream in(result);
        json r = in ? json::parse(in, nullptr, false) : json();
        std::cout << "done: " << f;
        if (r.is_object())
            std::cout << ", " << r.value("trials", int64_t(0)) << " trials, weighted latency "
                      << fixed(number_or_nan(r, "weighted_latency_ms"), 4) << " ms";
        std::cout << "\n";
    }
    for (const std::string& f : job_files(dir / "failed"))
        std::cout << "failed: " << f << ": "
                  << first_line(dir / "failed" / (fs::path(f).stem().string() + ".reason")) << "\n";
    return kOk;
}

}  // namespace tessel::tune_tool
