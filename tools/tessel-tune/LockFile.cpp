// The lock file (LockFile.h). O_CLOEXEC: measurement workers must not inherit the lock, or a
// worker outliving a killed daemon would keep the next one out.
#include "LockFile.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tessel::tune_tool {

namespace {

std::string held_message(const std::string& path, long pid) {
    std::string who = pid > 0 ? "process " + std::to_string(pid) : "another process";
    return "'" + path + "' is locked by " + who +
           " (another tessel-tune is using this folder; stop it first)";
}

}  // namespace

LockHeld::LockHeld(const std::string& path, long pid)
    : RuntimeError(held_message(path, pid)), pid_(pid) {}

long lock_file_pid(const std::string& path) {
    std::ifstream in(path);
    long pid = 0;
    if (!(in >> pid) || pid < 0) return 0;
    return pid;
}

LockFile::LockFile(const std::string& path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
        TESSEL_THROW(RuntimeError)
            << "cannot open the lock file '" << path << "': " << std::strerror(errno);
    int r;
    while ((r = flock(fd_, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
    }
    if (r != 0) {
        int err = errno;
        close(fd_);
        fd_ = -1;
        if (err == EWOULDBLOCK) throw LockHeld(path, lock_file_pid(path));
        TESSEL_THROW(RuntimeError) << "cannot lock '" << path << "': " << std::strerror(err);
    }
    std::string pid = std::to_string(static_cast<long>(getpid())) + "\n";
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()) ||
        fdatasync(fd_) != 0)
        TESSEL_THROW(RuntimeError)
            << "cannot write the lock file '" << path << "': " << std::strerror(errno);
}

LockFile::~LockFile() {
    if (fd_ < 0) return;
    if (ftruncate(fd_, 0) != 0) {
        // the stale PID stays: harmless, the next holder overwrites it
    }
    close(fd_);  // releases the flock
}

}  // namespace tessel::tune_tool
