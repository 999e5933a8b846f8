// Real-time scheduling and the tuner's time limits, for a tuner run under a real-time policy
// (`chrt -f 10`; docs/tuning.md says why its timings need the kernel's real-time throttle off,
// and why benchmarks run at normal priority). A thread under SCHED_FIFO runs until it blocks, so
// threads that compute without blocking (a compiler building a candidate, a candidate looping
// forever) on every core starve a waiting thread of the same priority: the watchdog that should
// abandon a build past its time limit, or replace a hung measurement worker, wakes only when one
// of them is done (measured: a 48 s build under a 15 s limit). The threads that do the work
// therefore step one priority below their watchdog.
#pragma once

namespace tessel::internal {

/// If the calling thread runs under a real-time policy (SCHED_FIFO, SCHED_RR) at priority p,
/// moves it to p - 1 of the same policy, or to SCHED_OTHER where p is the lowest (1); threads it
/// starts afterwards inherit that. A thread left at p (a watchdog waiting on a timeout) then
/// preempts it as soon as it wakes, and it still runs ahead of every process of normal priority.
/// Returns whether it changed anything (never under a normal policy, or off Linux).
bool step_below_real_time_priority();

/// The calling thread's kernel thread id (gettid; 0 off Linux).
long current_thread_id();

/// Moves thread `tid` of this process to SCHED_IDLE: it runs only where a core has nothing else
/// to do. For a thread whose work is no longer wanted but cannot be stopped (a build abandoned
/// past its time limit), so that it does not slow the timings taken while it finishes. `tid`
/// must be a live thread of this process. Returns whether it changed anything (never off Linux).
bool move_to_idle_priority(long tid);

}  // namespace tessel::internal
