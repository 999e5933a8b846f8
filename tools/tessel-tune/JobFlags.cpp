// `tessel-tune run`'s flags from the described options (JobFlags.h).
#include "JobFlags.h"

#include <nlohmann/json.hpp>

#include "tessel/auto_schedule/tuner/Tuner.h"

namespace tessel::tune_tool {

struct JobFlags::Adder {
    CLI::App& cmd;
    std::deque<Flag>& flags;
    const char* group;
    unsigned mask;

    CLI::Option* add(const char* name, Kind kind, const char* doc, unsigned where) {
        if ((where & mask) == 0) return nullptr;
        Flag& f = flags.emplace_back(Flag{group, name, kind, "", nullptr});
        std::string flag = "--" + f.name;
        for (char& c : flag) c = c == '_' ? '-' : c;
        std::string help = std::string(doc) + " (the job's " +
                           (f.group.empty() ? "" : f.group + ".") + f.name + ")";
        f.option = cmd.add_option(flag, f.value, help);
        return f.option;
    }
    template <typename T>
    void integer(const char* n, const T&, int64_t lo, int64_t hi, unsigned w, const char* doc) {
        if (CLI::Option* o = add(n, Kind::Integer, doc, w))
            o->check(is_integer)->check(CLI::Range(lo, hi))->type_name("INT");
    }
    static std::string is_integer(const std::string& s) {
        size_t end = 0;
        try {
            std::stoll(s, &end);
        } catch (const std::exception&) {
            end = 0;
        }
        return end == s.size() && !s.empty() ? "" : "not an integer: " + s;
    }
    void number(const char* n, const double&, double lo, double hi, unsigned w, const char* doc) {
        if (CLI::Option* o = add(n, Kind::Number, doc, w))
            o->check(CLI::Range(lo, hi))->type_name("NUMBER");
    }
    void flag(const char* n, const bool&, unsigned w, const char* doc) {
        if (CLI::Option* o = add(n, Kind::Flag, doc, w))
            o->check(CLI::IsMember({"true", "false"}))->type_name("true|false");
    }
    void text(const char* n, const std::string&, unsigned w, const char* doc) {
        if (CLI::Option* o = add(n, Kind::Text, doc, w)) o->type_name("TEXT");
    }
};

void JobFlags::add_to(CLI::App& cmd) {
    const TuningOptions tuning;
    Adder top{cmd, flags_, "", kJobTop}, search{cmd, flags_, "search", kJobSearch};
    Adder measure{cmd, flags_, "measure", kJobMeasure};
    TuningOptions::fields(tuning, top);
    TuningOptions::fields(tuning, search);
    MeasureOptions::fields(tuning.measure, measure);
}

std::string JobFlags::overrides_json() const {
    nlohmann::json out = nlohmann::json::object();
    for (const Flag& f : flags_) {
        if (f.option == nullptr || f.option->count() == 0) continue;
        nlohmann::json value;
        switch (f.kind) {
            case Kind::Integer: value = std::stoll(f.value); break;
            case Kind::Number: value = std::stod(f.value); break;
            case Kind::Flag: value = f.value == "true"; break;
            case Kind::Text: value = f.value; break;
        }
        (f.group.empty() ? out : out[f.group])[f.name] = value;
    }
    return out.dump();
}

}  // namespace tessel::tune_tool
