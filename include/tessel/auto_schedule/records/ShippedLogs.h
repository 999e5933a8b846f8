// The tuning logs shipped with tessel (tuning_logs/ in the repository; docs/tuning.md, "Shipped
// tuning logs"): tuned schedules for the operator library's benchmark workloads on the reference
// machines, used by build() and op::default_schedule() without any tuning.
//
//   Module m = build(create_schedule({C}), {A, B, C}, target);  // the shipped best, if any
//   BuildOptions naive;
//   naive.tuning_logs = false;                                   // the loop nest as written
//   Module baseline = build(create_schedule({C}), {A, B, C}, target, "main", naive);
//   use_shipped_tuning_logs(false);                              // from now on: the default rules
//
// Outside any ApplyHistoryBest context, op::default_schedule() asks the shipped logs as an
// apply-best context (rules 1-3 of ApplyHistoryBest.h: the exact target first, then a compatible
// one, else the default rules), and build() of a schedule without steps takes their record for
// its DAG and target when they hold one, and compiles the loop nest as written otherwise
// (BuildOptions::tuning_logs = false always does: baselines). Unlike a context the user opens,
// the shipped logs stay quiet: most computations have no record there, so their warnings print
// only under TESSEL_DEBUG=1 and above. A user's own context always comes first.
//
// The folder, found once per process at first use:
//  0. the folder given to set_shipped_tuning_logs_folder(), when one was;
//  1. else TESSEL_TUNING_LOGS when set: a folder, or "off" (also "0" or "none") for none;
//  2. else the folder given to set_default_shipped_tuning_logs_folder() (the Python package
//     gives its own copy: tessel/tuning_logs inside a wheel);
//  3. else the installed <datadir>/tessel/tuning_logs, else the source tree's tuning_logs/ (a
//     build tree's library), whichever exists first.
// Every *.jsonl file under the folder (and its subfolders) is read; bad lines are skipped.
#pragma once

#include <string>

#include "tessel/auto_schedule/records/ApplyHistoryBest.h"

namespace tessel {

/// Turns the shipped logs on (the default) or off for the whole process.
void use_shipped_tuning_logs(bool on);
/// Whether use_shipped_tuning_logs left them on (TESSEL_TUNING_LOGS=off leaves no folder instead).
bool shipped_tuning_logs_enabled();

/// The folder the shipped logs are read from (see the file comment), "" when there is none.
std::string shipped_tuning_logs_folder();
/// Reads the shipped logs from `folder` from now on (rule 0 of the file comment; "" forgets it,
/// back to rules 1-3); the records are read again at the next use. RuntimeError when `folder`
/// is not a folder.
void set_shipped_tuning_logs_folder(const std::string& folder);
/// The folder of rule 2 of the file comment (below TESSEL_TUNING_LOGS); "" forgets it.
void set_default_shipped_tuning_logs_folder(const std::string& folder);

/// The shipped logs as an apply-best context that is never any thread's current one; null when
/// they are off or there is no folder. Shared by every thread (choose() is thread-safe).
ApplyHistoryBest* shipped_tuning_logs();

}  // namespace tessel
