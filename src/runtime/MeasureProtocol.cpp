// Framing of the measurement messages (MeasureProtocol.h). Reads poll with a deadline so that a
// hung worker is noticed; writes use send(MSG_NOSIGNAL) so that a dead worker is an error code,
// not a SIGPIPE that would take the tuner down.
#include "runtime/MeasureProtocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace tessel::internal::measure {

namespace {

// Frames larger than this are corrupt (a module or a task's arrays are far smaller).
constexpr uint64_t kMaxPart = uint64_t(1) << 36;

bool write_all(int fd, const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == ENOTSOCK) n = write(fd, p, size);  // a pipe, in tests
        if (n <= 0) return false;
        p += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

using Clock = std::chrono::steady_clock;

// Reads exactly `size` bytes before `deadline` (or without one).
ReadStatus read_all(int fd, void* data, size_t size, bool has_deadline,
                    Clock::time_point deadline) {
    char* p = static_cast<char*>(data);
    while (size > 0) {
        int wait_ms = -1;
        if (has_deadline) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) return ReadStatus::Timeout;
            wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
        }
        pollfd pfd{fd, POLLIN, 0};
        int ready = poll(&pfd, 1, wait_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return ReadStatus::Closed;
        if (ready == 0) return ReadStatus::Timeout;
        ssize_t n = read(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return ReadStatus::Closed;
        p += n;
        size -= static_cast<size_t>(n);
    }
    return ReadStatus::Ok;
}

}  // namespace

bool write_message(int fd, const Message& m) {
    uint32_t kind = static_cast<uint32_t>(m.kind);
    uint64_t json_size = m.json.size(), data_size = m.data.size();
    return write_all(fd, &kind, 4) && write_all(fd, &json_size, 8) &&
           write_all(fd, m.json.data(), m.json.size()) && write_all(fd, &data_size, 8) &&
           write_all(fd, m.data.data(), m.data.size());
}

ReadStatus read_message(int fd, double timeout_seconds, Message& out) {
    bool has_deadline = timeout_seconds >= 0;
    Clock::time_point deadline =
        Clock::now() +
        std::chrono::microseconds(static_cast<int64_t>(has_deadline ? timeout_seconds * 1e6 : 0));
    uint32_t kind = 0;
    uint64_t size = 0;
    ReadStatus s = read_all(fd, &kind, 4, has_deadline, deadline);
    if (s != ReadStatus::Ok) return s;
    if ((s = read_all(fd, &size, 8, has_deadline, deadline)) != ReadStatus::Ok) return s;
    if (size > kMaxPart) return ReadStatus::Corrupt;
    out.kind = static_cast<MessageKind>(kind);
    out.json.resize(size);
    if ((s = read_all(fd, out.json.data(), size, has_deadline, deadline)) != ReadStatus::Ok)
        return s;
    if ((s = read_all(fd, &size, 8, has_deadline, deadline)) != ReadStatus::Ok) return s;
    if (size > kMaxPart) return ReadStatus::Corrupt;
    out.data.resize(size);
    return read_all(fd, out.data.data(), size, has_deadline, deadline);
}

}  // namespace tessel::internal::measure
