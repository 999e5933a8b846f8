// The daemon's side of measurement on a Ray cluster (ClusterMeasureRunner.h): the driver process
// (fork + exec of `python -m tessel.distributed serve`, PR_SET_PDEATHSIG so that a kill -9 of the
// daemon takes the driver, and with it, Ray's job and every actor of it), the frames to and from
// it, the builds this machine makes ahead of the nodes (ClusterBuild), and the fallback when the
// driver or the cluster's head is lost.
#include "tessel/auto_schedule/measure/ClusterMeasureRunner.h"
#include "support/Stopwatch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "auto_schedule/measure/MeasureInternal.h"
#include "runtime/MeasureProtocol.h"
#include "tessel/Error.h"

namespace tessel {

namespace {

using internal::seconds_since;

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace measure = internal::measure;

constexpr int kDriverFd = 3;

// The driver process and the socket to it.
class Driver {
public:
    Driver(const std::string& python, const std::string& address) {
        int fds[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
            TESSEL_THROW(RuntimeError) << "cluster: socketpair failed: " << std::strerror(errno);
        // Everything the child needs is made before fork (the parent has other threads).
        std::string fd = std::to_string(kDriverFd);
        std::vector<const char*> argv = {
            python.c_str(), "-m",        "tessel.distributed", "serve", "--fd",
            fd.c_str(),     "--address", address.c_str(),      nullptr};
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            TESSEL_THROW(RuntimeError) << "cluster: fork failed: " << std::strerror(errno);
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(1);
            signal(SIGINT, SIG_IGN);  // Ctrl-C stops the daemon after its batch, not the driver
            if (fds[1] == kDriverFd) {
                fcntl(kDriverFd, F_SETFD, 0);
            } else if (dup2(fds[1], kDriverFd) < 0) {
                _exit(126);
            }
            execvp(argv[0], const_cast<char* const*>(argv.data()));
            _exit(127);
        }
        close(fds[1]);
        pid_ = pid;
        fd_ = fds[0];
    }
    ~Driver() {
        measure::write_message(fd_, {measure::MessageKind::Exit, "{}", {}});
        close(fd_);
        if (reaped_) return;
        // The driver ends Ray's job on Exit; it is killed if it has not after a moment.
        for (int i = 0; i < 50; ++i) {
            pid_t w = waitpid(pid_, nullptr, WNOHANG);
            if (w == pid_ || (w < 0 && errno != EINTR)) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        kill(pid_, SIGKILL);
        while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;

    // Sends a frame and reads the reply; the reply's JSON, or a "lost" object saying why not.
    json exchange(measure::MessageKind kind, const std::string& body, double timeout) {
        // A write to a driver that has ended fails before its exit status is read: both ways
        // of losing it say how it ended.
        if (!send(kind, body)) return lost(exit_text());
        return receive(timeout);
    }
    // Sends a frame without waiting for an answer; false when the driver is gone.
    bool send(measure::MessageKind kind, const std::string& body) {
        return measure::write_message(fd_, {kind, body, {}});
    }
    // The next reply's JSON (waiting at most `timeout` s, < 0: no limit), or a "lost" object.
    json receive(double timeout) {
        measure::Message reply;
        measure::ReadStatus s = measure::read_message(fd_, timeout, reply);
        if (s == measure::ReadStatus::Timeout)
            return lost("the driver did not answer in " + std::to_string(timeout) + " s");
        if (s != measure::ReadStatus::Ok) return lost(exit_text());
        json j = json::parse(reply.json, nullptr, false);
        if (!j.is_object()) return lost("the driver replied with malformed JSON");
        return j;
    }
    // True when the driver has written something (a reply, or its end) that receive() would read
    // at once: the driver writes each reply whole.
    bool has_reply() const {
        pollfd p{fd_, POLLIN, 0};
        return poll(&p, 1, 0) > 0;
    }

private:
    static json lost(const std::string& why) {
        return {{"status", "cluster_lost"}, {"message", why}};
    }
    std::string exit_text() {
        int status = 0;
        for (int i = 0; i < 100; ++i) {  // 5 s: a closed connection is an exit under way
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                reaped_ = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!reaped_) return "the driver closed its connection";
        if (WIFEXITED(status))
            return "the driver exited with status " + std::to_string(WEXITSTATUS(status)) +
                   (WEXITSTATUS(status) == 127 ? " (could not run the Python)" : "");
        return "the driver died of signal " + std::to_string(WTERMSIG(status));
    }

    pid_t pid_ = 0;
    int fd_ = -1;
    bool reaped_ = false;
};

std::string default_python() {
    if (const char* env = std::getenv("TESSEL_PYTHON"); env && *env) return env;
    return "python3";
}

}  // namespace

const char* cluster_fallback_name(ClusterFallback f) {
    switch (f) {
        case ClusterFallback::Local: return "local";
        case ClusterFallback::Wait: return "wait";
        case ClusterFallback::Fail: return "fail";
    }
    return "local";
}

std::optional<ClusterFallback> cluster_fallback_from_name(const std::string& name) {
    for (ClusterFallback f : {ClusterFallback::Local, ClusterFallback::Wait, ClusterFallback::Fail})
        if (name == cluster_fallback_name(f)) return f;
    return std::nullopt;
}

const char* cluster_build_name(ClusterBuild b) {
    switch (b) {
        case ClusterBuild::Auto: return "auto";
        case ClusterBuild::Daemon: return "daemon";
        case ClusterBuild::Nodes: return "nodes";
    }
    return "auto";
}

std::optional<ClusterBuild> cluster_build_from_name(const std::string& name) {
    for (ClusterBuild b : {ClusterBuild::Auto, ClusterBuild::Daemon, ClusterBuild::Nodes})
        if (name == cluster_build_name(b)) return b;
    return std::nullopt;
}

struct ClusterMeasureRunner::Impl {
    ClusterOptions options;
    std::unique_ptr<Driver> driver;
    std::map<std::string, SearchTask> tasks;    // by key: the tasks this machine builds for
    std::unique_ptr<LocalMeasureRunner> local;  // after a fallback to local measurement
    std::atomic<bool> measuring_here{false};    // local is set: times_elsewhere() is false
    // The status and the stats are read by other threads while run() runs on the tuner's
    // measuring thread (TuningOptions::search_ahead): the daemon's status file, the progress.
    mutable std::mutex mutex;
    json status = json::object();
    MeasureStats stats;

