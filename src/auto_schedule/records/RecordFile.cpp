// Reading and appending tuning logs (auto_schedule/records/Record.h). The reader streams the file
// and never holds more than kMaxRecordLineBytes of a line; the writer cuts a torn tail on open and
// syncs each batch (docs/design.md, decision 6).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tessel/Error.h"
#include "tessel/auto_schedule/records/Record.h"

namespace tessel {

namespace {

void take_line(RecordLog& log, const std::string& line, bool too_long) {
    if (!too_long && line.find_first_not_of(" \t\r") == std::string::npos) return;
    std::string why = "too long";
    std::optional<TuningRecord> r = too_long ? std::nullopt : record_from_json(line, &why);
    if (!r) {
        ++log.skipped;
        ++log.skip_reasons[why];
        return;
    }
    if (r->format_version < kRecordFormatVersion) ++log.migrated;
    log.records.push_back(std::move(*r));
}

}  // namespace

RecordLog read_records(std::istream& in) {
    RecordLog log;
    std::string line;
    bool too_long = false;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        std::streamsize n = in.gcount();
        for (std::streamsize i = 0; i < n; ++i) {
            if (buffer[i] == '\n') {
                take_line(log, line, too_long);
                line.clear();
                too_long = false;
            } else if (!too_long) {
                line.push_back(buffer[i]);
                if (line.size() > kMaxRecordLineBytes) {
                    too_long = true;
                    line.clear();
                }
            }
        }
    }
    if (too_long || !line.empty()) take_line(log, line, too_long);  // a last line without '\n'
    return log;
}

std::vector<std::string> record_files_under(const std::string& folder) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    std::error_code ec;
    if (folder.empty() || !fs::is_directory(folder, ec)) return files;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && it->path().extension() == ".jsonl")
            files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    return files;
}

RecordLog read_records(const std::string& path) {
    std::error_code ec;
    if (!path.empty() && std::filesystem::is_directory(path, ec)) {
        RecordLog all;
        for (const std::string& f : record_files_under(path)) {
            RecordLog log = read_records(f);
            all.records.insert(all.records.end(), std::make_move_iterator(log.records.begin()),
                               std::make_move_iterator(log.records.end()));
            all.skipped += log.skipped;
            all.migrated += log.migrated;
            for (const auto& [why, n] : log.skip_reasons) all.skip_reasons[why] += n;
        }
        return all;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        if (access(path.c_str(), F_OK) != 0) return {};
        TESSEL_THROW(RuntimeError) << "read_records: cannot read '" << path << "'";
    }
    return read_records(in);
}

RecordWriter::RecordWriter(const std::string& path) : path_(path) {
    fd_ = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
        TESSEL_THROW(RuntimeError)
            << "RecordWriter: cannot open '" << path << "': " << std::strerror(errno);
    // Find the end of the last complete line, reading backwards from the end of the file.
    off_t size = lseek(fd_, 0, SEEK_END), keep = size;
    char buffer[4096];
    while (keep > 0) {
        off_t start = std::max<off_t>(0, keep - static_cast<off_t>(sizeof buffer));
        ssize_t n = pread(fd_, buffer, static_cast<size_t>(keep - start), start);
        if (n <= 0) break;
        ssize_t i = n - 1;
        while (i >= 0 && buffer[i] != '\n') --i;
        if (i >= 0) {
            keep = start + i + 1;
            break;
        }
        keep = start;
    }
    if (keep < size) {
        if (ftruncate(fd_, keep) != 0 || fdatasync(fd_) != 0)
            TESSEL_THROW(RuntimeError) << "RecordWriter: cannot cut the torn tail of '" << path
                                       << "': " << std::strerror(errno);
        truncated_ = static_cast<int64_t>(size - keep);
    }
    lseek(fd_, 0, SEEK_END);
}

RecordWriter::~RecordWriter() {
    if (fd_ >= 0) close(fd_);
}

void RecordWriter::append(const std::vector<TuningRecord>& records) {
    for (const TuningRecord& r : records) {
        std::string line = record_to_json(r) + "\n";
        // One write() per line: a crash leaves at most one torn line, at the end.
        ssize_t n = write(fd_, line.data(), line.size());
        while (n < 0 && errno == EINTR) n = write(fd_, line.data(), line.size());
        if (n != static_cast<ssize_t>(line.size()))
            TESSEL_THROW(RuntimeError) << "RecordWriter: writing to '" << path_ << "' failed"
                                       << (n < 0 ? std::string(": ") + std::strerror(errno)
                                                 : std::string(" (short write)"));
    }
    if (fdatasync(fd_) != 0)
        TESSEL_THROW(RuntimeError)
            << "RecordWriter: syncing '" << path_ << "' failed: " << std::strerror(errno);
}

}  // namespace tessel
