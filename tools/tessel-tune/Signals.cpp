// Stopping on SIGTERM and SIGINT (Commands.h): the handler only records the signal; the tuning
// asks stop_signal() between the phases of a round.
#include <signal.h>
#include <unistd.h>

#include "Commands.h"

namespace tessel::tune_tool {

namespace {

volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
    if (g_signal != 0) _exit(128 + sig);  // the second signal: at once
    g_signal = sig;
    const char msg[] = "tessel-tune: stopping after the batch being measured (again to stop now)\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
}

}  // namespace

void install_stop_handlers() {
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
}

int stop_signal() {
    return g_signal;
}

}  // namespace tessel::tune_tool
