// How deeply a JSON text nests its brackets (outside strings), found by a scan before parsing: a
// hostile text of a million '[' then costs a scan, not the parser's recursion. Used by the
// record reader (auto_schedule/records/RecordJson.cpp), the job reader
// (auto_schedule/tuner/Job.cpp) and the DAG reader (te/SerializeRead.cpp).
#pragma once

#include <algorithm>
#include <string>

namespace tessel::internal {

/// The deepest bracket nesting of `text`, or the first depth past `limit` (the scan stops there).
inline int json_nesting_depth(const std::string& text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return deepest;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return deepest;
}

}  // namespace tessel::internal
