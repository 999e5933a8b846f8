// tessel-tune: the offline tuning program (docs/daemon.md).
//
//   tessel-tune run JOB [--log-dir DIR] [--seed N --population N --number N ...]
//                                              tune a job in the foreground (a flag per
//                                              tuning field of the job: JobFlags.h)
//   tessel-tune daemon [--spool DIR]           tune the jobs dropped into DIR/queue/
//   ... run and daemon take --cluster ADDRESS: measure on a Ray cluster (docs/distributed.md)
//   tessel-tune submit JOB [--spool DIR]       check a job and queue it
//   tessel-tune status [DIR] [--json]          where the daemon's jobs stand
//   tessel-tune best LOG [--task KEY]          the best schedule as a Python script
//   tessel-tune distill LOG -o OUT             the best schedule's records, per task
//   tessel-tune plot LOG -o curve.png          the tuning curves (Python, matplotlib)
//
// Exit statuses (Commands.h): 0 done, 64 usage, 65 invalid job or log, 66 missing input, 69 the
// spool or log folder is held by another tessel-tune, 73 an output that cannot be written, 1 a
// tuning that failed, 128 + the signal after a clean stop of `run`.
#include <CLI/CLI.hpp>
#include <iostream>

#include "Commands.h"
#include "JobFlags.h"

using namespace tessel::tune_tool;

int main(int argc, char** argv) {
    CLI::App app{
        "tessel-tune: tune tensor programs offline, as a foreground run or a daemon "
        "(docs/daemon.md)"};
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "help for every command");

    RunArgs run;
    CLI::App* run_cmd = app.add_subcommand("run", "tune a job in the foreground");
    run_cmd->add_option("job", run.job, "the job file (JSON)")->required();
    run_cmd->add_option("--log-dir", run.log_dir,
                        "folder of the job's logs, one per task (default: tuning_logs/<job name>)");
    run_cmd->add_flag("-q,--quiet", run.quiet, "no progress lines");
    add_cluster_flags(*run_cmd, run.cluster);
    JobFlags job_flags;  // the job's tuning fields, each overriding the file's
    job_flags.add_to(*run_cmd);

    DaemonArgs daemon;
    daemon.spool = default_spool();
    CLI::App* daemon_cmd = app.add_subcommand(
        "daemon", "tune the jobs dropped into SPOOL/queue/ until stopped (SIGTERM, SIGINT)");
    daemon_cmd->add_option("--spool", daemon.spool,
                           "the spool folder (default: $TESSEL_TUNE_SPOOL, else "
                           "/var/lib/tessel-tune)");
    daemon_cmd->add_option("--poll", daemon.poll_seconds, "seconds between looks at the queue")
        ->check(CLI::Range(0.01, 3600.0));
    daemon_cmd->add_flag("--once", daemon.once, "exit when the queue is empty");
    add_cluster_flags(*daemon_cmd, daemon.cluster);

    std::string submit_job, submit_spool = default_spool();
    CLI::App* submit_cmd = app.add_subcommand("submit", "check a job and put it in the queue");
    submit_cmd->add_option("job", submit_job, "the job file (JSON)")->required();
    submit_cmd->add_option("--spool", submit_spool, "the spool folder (as daemon's)");

    std::string status_spool = default_spool();
    bool status_json = false;
    CLI::App* status_cmd = app.add_subcommand(
        "status", "per job and task: trials, best latency and GFLOP/s, rate, ETA");
    status_cmd->add_option("spool", status_spool, "the spool folder (as daemon's)");
    status_cmd->add_flag("--json", status_json, "the status file as JSON");

    std::string best_log, best_task;
    CLI::App* best_cmd = app.add_subcommand("best", "the best schedule as a Python script");
    best_cmd->add_option("log", best_log, "a tuning log, or a folder of them (a job's)")
        ->required();
    best_cmd->add_option("--task", best_task,
                         "the task: its key, or a part of it that only its key contains "
                         "(default: every task)");

    std::string distill_log, distill_out;
    CLI::App* distill_cmd =
        app.add_subcommand("distill", "the records of each task's best schedule");
    distill_cmd->add_option("log", distill_log, "a tuning log, or a folder of them")->required();
    distill_cmd->add_option("-o,--output", distill_out, "the log to write (replaced)")->required();

    std::string plot_log, plot_out;
    CLI::App* plot_cmd = app.add_subcommand(
        "plot", "tuning curves as a PNG, through the Python package ($TESSEL_PYTHON, matplotlib)");
    plot_cmd->add_option("log", plot_log, "a tuning log, or a folder of them")->required();
    plot_cmd->add_option("-o,--output", plot_out, "the PNG to write")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kUsage;
    }
    install_stop_handlers();
    try {
        if (*run_cmd) {
            run.overrides = job_flags.overrides_json();
            return run_command(run);
        }
        if (*daemon_cmd) return daemon_command(daemon);
        if (*submit_cmd) return submit_command(submit_job, submit_spool);
        if (*status_cmd) return status_command(status_spool, status_json);
        if (*best_cmd) return best_command(best_log, best_task);
        if (*distill_cmd) return distill_command(distill_log, distill_out);
        if (*plot_cmd) return plot_command(plot_log, plot_out);
    } catch (const tessel::InternalError& e) {
        std::cerr << "tessel-tune: internal error: " << e.what() << "\n";
        return kSoftware;
    } catch (const std::exception& e) {
        std::cerr << "tessel-tune: " << e.what() << "\n";
        return kFailure;
    }
    return kUsage;
}
