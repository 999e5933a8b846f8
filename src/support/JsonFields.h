// The one typed reader of JSON fields, and options described once (tessel/Options.h) read from
// JSON and written to it. Jobs, the measurement protocol, search tasks, tuning records, hardware
// parameters and the DAG reader read their fields through it.
//
// The reader checks; its caller words. Each problem (a missing field, a wrong type, a value out
// of its range, an unknown name or field) goes to the caller's FieldReporter as a FieldProblem,
// and the reporter turns it into that caller's error: jobs collect every problem in the default
// wording (describe(): "search.population must be in [1, 1048576], got 0"), a tuning record
// skips its line with a reason that carries no value (the reason is a histogram key), the DAG
// reader throws a DSLError that dag_from_json prefixes with its JSON path, the measurement
// protocol throws a RuntimeError. A reporter that returns lets the reader go on: the destination
// of a failed read is left as it was and the read returns false.
//
//   std::vector<std::string> problems;
//   JsonFields f(j, "measure", collect_into(problems));
//   f.only(option_names<MeasureOptions>(kJobMeasure));
//   read_options(f, job.measure, kJobMeasure);
//   nlohmann::json out = options_json(job.measure, kJobMeasure);
//
// The reader is a template over the JSON type (nlohmann::json, and nlohmann::ordered_json for
// the DAG reader); problems are plain strings, so one reporter serves both.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel::internal {

/// What a field (or a list item) should have been.
enum class JsonType { Integer, Number, Boolean, String, Array, Object };

/// The default words for a type: "an integer", "a number", "true or false", "a string",
/// "an array", "an object".
inline const char* json_type_words(JsonType t) {
    switch (t) {
        case JsonType::Integer: return "an integer";
        case JsonType::Number: return "a number";
        case JsonType::Boolean: return "true or false";
        case JsonType::String: return "a string";
        case JsonType::Array: return "an array";
        case JsonType::Object: return "an object";
    }
    return "a value";
}

/// One problem the reader found, for a reporter to word.
struct FieldProblem {
    enum class Kind {
        NotAnObject,   ///< the value read from is no object (`key`: the field looked for)
        Missing,       ///< a required field is absent
        WrongType,     ///< the field is not `expected`
        OutOfRange,    ///< a number outside `range` (or not finite)
        UnknownName,   ///< a string naming none of `noun`'s values
        UnknownField,  ///< a field the caller does not know
        Message,       ///< the caller's own text, in `message`
    };
    Kind kind = Kind::Message;
    /// False for a list item or a whole value read by itself: `key` is then the caller's label
    /// ("an axis", "a cost") instead of a field's key.
    bool field = true;
    std::string key;   ///< the field's key ("num_cores"), or the item's label
    std::string path;  ///< "hardware.num_cores"; for NotAnObject the object's own path
    JsonType expected = JsonType::Object;  ///< WrongType: what it should be
    std::string range;                     ///< OutOfRange: "[1, 4096]"
    bool above = false;                    ///< OutOfRange: the value is above the range
    std::string noun;                      ///< UnknownName: what the string should name
    std::string value;                     ///< the offending value as JSON, cut after 40 chars
    std::string type_name;                 ///< its JSON type ("string", "object", ...)
    std::string message;                   ///< Message: the whole text
};

/// Turns a problem into the caller's error: throws it, or collects it and returns.
using FieldReporter = std::function<void(const FieldProblem&)>;

/// The default wording, by the field's path: "missing field 'tasks[0].workload'",
/// "hardware.num_cores must be an integer, got \"4\"", "search.population must be in
/// [1, 1048576], got 0", "strategy must be \"gradient\" or \"round-robin\", got \"x\"" (the noun
/// lists the names), "unknown field measure.numbr", "hardware must be an object".
inline std::string describe(const FieldProblem& p) {
    using K = FieldProblem::Kind;
    switch (p.kind) {
        case K::NotAnObject: return (p.path.empty() ? "the value" : p.path) + " must be an object";
        case K::Missing: return "missing field '" + p.path + "'";
        case K::WrongType:
            return p.path + " must be " + json_type_words(p.expected) + ", got " + p.value;
        case K::OutOfRange: return p.path + " must be in " + p.range + ", got " + p.value;
        case K::UnknownName: return p.path + " must be " + p.noun + ", got " + p.value;
        case K::UnknownField: return "unknown field " + p.path;
        case K::Message: return p.message;
    }
    return p.message;
}

/// A reporter that appends every problem, in the default wording, to `problems`.
inline FieldReporter collect_into(std::vector<std::string>& problems) {
    return [&problems](const FieldProblem& p) { problems.push_back(describe(p)); };
}

/// Whether a field must be present.
enum class Need { Optional, Required };
constexpr Need kOptional = Need::Optional;
constexpr Need kRequired = Need::Required;

