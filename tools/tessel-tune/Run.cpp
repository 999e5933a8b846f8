// `tessel-tune run JOB`: a job in the foreground, with a progress line per round (refreshed in
// place on a terminal) and the tasks' table at the end.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "Commands.h"
#include "LockFile.h"

namespace tessel::tune_tool {

int run_command(const RunArgs& args) {
    if (!std::filesystem::exists(args.job)) {
        std::cerr << "tessel-tune run: no job file '" << args.job << "'\n";
        return kNoInput;
    }
    Job job;
    try {
        job = load_job(args.job, args.overrides);
    } catch (const JobError& e) {
        std::cerr << "tessel-tune run: the job is refused, nothing was tuned.\n"
                  << e.what() << "\n";
        return kDataError;
    }
    std::string log_dir = args.log_dir.empty() ? "tuning_logs/" + job.name : args.log_dir;
    std::error_code ec;
    std::filesystem::create_directories(log_dir, ec);
    if (ec) {
        std::cerr << "tessel-tune run: cannot create '" << log_dir << "': " << ec.message() << "\n";
        return kCantCreate;
    }
    try {
        LockFile lock(log_dir + "/.lock");
        const bool tty = isatty(STDERR_FILENO);
        bool open_line = false;
        JobRunOptions o;
        o.log_dir = log_dir;
        o.measure_runner = make_cluster_runner(args.cluster, job);
        o.should_stop = [] { return stop_signal() != 0; };
        o.on_progress = [&](const JobProgress& p) {
            if (args.quiet) return;
            if (!p.last_step) {
                std::cerr << "tessel-tune run " << job.name << ": " << p.tasks.size() << " tasks, "
                          << p.budget << " trials (" << job.strategy << "), logs in " << log_dir;
                if (p.resumed_trials > 0)
                    std::cerr << " (resuming after " << p.resumed_trials << ")";
                std::cerr << "\n";
                return;
            }
            if (tty && open_line) std::cerr << "\r\033[K";
            std::cerr << progress_line(p) << (tty ? "" : "\n") << std::flush;
            open_line = tty;
        };
        JobResult r = run_job(job, o);
        if (open_line) std::cerr << "\n";
        std::cerr << "tessel-tune run " << job.name << ": " << r.schedule.stop_reason << ", "
                  << r.progress.trials << "/" << r.progress.budget << " trials\n";
        std::cout << task_table(r.progress) << "logs: " << log_dir << "\n" << std::flush;
        if (r.schedule.stop_reason == "stopped") return 128 + stop_signal();
        return kOk;
    } catch (const LockHeld& e) {
        std::cerr << "tessel-tune run: " << e.what() << "\n";
        return kUnavailable;
    } catch (const InternalError& e) {
        std::cerr << "tessel-tune run: internal error: " << e.what() << "\n";
        return kSoftware;
    } catch (const Error& e) {
        std::cerr << "tessel-tune run: " << e.what() << "\n";
        return kFailure;
    }
}

}  // namespace tessel::tune_tool
