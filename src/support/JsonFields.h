// The typed reader of a JSON object's fields, and options described once (tessel/Options.h) read
// from JSON and written to it. A problem names the field by its path ("search.population must be
// in [1, 1048576], got 0") and goes to a sink: jobs collect every problem before reporting them,
// the measurement protocol throws at the first.
//
//   std::vector<std::string> problems;
//   JsonFields f(j, "measure", collect_into(problems));
//   f.only(option_names<MeasureOptions>(kJobMeasure));
//   read_options(f, job.measure, kJobMeasure);
//   nlohmann::json out = options_json(job.measure, kJobMeasure);
#pragma once

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel::internal {

/// Where a JsonFields reader sends each problem.
using ProblemSink = std::function<void(const std::string& problem)>;

/// A sink that appends every problem to `problems`.
inline ProblemSink collect_into(std::vector<std::string>& problems) {
    return [&problems](const std::string& p) { problems.push_back(p); };
}

/// Reads fields of one JSON object by name and type. An absent field leaves its destination as
/// it was; a field of the wrong type or out of its range is a problem.
class JsonFields {
public:
    using json = nlohmann::json;
    JsonFields(const json& object, std::string path, ProblemSink sink)
        : j_(object), path_(std::move(path)), sink_(std::move(sink)) {}

    bool has(const char* key) const { return j_.contains(key); }
    const json& at(const char* key) const { return j_.at(key); }
    void problem(const std::string& what) { sink_(what); }
    /// The field's path: "key", or "path.key" inside a nested object.
    std::string name(const std::string& key) const {
        return path_.empty() ? key : path_ + "." + key;
    }

    template <typename T>
    void integer(const char* key, T& out, int64_t lo, int64_t hi) {
        if (!has(key)) return;
        const json& v = j_.at(key);
        if (!v.is_number_integer()) return wrong(key, "an integer", v);
        bool in_range = v.is_number_unsigned()
                            ? v.get<uint64_t>() <= static_cast<uint64_t>(hi) &&
                                  (lo <= 0 || v.get<uint64_t>() >= static_cast<uint64_t>(lo))
                            : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
        if (!in_range)
            return problem(name(key) + " must be in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "], got " + v.dump());
        out = static_cast<T>(v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>())
                                                    : v.get<int64_t>());
    }
    void number(const char* key, double& out, double lo, double hi) {
        if (!has(key)) return;
        const json& v = j_.at(key);
        if (!v.is_number()) return wrong(key, "a number", v);
        double d = v.get<double>();
        if (!(d >= lo && d <= hi))
            return problem(name(key) + " must be in [" + json(lo).dump() + ", " + json(hi).dump() +
                           "], got " + v.dump());
        out = d;
    }
    void boolean(const char* key, bool& out) {
        if (!has(key)) return;
        if (!j_.at(key).is_boolean()) return wrong(key, "true or false", j_.at(key));
        out = j_.at(key).get<bool>();
    }
    void text(const char* key, std::string& out) {
        if (!has(key)) return;
        if (!j_.at(key).is_string()) return wrong(key, "a string", j_.at(key));
        out = j_.at(key).get<std::string>();
    }
    /// Every key of `required` that the object lacks is a problem.
    void require(const std::vector<std::string>& required) {
        for (const std::string& k : required)
            if (!j_.contains(k)) problem("missing field '" + name(k) + "'");
    }
    /// Every key not in `known` is a problem (a typo would otherwise be ignored).
    void only(const std::vector<std::string>& known) {
        for (auto it = j_.begin(); it != j_.end(); ++it) {
            bool ok = false;
            for (const std::string& k : known) ok = ok || it.key() == k;
            if (!ok) problem("unknown field " + name(it.key()));
        }
    }

private:
    void wrong(const char* key, const char* what, const json& v) {
        std::string shown = v.dump();
        if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
        problem(name(key) + " must be " + what + ", got " + shown);
    }

    const json& j_;
    std::string path_;
    ProblemSink sink_;
};

/// Every surface bit: the measurement protocol's mask (it carries every field).
constexpr unsigned kEveryField = ~0u;

namespace options_detail {

inline bool shown(unsigned where, unsigned mask) {
    return mask == kEveryField || (where & mask) != 0;
}

struct Reader {
    JsonFields& f;
    unsigned mask;
    template <typename T>
    void integer(const char* n, T& m, int64_t lo, int64_t hi, unsigned w, const char*) {
        if (shown(w, mask)) f.integer(n, m, lo, hi);
    }
    void number(const char* n, double& m, double lo, double hi, unsigned w, const char*) {
        if (shown(w, mask)) f.number(n, m, lo, hi);
    }
    void flag(const char* n, bool& m, unsigned w, const char*) {
        if (shown(w, mask)) f.boolean(n, m);
    }
    void text(const char* n, std::string& m, unsigned w, const char*) {
        if (shown(w, mask)) f.text(n, m);
    }
};

struct Writer {
    nlohmann::json& out;
    unsigned mask;
    template <typename T>
    void integer(const char* n, const T& m, int64_t, int64_t, unsigned w, const char*) {
        if (shown(w, mask)) out[n] = m;
    }
    void number(const char* n, const double& m, double, double, unsigned w, const char*) {
        if (shown(w, mask)) out[n] = m;
    }
    void flag(const char* n, const bool& m, unsigned w, const char*) {
        if (shown(w, mask)) out[n] = m;
    }
    void text(const char* n, const std::string& m, unsigned w, const char*) {
        if (shown(w, mask)) out[n] = m;
    }
};

struct Names {
    std::vector<std::string>& out;
    unsigned mask;
    template <typename T>
    void integer(const char* n, const T&, int64_t, int64_t, unsigned w, const char*) {
        add(n, w);
    }
    void number(const char* n, const double&, double, double, unsigned w, const char*) {
        add(n, w);
    }
    void flag(const char* n, const bool&, unsigned w, const char*) { add(n, w); }
    void text(const char* n, const std::string&, unsigned w, const char*) { add(n, w); }
    void add(const char* n, unsigned w) {
        if (shown(w, mask)) out.push_back(n);
    }
};

}  // namespace options_detail

/// Reads the fields of `options` that `mask` shows from the object of `f`.
template <typename T>
void read_options(JsonFields& f, T& options, unsigned mask) {
    options_detail::Reader r{f, mask};
    T::fields(options, r);
}

/// The fields of `options` that `mask` shows, as a JSON object (in the order described).
template <typename T>
nlohmann::json options_json(const T& options, unsigned mask) {
    nlohmann::json out = nlohmann::json::object();
    options_detail::Writer w{out, mask};
    T::fields(options, w);
    return out;
}

/// The names of the fields of T that `mask` shows, in the order described.
template <typename T>
std::vector<std::string> option_names(unsigned mask) {
    std::vector<std::string> out;
    options_detail::Names n{out, mask};
    const T defaults{};
    T::fields(defaults, n);
    return out;
}

}  // namespace tessel::internal
