// One writer per spool or log folder (docs/daemon.md, "Durable logs"): an flock on a lock file
// that holds the PID of the process holding it. The kernel drops the lock when the holder dies,
// kill -9 included; the file stays, with a stale PID that the next holder overwrites.
#pragma once

#include <string>

#include "tessel/Error.h"

namespace tessel::tune_tool {

/// The lock is held by another process.
class LockHeld : public RuntimeError {
public:
    LockHeld(const std::string& path, long pid);
    long pid() const { return pid_; }

private:
    long pid_;
};

class LockFile {
public:
    /// Takes the lock on `path` (created if missing) without waiting and writes this process's
    /// PID into it. LockHeld naming the holder's PID when another process holds it; RuntimeError
    /// when the file cannot be opened.
    explicit LockFile(const std::string& path);
    ~LockFile();
    LockFile(const LockFile&) = delete;
    LockFile& operator=(const LockFile&) = delete;

private:
    int fd_ = -1;
};

/// The PID written in the lock file at `path` (0 when there is none).
long lock_file_pid(const std::string& path);

}  // namespace tessel::tune_tool
