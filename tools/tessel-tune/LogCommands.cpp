// Reading tuning logs (docs/daemon.md, "Reading the results"): `best` prints a task's best
// schedule as a Python script, `distill` keeps the records of each task's best schedule, `plot`
// draws the tuning curves through the Python package. LOG is a log file or a folder of them (a job's).
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "Commands.h"
#include "tessel/auto_schedule/records/Record.h"
#include "tessel/auto_schedule/tuner/Tuner.h"

extern char** environ;

namespace tessel::tune_tool {

namespace fs = std::filesystem;

namespace {

struct TaskRecords {
    std::string key;
    std::vector<TuningRecord> records;
    std::string log;  ///< the file its first record came from
};

// The log files of `path`: itself, or the *.jsonl files of a folder, in name order.
std::optional<std::vector<std::string>> log_files(const std::string& path) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return std::vector<std::string>{path};
    if (!fs::is_directory(path, ec)) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path, ec))
        if (e.path().extension() == ".jsonl" && e.is_regular_file()) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// Every task's records, in the order the tasks first appear; skipped lines reported on stderr.
std::optional<std::vector<TaskRecords>> read_tasks(const std::string& path, const char* cmd) {
    std::optional<std::vector<std::string>> files = log_files(path);
    if (!files) {
        std::cerr << "tessel-tune " << cmd << ": no log file or folder '" << path << "'\n";
        return std::nullopt;
    }
    std::vector<TaskRecords> tasks;
    std::map<std::string, size_t> index;
    for (const std::string& f : *files) {
        RecordLog log = read_records(f);
        if (log.skipped > 0) {
            std::cerr << "tessel-tune " << cmd << ": " << f << ": skipped " << log.skipped
                      << " unreadable lines (";
            bool first = true;
            for (const auto& [why, n] : log.skip_reasons) {
                std::cerr << (first ? "" : ", ") << why << ": " << n;
                first = false;
            }
            std::cerr << ")\n";
        }
        for (TuningRecord& r : log.records) {
            std::string key = r.task_key();
            auto [it, added] = index.emplace(key, tasks.size());
            if (added) tasks.push_back({key, {}, f});
            tasks[it->second].records.push_back(std::move(r));
        }
    }
    return tasks;
}

// The fastest schedule of one task's records (by the median of its measurements, ScheduleCosts):
// its cost and its records (the trial first, then its re-measurements).
struct BestSchedule {
    double seconds = 0;
    std::vector<const TuningRecord*> records;
};

std::optional<BestSchedule> best_of(const std::vector<TuningRecord>& records) {
    ScheduleCosts costs;
    for (const TuningRecord& r : records) costs.add(r);
    std::optional<ScheduleCosts::Best> b = costs.best();
    if (!b) return std::nullopt;
    // Its measurements, the ones its cost is the median of: a failed re-measurement (a worker
    // stopped with its job, a crash) says nothing of the schedule and is not kept.
    BestSchedule out{b->seconds, {}};
    for (const TuningRecord& r : records)
        if (r.ok() && r.schedule_json == records[b->record].schedule_json)
            out.records.push_back(&r);
    return out;
}

int64_t trials_of(const std::vector<TuningRecord>& records) {
    return std::count_if(records.begin(), records.end(),
                         [](const TuningRecord& r) { return r.is_trial(); });
}

// The tasks whose key is `pattern` or contains it (all of them for "").
std::vector<const TaskRecords*> select(const std::vector<TaskRecords>& tasks,
                                       const std::string& pattern) {
    std::vector<const TaskRecords*> out;
    for (const TaskRecords& t : tasks)
        if (t.key == pattern) return {&t};
    for (const TaskRecords& t : tasks)
        if (t.key.find(pattern) != std::string::npos) out.push_back(&t);
    return out;
}