    void say(const std::string& what) const {
        std::cerr << "tessel cluster " << options.address << ": " << what << std::endl;
    }
    // Starts the driver and connects; "" when connected, else why not.
    std::string connect();
    // Sends `request` to the driver, builds ahead of the nodes where options.build says so, and
    // returns the driver's reply (or a "lost" object).
    json measure_there(const MeasureRequest& request);
    // Builds the request's candidates in order, a group of build_threads at a time, each group
    // sent as a Built frame; stops when the driver has replied (the nodes built the rest).
    void build_ahead(const MeasureRequest& request);
    // Handles a lost cluster (why): local measurement from now on, a wait, or an error.
    void lost(const std::string& why);
    void set_state(const std::string& state, const std::string& message) {
        std::lock_guard<std::mutex> lock(mutex);
        status["address"] = options.address;
        status["state"] = state;
        status["message"] = message;
        if (!status.contains("nodes")) status["nodes"] = json::array();
    }
};

std::string ClusterMeasureRunner::Impl::connect() {
    driver.reset();
    driver = std::make_unique<Driver>(options.python.empty() ? default_python() : options.python,
                                      options.address);
    json setup = {{"address", options.address},
                  {"tessel_version", TESSEL_VERSION_STRING},
                  {"warm_targets", options.warm_targets},
                  {"max_attempts", options.max_attempts}};
    json reply = driver->exchange(measure::MessageKind::Setup, setup.dump(),
                                  options.connect_timeout_seconds);
    if (reply.value("status", "") != "ok") {
        driver.reset();
        return reply.value("message", "the driver refused the setup");
    }
    set_state("connected", "");
    size_t nodes = 0;
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (reply.contains("nodes")) status["nodes"] = reply["nodes"];
        nodes = status["nodes"].size();
    }
    say("connected, " + std::to_string(nodes) + " nodes");
    return "";
}

json ClusterMeasureRunner::Impl::measure_there(const MeasureRequest& request) {
    const MeasureOptions& o = request.options;
    // A simulated worker without builds has nothing to build.
    bool here = options.build != ClusterBuild::Nodes && (o.simulate_ms <= 0 || o.simulate_builds);
    json run = json::parse(measure_request_to_json(request));
    run["build"] = cluster_build_name(here ? options.build : ClusterBuild::Nodes);
    if (!driver->send(measure::MessageKind::Run, run.dump())) return driver->receive(0);
    if (here) build_ahead(request);
    return driver->receive(-1);
}

void ClusterMeasureRunner::Impl::build_ahead(const MeasureRequest& request) {
    const SearchTask& task = request_task(request, tasks);
    const size_t group = static_cast<size_t>(internal::build_thread_count(request.options));
    const size_t n = request.candidates.size();
    auto t0 = Clock::now();
    for (size_t begin = 0; begin < n && !driver->has_reply(); begin += group) {
        json built = json::object();
        std::vector<MeasureInput> inputs;
        std::vector<size_t> where;
        for (size_t i = begin; i < std::min(n, begin + group); ++i) {
            const MeasureCandidate& c = request.candidates[i];
            if (c.built) continue;  // built already: it travelled with the request
            try {
                inputs.push_back({task.apply_record(c.schedule_json), c.origin, c.test_fault});
                where.push_back(i);
            } catch (const ScheduleError& e) {
                BuiltModule b;
                b.error = MeasureError::InstantiationError;
                b.message = e.what();
                built[std::to_string(i)] = json::parse(built_module_to_json(b));
            }
        }
        std::vector<BuiltModule> modules = build_modules(task, inputs, request.options);
        for (size_t k = 0; k < where.size(); ++k)
            built[std::to_string(where[k])] = json::parse(built_module_to_json(modules[k]));
        if (!driver->send(measure::MessageKind::Built, json{{"built", built}}.dump())) break;
    }
    std::lock_guard<std::mutex> lock(mutex);
    stats.build += seconds_since(t0);
}

void ClusterMeasureRunner::Impl::lost(const std::string& why) {
    driver.reset();
    switch (options.fallback) {
        case ClusterFallback::Fail:
            set_state("lost", why);
            TESSEL_THROW(RuntimeError)
                << "the cluster at " << options.address << " is lost: " << why;
        case ClusterFallback::Local:
            say("lost (" + why + "); measuring on this machine from now on");
            set_state("local", why);
            local = std::make_unique<LocalMeasureRunner>(options.local_options);
            measuring_here = true;
            return;
        case ClusterFallback::Wait:
            say("lost (" + why + "); trying again every " + std::to_string(options.retry_seconds) +
                " s");
            set_state("waiting", why);
            for (;;) {
                std::this_thread::sleep_for(std::chrono::duration<double>(options.retry_seconds));
                std::string again = connect();
                if (again.empty()) return;
                set_state("waiting", again);
            }
    }
}

ClusterMeasureRunner::ClusterMeasureRunner(ClusterOptions options)
    : impl_(std::make_unique<Impl>()) {
    impl_->options = std::move(options);
    if (impl_->options.address.empty())
        TESSEL_THROW(RuntimeError) << "cluster: no address (HOST:PORT of the Ray head, or auto)";
    impl_->set_state("connecting", "");
    std::string why = impl_->connect();
    if (!why.empty()) impl_->lost(why);
}

ClusterMeasureRunner::~ClusterMeasureRunner() = default;

std::vector<MeasureResult> ClusterMeasureRunner::run(const MeasureRequest& request) {
    Impl& m = *impl_;
    auto t0 = Clock::now();
    std::vector<MeasureResult> results;
    while (results.empty() && !request.candidates.empty()) {
        if (m.local) {
            results = m.local->run(request);
            break;
        }
        json reply = m.measure_there(request);
        if (reply.contains("nodes")) {
            std::lock_guard<std::mutex> lock(m.mutex);
            m.status["nodes"] = reply["nodes"];
        }
        std::string status = reply.value("status", "");
        if (status == "error")  // the request itself: no fallback would measure it better
            TESSEL_THROW(RuntimeError) << "cluster: " << reply.value("message", "");
        if (status != "ok" || !reply.contains("results") || !reply["results"].is_array() ||
            reply["results"].size() != request.candidates.size()) {
            m.lost(status == "ok" ? "the driver's reply has no result per candidate"
                                  : reply.value("message", "the driver failed"));
            continue;
        }
        for (const json& r : reply["results"])
            results.push_back(measure_result_from_json(r.dump()));
    }
    std::lock_guard<std::mutex> lock(m.mutex);
    m.stats.candidates += static_cast<int64_t>(request.candidates.size());
    m.stats.total += seconds_since(t0);
    return results;
}

MeasureStats ClusterMeasureRunner::stats() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->stats;
}

bool ClusterMeasureRunner::times_elsewhere() const {
    return !impl_->measuring_here;
}

std::string ClusterMeasureRunner::status_json() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->status.dump();
}

}  // namespace tessel
