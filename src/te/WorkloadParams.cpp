// Workload parameters: kinds, printing and JSON (te/Workload.h).
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tessel/te/Workload.h"

namespace tessel {

namespace {

using json = nlohmann::ordered_json;

json param_to_json(const WorkloadParam& value) {
    switch (param_kind(value)) {
        case ParamKind::Int: return std::get<int64_t>(value);
        case ParamKind::Float: {
            double d = std::get<double>(value);
            if (std::isfinite(d)) return d;
            return json{{"float", std::isnan(d) ? "nan" : (d > 0 ? "inf" : "-inf")}};
        }
        case ParamKind::String: return std::get<std::string>(value);
        case ParamKind::DType: return json{{"dtype", std::get<Type>(value).str()}};
        default: return std::get<std::vector<int64_t>>(value);
    }
}

int64_t json_int(const json& j, size_t i) {
    if (!j.is_number_integer() ||
        (j.is_number_unsigned() &&
         j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
        TESSEL_THROW(DSLError) << "workload parameter " << i << ": " << j.dump()
                               << " is not a 64-bit integer";
    return j.get<int64_t>();
}

WorkloadParam param_from_json(const json& j, size_t i) {
    if (j.is_number_integer()) return json_int(j, i);
    if (j.is_number_float()) return j.get<double>();
    if (j.is_string()) return j.get<std::string>();
    if (j.is_array()) {
        std::vector<int64_t> list;
        for (const json& e : j) list.push_back(json_int(e, i));
        return list;
    }
    if (j.is_object() && j.size() == 1 && j.contains("dtype") && j["dtype"].is_string())
        return Type::parse(j["dtype"].get<std::string>());
    if (j.is_object() && j.size() == 1 && j.contains("float") && j["float"].is_string()) {
        std::string s = j["float"].get<std::string>();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf" || s == "-inf")
            return (s[0] == '-' ? -1 : 1) * std::numeric_limits<double>::infinity();
    }
    TESSEL_THROW(DSLError) << "workload parameter " << i << ": " << j.dump()
                           << " is no int, float, string, {\"dtype\": ...} or int list";
}

json params_array(const std::string& text, const char* who) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        TESSEL_THROW(DSLError) << who << ": malformed JSON: " << e.what();
    }
    if (!j.is_array()) TESSEL_THROW(DSLError) << who << ": expected a JSON array, got " << text;
    return j;
}

}  // namespace

const char* param_kind_name(ParamKind kind) {
    switch (kind) {
        case ParamKind::Int: return "int";
        case ParamKind::Float: return "float";
        case ParamKind::String: return "string";
        case ParamKind::DType: return "dtype";
        case ParamKind::IntList: return "int list";
        case ParamKind::Any: return "any";
    }
    return "?";
}

ParamKind param_kind(const WorkloadParam& value) {
    static const ParamKind kinds[] = {ParamKind::Int, ParamKind::Float, ParamKind::String,
                                      ParamKind::DType, ParamKind::IntList};
    return kinds[value.index()];
}

std::string param_to_string(const WorkloadParam& value) {
    if (const Type* t = std::get_if<Type>(&value)) return t->str();
    return param_to_json(value).dump();
}

std::string workload_params_to_json(const WorkloadParams& params) {
    json a = json::array();
    for (const WorkloadParam& p : params) a.push_back(param_to_json(p));
    return a.dump(-1, ' ', false, json::error_handler_t::replace);
}

WorkloadParams workload_params_from_json(const std::string& text) {
    json a = params_array(text, "workload_params_from_json");
    WorkloadParams params;
    for (size_t i = 0; i < a.size(); ++i) params.push_back(param_from_json(a[i], i));
    return params;
}

std::string workload_key(const std::string& name, const WorkloadParams& params) {
    json a = json::array({name});
    for (const WorkloadParam& p : params) a.push_back(param_to_json(p));
    return a.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::pair<std::string, WorkloadParams> parse_workload_key(const std::string& key) {
    json a = params_array(key, "parse_workload_key");
    if (a.empty() || !a[0].is_string())
        TESSEL_THROW(DSLError) << "parse_workload_key: expected [\"name\", parameters...], got "
                               << key;
    WorkloadParams params;
    for (size_t i = 1; i < a.size(); ++i) params.push_back(param_from_json(a[i], i - 1));
    return {a[0].get<std::string>(), params};
}

}  // namespace tessel
