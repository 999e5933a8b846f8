// HostArray: storage, typed element access and seeded random filling.
#include "tessel/HostArray.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "support/SplitMix.h"
#include "tessel/Error.h"
#include "tessel/ir/ExprEval.h"

namespace tessel {

namespace {

using internal::SplitMix64;

/// IEEE half bits of a value already representable as float16.
uint16_t half_bits(double v) {
    uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    double a = std::fabs(v);
    if (std::isnan(v)) return 0x7e00;
    if (std::isinf(v)) return sign | 0x7c00;
    if (a == 0) return sign;
    int e;
    double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    int exp = e - 1;               // a = (2m) * 2^exp
    if (exp < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal
    uint16_t mant = static_cast<uint16_t>(std::ldexp(2 * m - 1, 10));
    return sign | static_cast<uint16_t>((exp + 15) << 10) | mant;
}

double half_value(uint16_t h) {
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    int exp = (h >> 10) & 0x1f;
    int mant = h & 0x3ff;
    if (exp == 0x1f) return mant ? NAN : sign * INFINITY;
    if (exp == 0) return sign * std::ldexp(mant, -24);
    return sign * std::ldexp(1024 + mant, exp - 25);
}

template <typename T>
T load_as(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <typename T>
void store_as(uint8_t* p, T v) {
    std::memcpy(p, &v, sizeof(T));
}

}  // namespace

std::string format_index(const std::vector<int64_t>& index) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < index.size(); ++i) os << (i ? ", " : "") << index[i];
    os << "]";
    return os.str();
}

HostArray::HostArray(Type dtype, std::vector<int64_t> shape, ArrayStorage storage)
    : dtype_(dtype), shape_(std::move(shape)), storage_(storage) {
    if (dtype.is_vector() || dtype.is_handle())
        TESSEL_THROW(RuntimeError) << "HostArray: dtype " << dtype << " is not a scalar data type";
    size_ = 1;
    for (int64_t e : shape_) {
        if (e < 0)
            TESSEL_THROW(RuntimeError)
                << "HostArray: negative extent in shape " << format_index(shape_);
        size_ *= e;
    }
    bytes_.assign(static_cast<size_t>(size_) * element_bytes(), 0x5a);
    if (dtype.is_float())
        for (int64_t i = 0; i < size_; ++i) set(i, NAN);
}

int HostArray::element_bytes() const {
    return holds_doubles() ? 8 : dtype_.bytes();
}

HostArray HostArray::random(Type dtype, std::vector<int64_t> shape, uint64_t seed, double lo,
                            double hi) {
    HostArray a(dtype, std::move(shape));
    SplitMix64 rng{seed * 0x2545f4914f6cdd1dull + 1};
    if (dtype.is_float()) {
        for (int64_t i = 0; i < a.size_; ++i) a.set(i, lo + (hi - lo) * rng.unit());
        return a;
    }
    double tlo = static_cast<double>(dtype.min_int()), thi = static_cast<double>(dtype.max_int());
    int64_t ilo = static_cast<int64_t>(std::ceil(std::max(lo, tlo)));
    int64_t ihi = static_cast<int64_t>(std::floor(std::min(hi, thi)));
    if (ihi < ilo)
        TESSEL_THROW(RuntimeError)
            << "HostArray::random: no " << dtype << " value in [" << lo << ", " << hi << "]";
    uint64_t span = static_cast<uint64_t>(ihi - ilo) + 1;
    for (int64_t i = 0; i < a.size_; ++i)
        a.set_int(i, ilo + static_cast<int64_t>(span == 0 ? rng.next() : rng.next() % span));
    return a;
}

HostArray HostArray::random(Type dtype, std::vector<int64_t> shape, uint64_t seed) {
    if (dtype.is_float()) return random(dtype, std::move(shape), seed, -1.0, 1.0);
    if (dtype.is_bool()) return random(dtype, std::move(shape), seed, 0.0, 1.0);
    return random(dtype, std::move(shape), seed, dtype.is_uint() ? 0.0 : -10.0, 10.0);
}

HostArray HostArray::full(Type dtype, std::vector<int64_t> shape, double value) {
    HostArray a(dtype, std::move(shape));
    for (int64_t i = 0; i < a.size_; ++i) a.set(i, value);
    return a;
}

HostArray HostArray::from_values(Type dtype, std::vector<int64_t> shape,
                                 const std::vector<double>& values, ArrayStorage storage) {
    HostArray a(dtype, std::move(shape), storage);
    if (static_cast<int64_t>(values.size()) != a.size_)
        TESSEL_THROW(RuntimeError) << "HostArray::from_values: " << values.size()
                                   << " values for shape " << format_index(a.shape_);
    for (int64_t i = 0; i < a.size_; ++i) a.set(i, values[i]);
    return a;
}

double HostArray::get(int64_t flat) const {
    TESSEL_CHECK(flat >= 0 && flat < size_) << "HostArray::get(" << flat << ") of " << size_;
    const uint8_t* p = bytes_.data() + flat * element_bytes();
    if (holds_doubles()) return load_as<double>(p);
    switch (dtype_.code) {
        case TypeCode::Float:
            if (dtype_.bits == 16) return half_value(load_as<uint16_t>(p));
            if (dtype_.bits == 32) return load_as<float>(p);
            return load_as<double>(p);
        case TypeCode::BFloat: {
            uint32_t bits = static_cast<uint32_t>(load_as<uint16_t>(p)) << 16;
            return load_as<float>(reinterpret_cast<const uint8_t*>(&bits));
        }
        case TypeCode::UInt: return static_cast<double>(static_cast<uint64_t>(get_int(flat)));
        default: return static_cast<double>(get_int(flat));
    }
}

int64_t HostArray::get_int(int64_t flat) const {
    TESSEL_CHECK(flat >= 0 && flat < size_) << "HostArray::get_int(" << flat << ") of " << size_;
    if (dtype_.is_float())
        return eval_cast_lane(Int(64), Float(64), Scalar{.f = get(flat)}, FloatMode::Ideal).i;
    const uint8_t* p = bytes_.data() + flat * element_bytes();
    const bool s = dtype_.is_int();
    switch (dtype_.bits) {
        case 1: return load_as<uint8_t>(p) != 0;
        // (Each branch converts on its own: `s ? int32 : uint32` would be a uint32.)
        case 8: return s ? int64_t{load_as<int8_t>(p)} : int64_t{load_as<uint8_t>(p)};
        case 16: return s ? int64_t{load_as<int16_t>(p)} : int64_t{load_as<uint16_t>(p)};
        case 32: return s ? int64_t{load_as<int32_t>(p)} : int64_t{load_as<uint32_t>(p)};
        default: return load_as<int64_t>(p);
    }
}

void HostArray::set(int64_t flat, double value) {
    TESSEL_CHECK(flat >= 0 && flat < size_) << "HostArray::set(" << flat << ") of " << size_;
    uint8_t* p = bytes_.data() + flat * element_bytes();
    if (holds_doubles()) return store_as<double>(p, value);
    if (!dtype_.is_float())
        return set_int(flat,
                       eval_cast_lane(dtype_, Float(64), Scalar{.f = value}, FloatMode::Ideal).i);
    double r = round_to_float_type(value, dtype_);
    if (dtype_.is_bfloat()) {
        float f = static_cast<float>(r);
        return store_as<uint16_t>(
            p, static_cast<uint16_t>(load_as<uint32_t>(reinterpret_cast<uint8_t*>(&f)) >> 16));
    }
    if (dtype_.bits == 16) return store_as<uint16_t>(p, half_bits(r));
    if (dtype_.bits == 32) return store_as<float>(p, static_cast<float>(r));
    store_as<double>(p, r);
}

void HostArray::set_int(int64_t flat, int64_t value) {
    TESSEL_CHECK(flat >= 0 && flat < size_) << "HostArray::set_int(" << flat << ") of " << size_;
    if (dtype_.is_float()) return set(flat, static_cast<double>(value));
    uint8_t* p = bytes_.data() + flat * element_bytes();
    int64_t w = wrap_to_int_type(value, dtype_);
    switch (dtype_.bits) {
        case 1:
        case 8: return store_as<uint8_t>(p, static_cast<uint8_t>(w));
        case 16: return store_as<uint16_t>(p, static_cast<uint16_t>(w));
        case 32: return store_as<uint32_t>(p, static_cast<uint32_t>(w));
        default: return store_as<int64_t>(p, w);
    }
}

int64_t HostArray::offset_of(const std::vector<int64_t>& index, const std::string& what) const {
    bool ok = index.size() == shape_.size();
    int64_t flat = 0;
    for (size_t d = 0; ok && d < index.size(); ++d) {
        ok = index[d] >= 0 && index[d] < shape_[d];
        flat = flat * shape_[d] + index[d];
    }
    if (!ok)
        TESSEL_THROW(RuntimeError)
            << "out-of-bounds access to " << what << ": index " << format_index(index)
            << " outside shape " << format_index(shape_);
    return flat;
}

std::vector<int64_t> HostArray::index_of(int64_t flat) const {
    std::vector<int64_t> idx(shape_.size());
    for (size_t d = shape_.size(); d-- > 0;) {
        idx[d] = shape_[d] ? flat % shape_[d] : 0;
        flat = shape_[d] ? flat / shape_[d] : 0;
    }
    return idx;
}

HostArray HostArray::with_storage(ArrayStorage storage) const {
    HostArray out(dtype_, shape_, storage);
    for (int64_t i = 0; i < size_; ++i) {
        if (dtype_.is_float()) {
            out.set(i, get(i));
        } else {
            out.set_int(i, get_int(i));
        }
    }
    return out;
}

std::string HostArray::describe() const {
    return dtype_.str() + format_index(shape_) + (holds_doubles() ? " (held as double)" : "");
}

}  // namespace tessel
