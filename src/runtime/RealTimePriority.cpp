// step_below_real_time_priority and move_to_idle_priority (runtime/RealTimePriority.h).
#include "runtime/RealTimePriority.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tessel::internal {

bool step_below_real_time_priority() {
#if defined(__linux__)
    int policy = 0;
    sched_param param{};
    if (pthread_getschedparam(pthread_self(), &policy, &param) != 0) return false;
    if (policy != SCHED_FIFO && policy != SCHED_RR) return false;
    int lowest = sched_get_priority_min(policy);
    if (param.sched_priority > lowest) {
        param.sched_priority -= 1;  // lowering one's own priority needs no privilege
        return pthread_setschedparam(pthread_self(), policy, &param) == 0;
    }
    sched_param normal{};
    normal.sched_priority = 0;
    return pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal) == 0;
#else
    return false;
#endif
}

long current_thread_id() {
#if defined(__linux__)
    return static_cast<long>(syscall(SYS_gettid));
#else
    return 0;
#endif
}

bool move_to_idle_priority(long tid) {
#if defined(__linux__)
    if (tid <= 0) return false;
    sched_param param{};
    param.sched_priority = 0;  // lowering a thread of one's own needs no privilege
    return sched_setscheduler(static_cast<pid_t>(tid), SCHED_IDLE, &param) == 0;
#else
    (void)tid;
    return false;
#endif
}

}  // namespace tessel::internal
