// Options described once. An options struct (MeasureOptions, TuningOptions) lists its fields in a
// static `fields(s, v)`, as a Step does (schedule/Step.h): each field's name as users spell it,
// its member, the values it takes, what it means and where it appears. The job file's JSON
// (auto_schedule/tuner/Job.h), the Python keywords with their defaults (ts.auto_schedule.tune,
// ts.Measurer), tessel-tune's flags and the measurement protocol are generic over that
// description; none of them lists the fields again.
//
// How `fields(s, v)` describes a field to a visitor `v` (`Int` is int, int64_t or uint64_t):
//   v.integer(name, Int& member, lo, hi, where, doc)        an integer in [lo, hi]
//   v.number(name, double& member, lo, hi, where, doc)      a finite number in [lo, hi]
//   v.flag(name, bool& member, where, doc)                  true or false
//   v.text(name, std::string& member, where, doc)           a string
// `where` is a mask of OptionSurface bits; the measurement protocol carries every field.
#pragma once

#include <cstdint>

namespace tessel {

/// Where a described option appears, besides the measurement protocol (a mask).
enum OptionSurface : unsigned {
    kJobTop = 1u << 0,      ///< a top-level field of a job file, and a flag of `tessel-tune run`
    kJobSearch = 1u << 1,   ///< a field of a job file's "search" object, and a flag
    kJobMeasure = 1u << 2,  ///< a field of a job file's "measure" object, and a flag
    kTune = 1u << 3,        ///< a keyword of Python's ts.auto_schedule.tune()
    kMeasurer = 1u << 4,    ///< a keyword of Python's ts.Measurer()
    kProtocolOnly = 0,      ///< only in the measurement protocol
};

}  // namespace tessel
