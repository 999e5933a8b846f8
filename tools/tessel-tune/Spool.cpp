// The daemon (docs/daemon.md): a spool folder of jobs. Jobs dropped into queue/ move to
// running/, then to done/ (with <name>.result.json) or failed/ (with <name>.reason); their logs
// are in logs/<name>/. A job found in running/ at start (the daemon was stopped or killed) is
// resumed first, from its logs. status.json is replaced atomically after every round;
// daemon.lock holds the daemon's PID under an flock, so a second daemon refuses the spool.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "Commands.h"
#include "LockFile.h"

namespace tessel::tune_tool {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double unix_time() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The job's name in the spool: its file name without .json, other characters than letters,
// digits, '.', '_' and '-' replaced.
std::string job_id(const fs::path& file) {
    std::string id = file.stem().string();
    for (char& c : id)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
            c = '_';
    if (id.empty() || id[0] == '.') id = "job" + id;
    return id;
}

// The job files of a folder in name order: *.json, not hidden (a file being written is named
// .something until it is renamed into place).
std::vector<fs::path> jobs_in(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        std::string name = e.path().filename().string();
        if (e.path().extension() == ".json" && name[0] != '.') out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

class Daemon {
public:
    explicit Daemon(const DaemonArgs& args) : root_(args.spool), args_(args) {}

    int run();

private:
    std::optional<fs::path> next_job();
    void run_job_file(const fs::path& file);
    void fail(const fs::path& file, const std::string& why);
    void write_status(const std::string& state, const std::optional<JobProgress>& job = {},
                      const std::string& file = "");
    void say(const std::string& what) { std::cerr << "tessel-tune daemon: " << what << std::endl; }
    bool wait_for_work();

    fs::path root_;
    DaemonArgs args_;
    double last_status_ = 0;
    std::shared_ptr<ClusterMeasureRunner> cluster_;  // the running job's, if it measures there
};

int Daemon::run() {
    for (const char* sub : {"queue", "running", "done", "failed", "logs"}) {
        std::error_code ec;
        fs::create_directories(root_ / sub, ec);
        if (ec) {
            say("cannot create '" + (root_ / sub).string() + "': " + ec.message());
            return kCantCreate;
        }
    }
    std::optional<LockFile> lock;
    try {
        lock.emplace((root_ / "daemon.lock").string());
    } catch (const LockHeld& e) {
        say(std::string("refusing to start: ") + e.what());
        return kUnavailable;
    }
    say("pid " + std::to_string(getpid()) + ", spool " + root_.string());
    write_status("idle");
    while (!stop_signal()) {
        std::optional<fs::path> file = next_job();
        if (!file) {
            if (args_.once || !wait_for_work()) break;
            continue;
        }
        run_job_file(*file);
    }
    write_status(stop_signal() ? "stopped" : "idle");
    say(stop_signal() ? "stopped by signal " + std::to_string(stop_signal()) : "queue empty");
    return kOk;
}

// Sleeps up to the poll interval; false when a stop was asked meanwhile.
bool Daemon::wait_for_work() {
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::duration<double>(std::max(0.01, args_.poll_seconds));
    while (std::chrono::steady_clock::now() < until) {
        if (stop_signal()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return !stop_signal();
}

// A job left in running/ (resumed first), else the first of the queue, moved to running/.
std::optional<fs::path> Daemon::next_job() {
    std::vector<fs::path> running = jobs_in(root_ / "running");
    if (!running.empty()) return running[0];
    for (const fs::path& q : jobs_in(root_ / "queue")) {
        fs::path to = root_ / "running" / (job_id(q) + ".json");
        std::error_code ec;
        fs::rename(q, to, ec);
        if (!ec) return to;
        say("cannot move '" + q.string() + "' to running/: " + ec.message());
    }
    return std::nullopt;
}

void Daemon::fail(const fs::path& file, const std::string& why) {
    std::string id = job_id(file);
    say("job " + id + " failed: " + why);
    try {
        write_file_atomically((root_ / "failed" / (id + ".reason")).string(), why + "\n");
    } catch (const Error& e) {
        say(e.what());
    }
    std::error_code ec;
    fs::rename(file, root_ / "failed" / (id + ".json"), ec);
    if (ec) fs::remove(file, ec);  // never run it again
}

void Daemon::run_job_file(const fs::path& file) {
    const std::string id = job_id(file);
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec)))
        return fail(file, "not a regular file (a job is a JSON file)");
    Job job;
    try {
        job = load_job(file.string());
    } catch (const JobError& e) {
        return fail(file, e.what());
    }
    job.name = id;
    const fs::path log_dir = root_ / "logs" / id;
    try {
        fs::create_directories(log_dir);
        LockFile lock((log_dir / ".lock").string());
        say("job " + id + ": " + std::to_string(job.tasks.size()) + " tasks, " +
            std::to_string(job.trials) + " trials, logs in " + log_dir.string());
        JobRunOptions o;
        o.log_dir = log_dir.string();
        cluster_ = make_cluster_runner(args_.cluster, job);
        o.measure_runner = cluster_;
        o.should_stop = [] { return stop_signal() != 0; };
        o.on_progress = [&](const JobProgress& p) {
            write_status("running", p, ("running" / file.filename()).string());
        };
        JobResult r = run_job(job, o);
        cluster_.reset();  // the driver ends its Ray job: no actor measures for this one
        if (r.schedule.stop_reason == "stopped") {
            say("job " + id + " stopped at " + std::to_string(r.progress.trials) + " trials");
            return;  // stays in running/: resumed at the next start
        }
        json result = json::parse(job_progress_json(r.progress));
        result["stop_reason"] = r.schedule.stop_reason;
        result["finished"] = unix_time();
        write_file_atomically((root_ / "done" / (id + ".result.json")).string(), result.dump(2));
        fs::rename(file, root_ / "done" / (id + ".json"));
        say("job " + id + " done (" + r.schedule.stop_reason + "), " +
            std::to_string(r.progress.trials) + " trials");
        write_status("idle");
    } catch (const LockHeld& e) {
        cluster_.reset();
        say(std::string("job ") + id + ": " + e.what() + "; trying again later");
        wait_for_work();
    } catch (const Error& e) {
        cluster_.reset();
        fail(file, e.what());
    } catch (const fs::filesystem_error& e) {
        cluster_.reset();
        fail(file, e.what());
    }
}

void Daemon::write_status(const std::string& state, const std::optional<JobProgress>& job,
                          const std::string& file) {
    json s = {{"format_version", 1},
              {"pid", static_cast<long>(getpid())},
              {"state", state},
              {"spool", root_.string()},
              {"updated", unix_time()}};
    if (job) {
        s["job"] = json::parse(job_progress_json(*job));
        s["job"]["file"] = file;
    }
    if (cluster_) s["cluster"] = json::parse(cluster_->status_json());
    try {
        write_file_atomically((root_ / "status.json").string(), s.dump(2));
    } catch (const Error& e) {
        say(e.what());
    }
    last_status_ = unix_time();
}

}  // namespace