// The best schedule as a script, with a comment naming the task and the time.
std::string best_script(const TaskRecords& t, const BestSchedule& best) {
    const TuningRecord& r = *best.records.front();
    if (r.workload.empty())
        TESSEL_THROW(RuntimeError) << "the task " << t.key << " is a DAG, not a registered "
                                   << "workload: its record holds no DAG to rebuild it from";
    SearchTask task(r.workload, workload_params_from_json(r.params_json), Target(r.target),
                    r.hardware);
    Schedule s = task.apply_record(r.schedule_json);
    double flops = task_flops(task);
    std::ostringstream os;
    os << "# task: " << t.key << "\n# best of " << trials_of(t.records) << " trials in " << t.log
       << ": " << best.seconds * 1e3 << " ms";
    if (flops > 0) os << ", " << flops / best.seconds / 1e9 << " GFLOP/s";
    if (best.records.size() > 1)
        os << " (the median of " << best.records.size() << " measurements)";
    os << "\n" << s.to_python();
    return os.str();
}

}  // namespace

int best_command(const std::string& log, const std::string& pattern) {
    std::optional<std::vector<TaskRecords>> tasks = read_tasks(log, "best");
    if (!tasks) return kNoInput;
    std::vector<const TaskRecords*> chosen = select(*tasks, pattern);
    if (chosen.empty() || (!pattern.empty() && chosen.size() > 1)) {
        std::cerr << "tessel-tune best: "
                  << (tasks->empty()   ? "the log holds no records"
                      : chosen.empty() ? "no task of the log matches '" + pattern + "'"
                                       : "several tasks match '" + pattern + "'")
                  << (tasks->empty() ? "\n" : "; its tasks:\n");
        for (const TaskRecords& t : *tasks) std::cerr << "  " << t.key << "\n";
        return kDataError;
    }
    int status = kOk;
    for (const TaskRecords* t : chosen) {
        std::optional<BestSchedule> best = best_of(t->records);
        if (!best) {
            std::cerr << "tessel-tune best: no successful trial of " << t->key << " in "
                      << trials_of(t->records) << "\n";
            status = kDataError;
            continue;
        }
        try {
            std::cout << best_script(*t, *best) << "\n";
        } catch (const Error& e) {
            std::cerr << "tessel-tune best: " << e.what() << "\n";
            status = kDataError;
        }
    }
    return status;
}

int distill_command(const std::string& log, const std::string& out) {
    std::optional<std::vector<TaskRecords>> tasks = read_tasks(log, "distill");
    if (!tasks) return kNoInput;
    std::string text;
    size_t kept = 0, records = 0;
    for (const TaskRecords& t : *tasks) {
        records += t.records.size();
        if (std::optional<BestSchedule> best = best_of(t.records)) {
            for (const TuningRecord* r : best->records) text += record_to_json(*r) + "\n";
            ++kept;
        }
    }
    try {
        write_file_atomically(out, text);
    } catch (const Error& e) {
        std::cerr << "tessel-tune distill: " << e.what() << "\n";
        return kCantCreate;
    }
    std::cerr << "tessel-tune distill: the best of " << kept << " tasks (" << records
              << " records) in " << out << "\n";
    return kOk;
}

int plot_command(const std::string& log, const std::string& out) {
    std::optional<std::vector<std::string>> files = log_files(log);
    if (!files) {
        std::cerr << "tessel-tune plot: no log file or folder '" << log << "'\n";
        return kNoInput;
    }
    const char* python = std::getenv("TESSEL_PYTHON");
    std::vector<std::string> args = {python && *python ? python : "python3", "-c",
                                     "import sys\nfrom tessel import auto_schedule as a\n"
                                     "a.plot(sys.argv[1:-1], sys.argv[-1])"};
    for (const std::string& f : *files) args.push_back(f);
    args.push_back(out);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
        std::cerr << "tessel-tune plot: cannot start '" << argv[0]
                  << "' (set TESSEL_PYTHON to a Python with the tessel package and matplotlib)\n";
        return kFailure;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::cerr << "tessel-tune plot: " << argv[0] << " failed (it needs the tessel package and "
                  << "matplotlib; TESSEL_PYTHON names the interpreter)\n";
        return kFailure;
    }
    std::cerr << "tessel-tune plot: " << out << "\n";
    return kOk;
}

}  // namespace tessel::tune_tool