/// Reads fields of one JSON object by key and type. An absent optional field leaves its
/// destination as it was; an absent required field, a field of the wrong type or out of its
/// range is reported. Each read returns whether it set its destination. A value that is no object
/// is reported once, at the first read.
template <typename Json>
class BasicJsonFields {
public:
    /// Reads the fields of `object`, whose path is `path` ("" at the top, "search",
    /// "tasks[2]"); problems go to `reporter`. A non-object is reported at the first read.
    BasicJsonFields(const Json& object, std::string path, FieldReporter reporter)
        : j_(object), path_(std::move(path)), report_(std::move(reporter)) {}

    /// Whether the object has the field.
    bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
    /// The field's value (it must be present).
    const Json& at(const char* key) const { return j_.at(key); }
    /// The object read.
    const Json& json() const { return j_; }
    /// The field's path: "key", or "path.key" inside a nested object.
    std::string name(const std::string& key) const {
        return path_.empty() ? key : path_ + "." + key;
    }
    /// The reporter problems go to.
    const FieldReporter& reporter() const { return report_; }
    /// Reports the caller's own text.
    void problem(const std::string& what) {
        FieldProblem p;
        p.kind = FieldProblem::Kind::Message;
        p.path = path_;
        p.message = what;
        report_(p);
    }

    /// The field's value, of any type, or null when it is absent.
    const Json* value(const char* key, Need need = kOptional) { return find(key, need); }
    /// An integer in [lo, hi] that fits T (int, int64_t, uint64_t, ...): a JSON integer, not
    /// 2.0. The bounds may be of any integer type.
    template <typename T, typename L, typename H>
    bool integer(const char* key, T& out, L lo, H hi, Need need = kOptional) {
        const Json* v = find(key, need);
        return v && integer_value(*v, at_field(key), out, lo, hi);
    }
    /// An unsigned integer: integer() over all of T's values from 0.
    template <typename T>
    bool unsigned_integer(const char* key, T& out, Need need = kOptional) {
        static_assert(std::is_unsigned_v<T>);
        return integer(key, out, T(0), std::numeric_limits<T>::max(), need);
    }
    /// A finite number in [lo, hi] (an integer is a number too).
    bool number(const char* key, double& out, double lo, double hi, Need need = kOptional) {
        const Json* v = find(key, need);
        return v && number_value(*v, at_field(key), out, lo, hi);
    }
    /// true or false.
    bool boolean(const char* key, bool& out, Need need = kOptional) {
        const Json* v = find(key, need);
        if (!v) return false;
        if (!v->is_boolean()) return wrong(at_field(key), JsonType::Boolean, *v);
        out = v->template get<bool>();
        return true;
    }
    /// A string.
    bool text(const char* key, std::string& out, Need need = kOptional) {
        const Json* v = find(key, need);
        if (!v) return false;
        if (!v->is_string()) return wrong(at_field(key), JsonType::String, *v);
        out = v->template get<std::string>();
        return true;
    }
    /// For a reporter that throws (a read that returns has succeeded): a required string, and a
    /// required finite number in [lo, hi], as values.
    std::string required_text(const char* key) {
        std::string s;
        text(key, s, kRequired);
        return s;
    }
    double required_number(const char* key, double lo, double hi) {
        double v = 0;
        number(key, v, lo, hi, kRequired);
        return v;
    }
    /// A string naming one value of an enumeration: `from_name` gives the value of a name, or
    /// nothing; `noun` says what the string names, for the reporter ("error code", or for
    /// describe() the names themselves: "\"shared\" or \"per-task\"").
    template <typename E, typename FromName>
    bool choice(const char* key, E& out, FromName from_name, const std::string& noun,
                Need need = kOptional) {
        std::string s;
        if (!text(key, s, need)) return false;
        std::optional<E> e = from_name(s);
        if (!e) {
            FieldProblem p = at_field(key);
            p.kind = FieldProblem::Kind::UnknownName;
            p.noun = noun;
            fill_value(p, j_.at(key));
            report_(p);
            return false;
        }
        out = *e;
        return true;
    }
    /// An array: the field's value, or null when it is absent or no array.
    const Json* array(const char* key, Need need = kOptional) {
        return typed(key, need, JsonType::Array);
    }
    /// An object: the field's value, or null when it is absent or no object.
    const Json* object(const char* key, Need need = kOptional) {
        return typed(key, need, JsonType::Object);
    }
    /// A reader of the nested object `key` (path "path.key", the same reporter), or nothing
    /// when it is absent or no object.
    std::optional<BasicJsonFields> fields(const char* key, Need need = kOptional) {
        const Json* v = object(key, need);
        if (!v) return std::nullopt;
        return BasicJsonFields(*v, name(key), report_);
    }

    /// A list item or other value read by itself, named `label` for the reporter ("an axis"):
    /// an integer in [lo, hi] that fits T.
    template <typename T, typename L, typename H>
    bool integer_item(const Json& v, const std::string& label, T& out, L lo, H hi) {
        return integer_value(v, at_item(label), out, lo, hi);
    }
    /// A list item read by itself: a finite number in [lo, hi].
    bool number_item(const Json& v, const std::string& label, double& out, double lo, double hi) {
        return number_value(v, at_item(label), out, lo, hi);
    }

