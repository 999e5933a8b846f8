// Named leaf loops (op/LoopNest.h).
#include "op/LoopNest.h"

#include <algorithm>

#include "tessel/Error.h"

namespace tessel::op::internal {

LoopNest::LoopNest(Schedule& s, int stage, std::vector<std::string> names)
    : s_(s), stage_(stage), names_(std::move(names)) {
    TESSEL_CHECK(names_.size() == s_.stage(stage_).leaf.size())
        << "LoopNest: " << names_.size() << " names for " << s_.stage(stage_).leaf.size()
        << " loops of stage " << s_.stage(stage_).name();
}

int LoopNest::pos(const std::string& name) const {
    auto it = std::find(names_.begin(), names_.end(), name);
    TESSEL_CHECK(it != names_.end()) << "LoopNest: no loop " << name;
    return static_cast<int>(it - names_.begin());
}

bool LoopNest::has(const std::string& name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
}

int64_t LoopNest::extent(const std::string& name) const {
    const Stage& st = s_.stage(stage_);
    return st.iters[st.leaf[static_cast<size_t>(pos(name))]].const_extent().value_or(-1);
}

void LoopNest::split(const std::string& name, int64_t factor, const std::string& outer,
                     const std::string& inner) {
    int p = pos(name);
    s_.split(stage_, p, factor);
    names_[static_cast<size_t>(p)] = outer;
    names_.insert(names_.begin() + p + 1, inner);
}

void LoopNest::split_nparts(const std::string& name, int64_t nparts, const std::string& outer,
                            const std::string& inner) {
    int p = pos(name);
    s_.split_nparts(stage_, p, nparts);
    names_[static_cast<size_t>(p)] = outer;
    names_.insert(names_.begin() + p + 1, inner);
}

void LoopNest::fuse(const std::vector<std::string>& names, const std::string& fused) {
    TESSEL_CHECK(!names.empty()) << "LoopNest::fuse of nothing";
    if (names.size() == 1) {
        rename(names[0], fused);
        return;
    }
    std::vector<int> positions;
    for (const std::string& n : names) positions.push_back(pos(n));
    int p = s_.fuse(stage_, positions);
    names_.erase(names_.begin() + positions.front(), names_.begin() + positions.back() + 1);
    names_.insert(names_.begin() + p, fused);
}

void LoopNest::reorder(const std::vector<std::string>& names) {
    TESSEL_CHECK(names.size() == names_.size())
        << "LoopNest::reorder lists " << names.size() << " of " << names_.size() << " loops";
    std::vector<int> order;
    for (const std::string& n : names) order.push_back(pos(n));
    s_.reorder(stage_, order);
    names_ = names;
}

void LoopNest::bind(const std::string& name, IterAnnotation a) {
    s_.bind(stage_, pos(name), a);
}

void LoopNest::unroll(const std::string& name) {
    s_.unroll(stage_, pos(name));
}

void LoopNest::vectorize(const std::string& name) {
    s_.vectorize(stage_, pos(name));
}

void LoopNest::rename(const std::string& from, const std::string& to) {
    names_[static_cast<size_t>(pos(from))] = to;
}

}  // namespace tessel::op::internal
