// The shipped tuning logs (auto_schedule/records/ShippedLogs.h): where they are, read once, and
// asked when no apply-best context is open.
#include "tessel/auto_schedule/records/ShippedLogs.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "tessel/Error.h"
#include "tessel/auto_schedule/records/Record.h"

#ifndef TESSEL_TUNING_LOGS_INSTALLED
#define TESSEL_TUNING_LOGS_INSTALLED ""
#endif
#ifndef TESSEL_TUNING_LOGS_SOURCE
#define TESSEL_TUNING_LOGS_SOURCE ""
#endif

namespace tessel {

namespace fs = std::filesystem;

namespace {

struct Shipped {
    std::mutex mutex;
    std::optional<std::string> folder_given;  // rule 0
    std::string default_folder;               // rule 2
    bool read = false;
    std::string folder;  // in use, once read
    std::unique_ptr<ApplyHistoryBest> logs;
    // Logs replaced by a later set_*folder(): kept, as another thread may still be choosing
    // with them (a few records, replaced only by tests and by hand).
    std::vector<std::unique_ptr<ApplyHistoryBest>> retired;
};

Shipped& shipped() {
    static Shipped s;
    return s;
}

std::atomic<bool> enabled{true};

bool is_folder(const std::string& path) {
    std::error_code ec;
    return !path.empty() && fs::is_directory(path, ec);
}

// Rules 0-3 of the header, with the lock held.
std::string find_folder(const Shipped& s) {
    if (s.folder_given) return *s.folder_given;
    if (const char* env = std::getenv("TESSEL_TUNING_LOGS")) {
        std::string v = env;
        if (v == "off" || v == "0" || v == "none") return "";
        return v;  // a missing folder reads as no records, which debug output names
    }
    for (const std::string& f : {s.default_folder, std::string(TESSEL_TUNING_LOGS_INSTALLED),
                                 std::string(TESSEL_TUNING_LOGS_SOURCE)})
        if (is_folder(f)) return f;
    return "";
}

int debug_level() {
    const char* v = std::getenv("TESSEL_DEBUG");
    return v ? std::atoi(v) : 0;
}

void debug(const std::string& message) {
    if (debug_level() >= 1) std::cerr << "tessel: shipped tuning logs: " << message << "\n";
}

// Every record of the *.jsonl files under `folder`, in path order; a file that cannot be read
// is passed over (the shipped logs never make a build fail).
std::vector<TuningRecord> read_folder(const std::string& folder) {
    const std::vector<std::string> files = record_files_under(folder);
    std::vector<TuningRecord> records;
    for (const std::string& f : files) {
        try {
            RecordLog log = read_records(f);
            records.insert(records.end(), std::make_move_iterator(log.records.begin()),
                           std::make_move_iterator(log.records.end()));
        } catch (const Error& e) {
            debug("'" + f + "' not read: " + e.what());
        }
    }
    debug("read " + std::to_string(records.size()) + " records from " +
          std::to_string(files.size()) + " files in '" + folder + "'");
    return records;
}

void forget(Shipped& s) {
    if (s.logs) s.retired.push_back(std::move(s.logs));
    s.read = false;
}

}  // namespace

void use_shipped_tuning_logs(bool on) {
    enabled = on;
}

bool shipped_tuning_logs_enabled() {
    return enabled;
}

std::string shipped_tuning_logs_folder() {
    Shipped& s = shipped();
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.read ? s.folder : find_folder(s);
}

void set_shipped_tuning_logs_folder(const std::string& folder) {
    if (!folder.empty() && !is_folder(folder))
        TESSEL_THROW(RuntimeError)
            << "set_shipped_tuning_logs_folder: '" << folder << "' is not a folder";
    Shipped& s = shipped();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (folder.empty())
        s.folder_given.reset();
    else
        s.folder_given = folder;
    forget(s);
}

void set_default_shipped_tuning_logs_folder(const std::string& folder) {
    Shipped& s = shipped();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.default_folder = folder;
    forget(s);
}

ApplyHistoryBest* shipped_tuning_logs() {
    if (!enabled) return nullptr;
    Shipped& s = shipped();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.read) {
        s.read = true;
        s.folder = find_folder(s);
        std::vector<TuningRecord> records =
            s.folder.empty() ? std::vector<TuningRecord>{} : read_folder(s.folder);
        if (!records.empty())
            s.logs = std::make_unique<ApplyHistoryBest>(ApplyHistoryBest::Detached{},
                                                        std::move(records), debug);
    }
    return s.logs.get();
}

}  // namespace tessel
