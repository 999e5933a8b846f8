// Module::save and Module::load: the byte format described in Module.h.
#include <cstring>
#include <nlohmann/json.hpp>

#include "tessel/Error.h"
#include "tessel/runtime/Module.h"

namespace tessel {
namespace internal {
namespace {

using json = nlohmann::json;
constexpr char kMagic[8] = {'T', 'S', 'L', 'M', 'O', 'D', 'U', 'L'};

const char* access_name(ArgAccess a) {
    switch (a) {
        case ArgAccess::Read: return "read";
        case ArgAccess::Write: return "write";
        case ArgAccess::ReadWrite: return "readwrite";
    }
    return "read";
}

ArgAccess parse_access(const std::string& s) {
    if (s == "read") return ArgAccess::Read;
    if (s == "write") return ArgAccess::Write;
    if (s == "readwrite") return ArgAccess::ReadWrite;
    TESSEL_THROW(RuntimeError) << "Module::load: unknown argument access '" << s << "'";
}

json arg_to_json(const ArgSpec& a) {
    json shape = json::array();
    for (const Dim& d : a.shape) shape.push_back(d.is_symbolic() ? json(d.name) : json(d.value));
    return {{"name", a.name},
            {"dtype", {a.dtype.to_dlpack().code, a.dtype.bits, a.dtype.lanes}},
            {"shape", shape},
            {"access", access_name(a.access)},
            {"in_place", a.in_place},
            {"alignment", a.alignment}};
}

ArgSpec arg_from_json(const json& j) {
    ArgSpec a;
    a.name = j.at("name").get<std::string>();
    const json& t = j.at("dtype");
    a.dtype = DataType::from_dlpack(
        {t.at(0).get<uint8_t>(), t.at(1).get<uint8_t>(), t.at(2).get<uint16_t>()});
    for (const json& d : j.at("shape")) {
        if (d.is_string())
            a.shape.emplace_back(d.get<std::string>());
        else
            a.shape.emplace_back(d.get<int64_t>());
    }
    a.access = parse_access(j.at("access").get<std::string>());
    a.in_place = j.at("in_place").get<bool>();
    a.alignment = j.at("alignment").get<int64_t>();
    return a;
}

json header_to_json(const Module& m, bool with_sources) {
    json kernels = json::array();
    for (const KernelSignature& k : m.signatures()) {
        json args = json::array();
        for (const ArgSpec& a : k.args) args.push_back(arg_to_json(a));
        kernels.push_back(
            {{"name", k.name}, {"device_type", static_cast<int>(k.device_type)}, {"args", args}});
    }
    json sources = with_sources ? json(m.sources()) : json::object();
    return {{"kernels", kernels}, {"payload_format", m.payload_format()}, {"sources", sources}};
}

KernelSignature kernel_from_json(const json& j) {
    KernelSignature k;
    k.name = j.at("name").get<std::string>();
    int device = j.at("device_type").get<int>();
    if (device != static_cast<int>(DeviceType::CPU) &&
        device != static_cast<int>(DeviceType::CUDA)) {
        TESSEL_THROW(RuntimeError) << "Module::load: unknown device type " << device;
    }
    k.device_type = static_cast<DeviceType>(device);
    for (const json& a : j.at("args")) k.args.push_back(arg_from_json(a));
    return k;
}

void put_u64(std::vector<uint8_t>& out, uint64_t v, int bytes = 8) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

/// Reads the byte string front to back; every read checks the remaining length.
struct Reader {
    const std::vector<uint8_t>& bytes;
    size_t pos = 0;

    uint64_t u64(int n = 8) {
        need(static_cast<uint64_t>(n));
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v |= uint64_t(bytes[pos + i]) << (8 * i);
        pos += n;
        return v;
    }
    void need(uint64_t n) const {
        if (n > bytes.size() - pos) {
            TESSEL_THROW(RuntimeError)
                << "Module::load: truncated module bytes (" << bytes.size() << " bytes, needed "
                << n << " more at offset " << pos << ")";
        }
    }
};

}  // namespace
}  // namespace internal

std::vector<uint8_t> Module::save(bool with_sources) const {
    std::string header = internal::header_to_json(*this, with_sources).dump();
    std::vector<uint8_t> out(internal::kMagic, internal::kMagic + 8);
    internal::put_u64(out, kFormatVersion, 4);
    internal::put_u64(out, header.size());
    out.insert(out.end(), header.begin(), header.end());
    internal::put_u64(out, payload().size());
    out.insert(out.end(), payload().begin(), payload().end());
    return out;
}

Module Module::load(const std::vector<uint8_t>& bytes) {
    internal::Reader r{bytes};
    r.need(8);
    if (std::memcmp(bytes.data(), internal::kMagic, 8) != 0) {
        TESSEL_THROW(RuntimeError) << "Module::load: not a tessel module (bad magic bytes)";
    }
    r.pos = 8;
    uint64_t version = r.u64(4);
    if (version != kFormatVersion) {
        TESSEL_THROW(RuntimeError)
            << "Module::load: format version " << version << " is not supported (this build reads "
            << kFormatVersion << ")";
    }
    uint64_t header_size = r.u64();
    r.need(header_size);
    std::string header(bytes.begin() + r.pos, bytes.begin() + r.pos + header_size);
    r.pos += header_size;
    uint64_t payload_size = r.u64();
    r.need(payload_size);
    std::vector<uint8_t> payload(bytes.begin() + r.pos, bytes.begin() + r.pos + payload_size);
    r.pos += payload_size;
    if (r.pos != bytes.size()) {
        TESSEL_THROW(RuntimeError)
            << "Module::load: " << bytes.size() - r.pos << " unexpected bytes after the payload";
    }
    std::vector<KernelSignature> kernels;
    std::string format;
    std::map<std::string, std::string> sources;
    try {
        internal::json j = internal::json::parse(header);
        for (const auto& k : j.at("kernels")) kernels.push_back(internal::kernel_from_json(k));
        format = j.at("payload_format").get<std::string>();
        sources = j.at("sources").get<std::map<std::string, std::string>>();
    } catch (const internal::json::exception& e) {
        TESSEL_THROW(RuntimeError) << "Module::load: corrupt module header: " << e.what();
    }
    return Module(std::move(kernels), std::move(format), std::move(payload), std::move(sources));
}

}  // namespace tessel
