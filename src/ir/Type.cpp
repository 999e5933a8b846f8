#include "tessel/ir/Type.h"

#include <limits>

#include "tessel/Error.h"

namespace tessel {

int64_t Type::max_int() const {
    if (is_bool()) return 1;
    TESSEL_CHECK(is_int_or_uint()) << "max_int of " << str();
    if (is_int())
        return bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
    return bits >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << bits) - 1;
}

int64_t Type::min_int() const {
    if (is_bool() || is_uint()) return 0;
    TESSEL_CHECK(is_int()) << "min_int of " << str();
    return bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
}

double Type::epsilon() const {
    if (code == TypeCode::BFloat) return 1.0 / 128.0;  // 7 stored mantissa bits
    if (code != TypeCode::Float) return 0.0;
    switch (bits) {
        case 16: return 1.0 / 1024.0;
        case 32: return std::numeric_limits<float>::epsilon();
        default: return std::numeric_limits<double>::epsilon();
    }
}

std::string Type::str() const {
    std::string s;
    switch (code) {
        case TypeCode::Int: s = "int" + std::to_string(bits); break;
        case TypeCode::UInt: s = "uint" + std::to_string(bits); break;
        case TypeCode::Float: s = "float" + std::to_string(bits); break;
        case TypeCode::BFloat: s = "bfloat" + std::to_string(bits); break;
        case TypeCode::Bool: s = "bool"; break;
        case TypeCode::Handle: s = "handle"; break;
    }
    if (lanes > 1) s += "x" + std::to_string(lanes);
    return s;
}

Type Type::parse(const std::string& name) {
    std::string base = name;
    int lanes = 1;
    auto x = name.find('x');
    if (x != std::string::npos) {
        base = name.substr(0, x);
        std::string digits = name.substr(x + 1);
        // std::stoi alone would accept "4x", " 4" or "+4".
        if (digits.empty() || digits.size() > 5 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
            TESSEL_THROW(DSLError) << "unknown dtype '" << name << "'";
        lanes = std::stoi(digits);
        if (lanes < 1 || lanes > 65535)
            TESSEL_THROW(DSLError) << "bad lane count in dtype '" << name << "'";
    }
    if (base == "bool") return Bool(lanes);
    if (base == "handle" && lanes == 1) return Handle();
    struct Prefix {
        const char* text;
        TypeCode code;
    };
    for (Prefix p : {Prefix{"uint", TypeCode::UInt}, Prefix{"int", TypeCode::Int},
                     Prefix{"bfloat", TypeCode::BFloat}, Prefix{"float", TypeCode::Float}}) {
        std::string pre = p.text;
        if (base.rfind(pre, 0) != 0) continue;
        std::string digits = base.substr(pre.size());
        int bits = (digits == "8")    ? 8
                   : (digits == "16") ? 16
                   : (digits == "32") ? 32
                   : (digits == "64") ? 64
                                      : 0;
        bool ok = bits != 0;
        if (p.code == TypeCode::Float) ok = ok && bits >= 16;
        if (p.code == TypeCode::BFloat) ok = bits == 16;
        if (!ok) break;
        return Type(p.code, bits, lanes);
    }
    TESSEL_THROW(DSLError)
        << "unknown dtype '" << name
        << "' (expected bool, int8..int64, uint8..uint64, float16/32/64, bfloat16, "
           "optionally with 'xN' lanes)";
}

std::ostream& operator<<(std::ostream& os, const Type& t) {
    return os << t.str();
}

}  // namespace tessel
