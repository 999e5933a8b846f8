// tessel-tune's commands (docs/daemon.md): each returns the program's exit status. main.cpp
// parses the command line with CLI11 and calls one of them.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tessel/auto_schedule/measure/ClusterMeasureRunner.h"
#include "tessel/auto_schedule/tuner/Job.h"

namespace tessel::tune_tool {

/// Exit statuses, as sysexits.h names them (and 128 + the signal after a clean stop).
enum Exit : int {
    kOk = 0,
    kFailure = 1,       ///< the tuning failed (a message says why)
    kUsage = 64,        ///< a bad command line
    kDataError = 65,    ///< an invalid job or log
    kNoInput = 66,      ///< a file that does not exist or cannot be read
    kUnavailable = 69,  ///< the spool or log folder is held by another tessel-tune
    kSoftware = 70,     ///< an internal error
    kCantCreate = 73,   ///< an output that cannot be written
    kIoError = 74,
};

/// SIGTERM and SIGINT: the first asks for a clean stop (after the batch being measured, whose
/// records are written); a second exits at once (the log stays valid: a torn tail is cut on the
/// next start).
void install_stop_handlers();
/// The signal that asked to stop (0: none).
int stop_signal();

/// Where a job measures: this machine (no address), or a Ray cluster (docs/distributed.md). The
/// flags override the job's `cluster` field; empty: not given.
struct ClusterArgs {
    std::string address;   ///< --cluster: the Ray head's HOST:PORT, or "auto"
    std::string fallback;  ///< --cluster-fallback: local, wait or fail
    std::string build;     ///< --cluster-build: auto, daemon or nodes
};
/// The cluster runner of `job` (its target's actors started at once), or null when neither the
/// flags nor the job's `cluster` name an address. The flags win over the job's field, each on
/// its own. RuntimeError when the cluster cannot be used and the fallback is "fail".
std::shared_ptr<ClusterMeasureRunner> make_cluster_runner(const ClusterArgs& args, const Job& job);
/// Adds --cluster, --cluster-fallback and --cluster-build to a command.
void add_cluster_flags(CLI::App& cmd, ClusterArgs& args);

struct RunArgs {
    std::string job;
    std::string log_dir;  ///< "" : tuning_logs/<job name>
    bool quiet = false;
    std::string overrides = "{}";  ///< the job fields given as flags (JobFlags.h), as JSON
    ClusterArgs cluster;
};
int run_command(const RunArgs& args);

struct DaemonArgs {
    std::string spool;
    double poll_seconds = 2;
    bool once = false;  ///< exit when the queue is empty
    ClusterArgs cluster;
};
int daemon_command(const DaemonArgs& args);
int submit_command(const std::string& job, const std::string& spool);
int status_command(const std::string& spool, bool json);

int best_command(const std::string& log, const std::string& task);
int distill_command(const std::string& log, const std::string& out);
int plot_command(const std::string& log, const std::string& out);

/// The default spool: $TESSEL_TUNE_SPOOL, else /var/lib/tessel-tune.
std::string default_spool();

/// Writes `text` to `path` atomically: a temporary file beside it, fsync, rename, fsync of the
/// folder. RuntimeError when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);

/// The progress line of a running job.
std::string progress_line(const JobProgress& p);
/// The table of a job's tasks: weight, trials, best time and GFLOP/s.
std::string task_table(const JobProgress& p);

/// The progress of a job as the status file's JSON object.
std::string job_progress_json(const JobProgress& p);

}  // namespace tessel::tune_tool
