// A stage's leaf loops addressed by names instead of positions, for the default schedules: a
// split or a fuse shifts the positions of the loops after it, so a schedule of several splits
// and a reorder is easier to read (and to get right) with names.
//
//   LoopNest q(s, stage, {"i", "j"});
//   q.split("i", 64, "bi", "i");          // [bi, i, j]
//   q.reorder({"bi", "j", "i"});
//   q.bind("bi", IterAnnotation::BlockX);
#pragma once

#include <string>
#include <vector>

#include "tessel/schedule/Schedule.h"

namespace tessel::op::internal {

/// The leaf loops of one stage of `s`, each with a name (InternalError for an unknown name).
class LoopNest {
public:
    /// `names`: one per leaf of the stage, outermost first.
    LoopNest(Schedule& s, int stage, std::vector<std::string> names);

    /// The leaf position of loop `name`.
    int pos(const std::string& name) const;
    bool has(const std::string& name) const;
    /// The loop's constant extent (-1 when it is not constant).
    int64_t extent(const std::string& name) const;
    /// Splits `name` into (outer, inner) with inner extent `factor`.
    void split(const std::string& name, int64_t factor, const std::string& outer,
               const std::string& inner);
    /// Splits `name` into `nparts` outer iterations.
    void split_nparts(const std::string& name, int64_t nparts, const std::string& outer,
                      const std::string& inner);
    /// Fuses consecutive loops `names` (outermost first) into `fused`.
    void fuse(const std::vector<std::string>& names, const std::string& fused);
    /// The loops in this order; `names` lists every loop.
    void reorder(const std::vector<std::string>& names);
    void bind(const std::string& name, IterAnnotation a);
    void unroll(const std::string& name);
    void vectorize(const std::string& name);
    /// Renames a loop.
    void rename(const std::string& from, const std::string& to);
    int stage() const { return stage_; }

private:
    Schedule& s_;
    int stage_;
    std::vector<std::string> names_;
};

}  // namespace tessel::op::internal