int daemon_command(const DaemonArgs& args) {
    return Daemon(args).run();
}

int submit_command(const std::string& job_file, const std::string& spool) {
    if (!fs::exists(job_file)) {
        std::cerr << "tessel-tune submit: no job file '" << job_file << "'\n";
        return kNoInput;
    }
    try {
        load_job(job_file);
    } catch (const JobError& e) {
        std::cerr << "tessel-tune submit: the job is refused, nothing was queued.\n"
                  << e.what() << "\n";
        return kDataError;
    }
    fs::path queue = fs::path(spool) / "queue";
    std::error_code ec;
    fs::create_directories(queue, ec);
    std::string id = job_id(job_file);
    fs::path to = queue / (id + ".json");
    for (const char* sub : {"queue", "running"})
        if (fs::exists(fs::path(spool) / sub / (id + ".json"))) {
            std::cerr << "tessel-tune submit: a job '" << id << "' is already in " << sub << "/\n";
            return kCantCreate;
        }
    try {
        std::ifstream in(job_file, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        write_file_atomically(to.string(), text);  // written beside it as <id>.json.tmp
    } catch (const std::exception& e) {
        std::cerr << "tessel-tune submit: " << e.what() << "\n";
        return kCantCreate;
    }
    std::cout << to.string() << "\n";
    return kOk;
}

}  // namespace tessel::tune_tool
