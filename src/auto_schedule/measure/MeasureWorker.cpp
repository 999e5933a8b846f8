// The client side of a tessel-measure worker (MeasureInternal.h): starting it (fork + exec, with
// PR_SET_PDEATHSIG and an address-space limit set in the child before exec), talking to it over a
// socket pair, and turning its death or silence into an error code.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "auto_schedule/measure/MeasureInternal.h"
#include "tessel/Error.h"

namespace tessel::internal {

namespace {

constexpr int kWorkerFd = 3;

std::string signal_text(int sig) {
    const char* name = sigabbrev_np(sig);
    return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

}  // namespace

WorkerProcess::WorkerProcess(std::string path, int64_t memory_limit_bytes, bool test_faults)
    : path_(std::move(path)), memory_limit_(memory_limit_bytes), test_faults_(test_faults) {}

WorkerProcess::~WorkerProcess() {
    if (pid_ <= 0) return;
    measure::write_message(fd_, {measure::MessageKind::Exit, "{}", {}});
    close(fd_);
    kill(pid_, SIGKILL);  // it may be busy; nothing of it is needed any more
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
}

void WorkerProcess::start() {
    if (access(path_.c_str(), X_OK) != 0)
        TESSEL_THROW(RuntimeError) << "measurement: the worker program '" << path_
                                   << "' does not exist or is not executable (set "
                                      "MeasureOptions::worker_path or TESSEL_MEASURE_WORKER)";
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        TESSEL_THROW(RuntimeError) << "measurement: socketpair failed: " << std::strerror(errno);
    // Everything the child needs is made before fork: between fork and exec it only makes
    // system calls (the parent has other threads; allocating there could deadlock).
    std::string parent = std::to_string(getpid()), fd = std::to_string(kWorkerFd);
    std::vector<const char*> argv = {path_.c_str(), "--fd", fd.c_str(), "--parent", parent.c_str()};
    if (test_faults_) argv.push_back("--test-faults");
    argv.push_back(nullptr);
    pid_t parent_pid = getpid();
    started_at_ = std::chrono::steady_clock::now();
    awaiting_first_reply_ = true;
    rlimit limit{static_cast<rlim_t>(memory_limit_), static_cast<rlim_t>(memory_limit_)};
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        TESSEL_THROW(RuntimeError) << "measurement: fork failed: " << std::strerror(errno);
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent_pid) _exit(1);
        // Ctrl-C at a terminal signals the whole process group: the worker ignores it, so that a
        // tuner stopping on Ctrl-C (Python's tune) does not record the candidate being timed as
        // a crash. It still dies with its parent (above).
        signal(SIGINT, SIG_IGN);
        if (memory_limit_ > 0) setrlimit(RLIMIT_AS, &limit);
        if (fds[1] == kWorkerFd) {
            fcntl(kWorkerFd, F_SETFD, 0);
        } else if (dup2(fds[1], kWorkerFd) < 0) {
            _exit(126);
        }
        execv(path_.c_str(), const_cast<char* const*>(argv.data()));
        _exit(127);
    }
    close(fds[1]);
    pid_ = pid;
    fd_ = fds[0];
    ++starts_;
    task_key.clear();
}

bool WorkerProcess::running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == 0) return true;
    close(fd_);
    pid_ = 0;
    fd_ = -1;
    task_key.clear();
    return false;
}

// The worker is dead or must die: collect it and say why.
WorkerProcess::Outcome WorkerProcess::reap(bool killed_for_timeout, const std::string& what) {
    if (killed_for_timeout) kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    close(fd_);
    pid_ = 0;
    fd_ = -1;
    task_key.clear();
    Outcome out;
    if (killed_for_timeout) {
        out.error = MeasureError::RunTimeout;
        out.message = what + " did not finish in time; the worker was killed";
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        out.error = MeasureError::OutOfMemory;
        out.message = "the worker was killed (SIGKILL) during " + what +
                      ", most likely by the system's out-of-memory killer";
    } else if (WIFSIGNALED(status)) {
        out.error = MeasureError::Crash;
        out.message = "the worker died of " + signal_text(WTERMSIG(status)) + " during " + what;
    } else {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        // 126/127: the child could not become the worker. Any other exit in the middle of a
        // request is a crash the process reported itself (a sanitizer's SEGV report exits 1).
        bool no_start = code == 126 || code == 127;
        out.error = no_start ? MeasureError::WorkerError : MeasureError::Crash;
        out.message = "the worker exited with status " + std::to_string(code) + " during " + what +
                      (no_start ? " (could not execute " + path_ + ")" : "");
    }
    return out;
}

WorkerProcess::Outcome WorkerProcess::request(const measure::Message& request,
                                              double timeout_seconds) {
    if (!running()) start();
    std::string what = request.kind == measure::MessageKind::Setup ? "setup"
                       : request.kind == measure::MessageKind::Run ? "the check run"
                                                                   : "timing";
    if (!measure::write_message(fd_, request)) return reap(false, what);
    Outcome out;
    measure::ReadStatus s = measure::read_message(fd_, timeout_seconds, out.reply);
    if (s == measure::ReadStatus::Timeout) return reap(true, what);
    if (s != measure::ReadStatus::Ok) {
        if (s == measure::ReadStatus::Corrupt) kill(pid_, SIGKILL);
        return reap(false, what);
    }
    if (awaiting_first_reply_) {
        awaiting_first_reply_ = false;
        start_seconds_ +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at_).count();
    }
    // A reply header is a JSON object; anything else (unparsable: discarded) is a broken worker.
    out.header = nlohmann::json::parse(out.reply.json, nullptr, /*allow_exceptions=*/false);
    if (!out.header.is_object()) {
        kill(pid_, SIGKILL);
        Outcome bad = reap(false, what);
        bad.error = MeasureError::WorkerError;
        bad.message = "the worker replied with malformed JSON";
        return bad;
    }
    std::string status = out.header.value("status", "");
    out.message = out.header.value("message", "");
    if (status == measure::status::kOk) return out;
    out.error = status == measure::status::kLoadError     ? MeasureError::LoadError
                : status == measure::status::kRunError    ? MeasureError::RunError
                : status == measure::status::kOutOfBounds ? MeasureError::OutOfBoundsWrite
                : status == measure::status::kOutOfMemory ? MeasureError::OutOfMemory
                                                          : MeasureError::WorkerError;
    return out;
}

}  // namespace tessel::internal
