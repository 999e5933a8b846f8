// The tuner's progress output (Tuner.h, TuningOptions::verbose): a line per round, refreshed in
// place on a terminal and appended otherwise (a log file, CI), and the best schedule at the end.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "TunerInternal.h"

namespace tessel {

namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// "12.3 GFLOP/s (0.162 ms)", or "no valid schedule yet".
std::string best_text(double gflops, double seconds) {
    if (!std::isfinite(seconds)) return "no valid schedule yet";
    std::string time = fixed(seconds * 1e3, 3) + " ms";
    return gflops > 0 ? fixed(gflops, 2) + " GFLOP/s (" + time + ")" : time;
}

}  // namespace

std::string format_progress(const TuningProgress& p) {
    std::ostringstream os;
    os << p.task << ": " << p.trials << "/" << p.trials_total << " trials, best "
       << best_text(p.best_gflops, p.best_seconds);
    if (p.last_round) {
        const TuningRound& r = *p.last_round;
        os << " | round " << r.round << ": search " << fixed(r.search_seconds, 1) << " s, build "
           << fixed(r.build_seconds, 1) << " s, run " << fixed(r.run_seconds, 1) << " s, train "
           << fixed(r.train_seconds, 1) << " s";
        if (r.errors > 0) os << ", " << r.errors << " failed";
    }
    os << " | " << format_duration(p.elapsed_seconds) << " elapsed";
    if (p.trials < p.trials_total) os << ", ETA " << format_duration(p.eta_seconds);
    return os.str();
}

namespace internal {

ProgressPrinter::ProgressPrinter(int verbose) : verbose_(verbose), tty_(isatty(STDERR_FILENO)) {}

void ProgressPrinter::start(const TuningProgress& p, const std::string& log_file) {
    if (verbose_ < 1) return;
    std::cerr << "tune " << p.task << ": " << p.trials_total << " trials, log " << log_file;
    if (p.resumed_trials > 0) std::cerr << " (resuming after " << p.resumed_trials << " trials)";
    std::cerr << "\n";
}

void ProgressPrinter::round(const TuningProgress& p) {
    if (verbose_ < 1) return;
    if (tty_ && open_line_) std::cerr << "\r\033[K";
    if (verbose_ >= 2 && p.last_round) {
        const TuningRound& r = *p.last_round;
        const EvolutionStats& s = r.search;
        std::cerr << "  round " << r.round << ": " << r.chosen_by_model << " from the model, "
                  << r.random << " random" << (r.measured_default ? ", the default schedule" : "");
        if (s.scored > 0)
            std::cerr << "; search: " << s.scored << " states scored (sample "
                      << fixed(s.sample_seconds, 2) << " s, breed+features "
                      << fixed(s.breed_seconds, 2) << " s, predict " << fixed(s.predict_seconds, 2)
                      << " s)";
        if (r.quality.from_model && !std::isnan(r.quality.pairwise_accuracy))
            std::cerr << "; model pairwise accuracy on the round "
                      << fixed(r.quality.pairwise_accuracy, 3);
        if (r.restarted) std::cerr << "; the search restarts (epoch " << r.epoch + 1 << ")";
        std::cerr << "\n";
    }
    std::cerr << format_progress(p);
    if (tty_) {
        open_line_ = true;
        std::cerr << std::flush;
    } else {
        std::cerr << std::endl;
    }
}

void ProgressPrinter::finish(const TuningResult& r, const std::string& task) {
    if (verbose_ < 1) return;
    if (tty_ && open_line_) std::cerr << "\n";
    open_line_ = false;
    // The best's figure: the final check's where it ran (TuningResult::final_seconds), with the
    // default's beside it and the search's own figure for its best.
    std::string best = best_text(r.best_gflops, r.best_seconds);
    if (std::isfinite(r.final_seconds)) {
        auto gflops = [&](double s) { return r.flops > 0 ? r.flops / s / 1e9 : 0; };
        best = best_text(r.final_gflops, r.final_seconds) + " in the final check (";
        if (r.best_is_default)
            best += "the default schedule; ";
        else if (std::isfinite(r.default_seconds))
            best +=
                "the default: " + best_text(gflops(r.default_seconds), r.default_seconds) + "; ";
        best += "the search's timings of its best: " +
                best_text(gflops(r.search_best_seconds), r.search_best_seconds) + ")";
    }
    std::cerr << "tune " << task << ": " << r.trials << " trials (" << r.stop_reason << "), best "
              << best << ", " << format_duration(r.seconds) << "\n"
              << std::flush;
    if (!r.best_schedule) return;
    std::cout << "# best of " << r.trials << " trials: " << best << "\n"
              << r.best_schedule->to_python() << std::flush;
}

}  // namespace internal

std::string format_duration(double seconds) {
    if (!std::isfinite(seconds)) return "?";
    char buf[32];
    long s = std::lround(seconds);
    if (s < 60)
        std::snprintf(buf, sizeof buf, "%lds", s);
    else if (s < 3600)
        std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
    else
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
    return buf;
}

}  // namespace tessel
