// The messages between the tuner's measurement client (auto_schedule/measure/Measure.h) and its
// worker processes (tools/tessel-measure), over a Unix stream socket. Each message is a frame:
//
//   uint32 kind | uint64 n | n bytes of JSON | uint64 m | m bytes of binary data
//
// in the machine's byte order (both ends run on one machine). The client sends Setup (the task's
// arguments and input data, and, once the client has them, the reference outputs and their
// tolerances), then per candidate Run (the saved module) and, when the outputs are right, Time
// (the reply carries the costs). Run runs the candidate once on NaN-filled outputs; a worker
// holding references compares the outputs itself and replies with one comparison per output
// ("checks"), otherwise the reply carries the outputs. Exit ends the worker. A reply is a Reply
// frame whose JSON has "status": "ok", or an error status and "message" (docs/tuning.md,
// "Measurement").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::internal::measure {

/// What a frame asks or answers.
/// Built carries modules a cluster's daemon built for a Run it sent (ClusterMeasureRunner.cpp).
enum class MessageKind : uint32_t {
    Setup = 1,
    Run = 2,
    Time = 3,
    Exit = 4,
    Built = 5,
    Reply = 100
};

/// One frame.
struct Message {
    MessageKind kind = MessageKind::Reply;
    std::string json;           ///< the header (a JSON object)
    std::vector<uint8_t> data;  ///< binary data (input or output arrays, a module)
};

/// How a read ended.
enum class ReadStatus { Ok, Closed, Timeout, Corrupt };

/// Writes `m` to `fd` completely; false when the other end is gone (no SIGPIPE is raised).
bool write_message(int fd, const Message& m);

/// Reads one message from `fd`, waiting at most `timeout_seconds` in total (< 0: no limit).
ReadStatus read_message(int fd, double timeout_seconds, Message& out);

/// The status a worker replies with (the JSON's "status" field).
namespace status {
inline constexpr const char* kOk = "ok";
inline constexpr const char* kLoadError = "load_error";
inline constexpr const char* kRunError = "run_error";
inline constexpr const char* kOutOfBounds = "out_of_bounds_write";
inline constexpr const char* kOutOfMemory = "out_of_memory";
inline constexpr const char* kBadRequest = "bad_request";
}  // namespace status

}  // namespace tessel::internal::measure
