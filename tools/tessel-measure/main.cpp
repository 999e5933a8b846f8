// tessel-measure: the tuner's measurement worker (docs/tuning.md, "Measurement"). It links
// libtessel_runtime alone, so no LLVM and no compiler runs in it, and answers the requests of the
// client (auto_schedule/measure/Measure.h) on a socket until told to exit or the socket closes:
//
//   tessel-measure --fd 3 [--parent <pid>] [--test-faults]
//
// The client starts it with PR_SET_PDEATHSIG set (the worker dies with it), under an address-space
// limit when one is configured, and replaces it when it crashes, hangs or runs out of memory.
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "Worker.h"
#include "runtime/RealTimePriority.h"

using tessel::internal::measure::Message;
using tessel::internal::measure::MessageKind;
using tessel::internal::measure::ReadStatus;

int main(int argc, char** argv) {
    CLI::App app("tessel-measure: runs and times tuning candidates for a tessel client");
    int fd = -1;
    long parent = 0;
    tessel::measure_worker::WorkerOptions options;
    app.add_option("--fd", fd, "the socket to the client")->required();
    app.add_option("--parent", parent, "exit if this process is not the parent");
    app.add_flag("--test-faults", options.test_faults, "honour the faults tests plant");
    CLI11_PARSE(app, argc, argv);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (parent != 0 && getppid() != parent) return 1;  // the client died before prctl
    // Below the client's real-time priority (if any; its thread pool, started later, too): a
    // candidate spinning on every core must not keep the client from noticing the hang.
    tessel::internal::step_below_real_time_priority();
    tessel::measure_worker::Worker worker(options);
    for (;;) {
        Message request;
        if (tessel::internal::measure::read_message(fd, -1, request) != ReadStatus::Ok) return 0;
        if (request.kind == MessageKind::Exit) return 0;
        if (!tessel::internal::measure::write_message(fd, worker.handle(request))) return 0;
    }
}