    /// Every key of `required` that the object lacks is reported missing.
    void require(const std::vector<std::string>& required) {
        for (const std::string& k : required) find(k.c_str(), kRequired);
    }
    /// Every key not in `known` is reported (a typo would otherwise be ignored): the policy of
    /// the callers whose objects have no room for a later version's fields.
    void only(const std::vector<std::string>& known) {
        if (!is_object("")) return;
        for (auto it = j_.begin(); it != j_.end(); ++it) {
            bool ok = false;
            for (const std::string& k : known) ok = ok || it.key() == k;
            if (ok) continue;
            FieldProblem p = at_field(it.key());
            p.kind = FieldProblem::Kind::UnknownField;
            report_(p);
        }
    }

private:
    FieldProblem at_field(const std::string& key) const {
        FieldProblem p;
        p.key = key;
        p.path = name(key);
        return p;
    }
    static FieldProblem at_item(const std::string& label) {
        FieldProblem p;
        p.field = false;
        p.key = label;
        p.path = label;
        return p;
    }
    static void fill_value(FieldProblem& p, const Json& v) {
        p.value = v.dump(-1, ' ', false, Json::error_handler_t::replace);
        if (p.value.size() > 40) p.value = p.value.substr(0, 40) + "...";
        p.type_name = v.type_name();
    }

    // Whether the value read from is an object; reported once if not.
    bool is_object(const char* key) {
        if (j_.is_object()) return true;
        if (not_object_reported_) return false;
        not_object_reported_ = true;
        FieldProblem p;
        p.kind = FieldProblem::Kind::NotAnObject;
        p.key = key;
        p.path = path_;
        fill_value(p, j_);
        report_(p);
        return false;
    }
    // The field's value, or null (reported when required).
    const Json* find(const char* key, Need need) {
        if (!is_object(key)) return nullptr;
        auto it = j_.find(key);
        if (it != j_.end()) return &*it;
        if (need == kRequired) {
            FieldProblem p = at_field(key);
            p.kind = FieldProblem::Kind::Missing;
            report_(p);
        }
        return nullptr;
    }
    const Json* typed(const char* key, Need need, JsonType type) {
        const Json* v = find(key, need);
        if (!v) return nullptr;
        bool ok = type == JsonType::Array ? v->is_array() : v->is_object();
        if (!ok) {
            wrong(at_field(key), type, *v);
            return nullptr;
        }
        return v;
    }
    bool wrong(FieldProblem p, JsonType expected, const Json& v) {
        p.kind = FieldProblem::Kind::WrongType;
        p.expected = expected;
        fill_value(p, v);
        report_(p);
        return false;
    }
    bool out_of_range(FieldProblem p, std::string range, bool above, const Json& v) {
        p.kind = FieldProblem::Kind::OutOfRange;
        p.range = std::move(range);
        p.above = above;
        fill_value(p, v);
        report_(p);
        return false;
    }

    template <typename T, typename L, typename H>
    bool integer_value(const Json& v, FieldProblem where, T& out, L lo, H hi) {
        static_assert(std::is_integral_v<T> && std::is_integral_v<L> && std::is_integral_v<H>);
        if (!v.is_number_integer()) return wrong(std::move(where), JsonType::Integer, v);
        std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        // nlohmann holds a non-negative integer as unsigned, a negative one as signed.
        if (v.is_number_unsigned()) {
            uint64_t u = v.template get<uint64_t>();
            bool above = std::cmp_greater(u, hi) || !std::in_range<T>(u);
            if (above || std::cmp_less(u, lo)) return out_of_range(where, range, above, v);
            out = static_cast<T>(u);
            return true;
        }
        int64_t s = v.template get<int64_t>();
        bool above = std::cmp_greater(s, hi);
        if (above || std::cmp_less(s, lo) || !std::in_range<T>(s))
            return out_of_range(where, range, above, v);
        out = static_cast<T>(s);
        return true;
    }
    bool number_value(const Json& v, FieldProblem where, double& out, double lo, double hi) {
        if (!v.is_number()) return wrong(std::move(where), JsonType::Number, v);
        double d = v.template get<double>();
        if (!(std::isfinite(d) && d >= lo && d <= hi))
            return out_of_range(where, "[" + bound(lo) + ", " + bound(hi) + "]", d > hi, v);
        out = d;
        return true;
    }
    static std::string bound(double d) {
        return std::isfinite(d) ? nlohmann::json(d).dump() : d < 0 ? "-inf" : "inf";
    }

    const Json& j_;
    std::string path_;
    FieldReporter report_;
    bool not_object_reported_ = false;
};

/// The reader over nlohmann::json.
using JsonFields = BasicJsonFields<nlohmann::json>;

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
