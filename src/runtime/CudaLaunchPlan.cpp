// Launch plans: evaluation of launch expressions and the payload's byte format.
#include "tessel/runtime/CudaLaunchPlan.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <nlohmann/json.hpp>

#include "runtime/cuda/TensorMaps.h"
#include "tessel/Error.h"

namespace tessel {

using json = nlohmann::json;
using Op = LaunchExpr::Op;

LaunchExpr LaunchExpr::constant(int64_t v) {
    return LaunchExpr{{{Op::Const, v}}};
}

LaunchExpr LaunchExpr::shape_var(int index) {
    return LaunchExpr{{{Op::ShapeVar, index}}};
}

bool LaunchExpr::is_constant() const {
    return std::none_of(terms.begin(), terms.end(),
                        [](const Term& t) { return t.op == Op::ShapeVar; });
}

namespace {

int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t apply(Op op, int64_t a, int64_t b) {
    switch (op) {
        case Op::Add: return a + b;
        case Op::Sub: return a - b;
        case Op::Mul: return a * b;
        case Op::FloorDiv: return floor_div(a, b);
        case Op::FloorMod: return b == 0 ? 0 : a - floor_div(a, b) * b;
        case Op::Min: return std::min(a, b);
        case Op::Max: return std::max(a, b);
        default: break;
    }
    TESSEL_THROW(RuntimeError) << "launch expression: operator is not binary";
}

const char* op_text(Op op) {
    switch (op) {
        case Op::Add: return " + ";
        case Op::Sub: return " - ";
        case Op::Mul: return " * ";
        case Op::FloorDiv: return " // ";
        case Op::FloorMod: return " % ";
        case Op::Min: return "min";
        case Op::Max: return "max";
        default: return "?";
    }
}

}  // namespace

int64_t LaunchExpr::eval(const int64_t* shape_vars) const {
    std::vector<int64_t> stack;
    for (const Term& t : terms) {
        if (t.op == Op::Const) {
            stack.push_back(t.value);
        } else if (t.op == Op::ShapeVar) {
            if (!shape_vars) TESSEL_THROW(RuntimeError) << "launch expression needs shape values";
            stack.push_back(shape_vars[t.value]);
        } else {
            if (stack.size() < 2) TESSEL_THROW(RuntimeError) << "malformed launch expression";
            int64_t b = stack.back();
            stack.pop_back();
            stack.back() = apply(t.op, stack.back(), b);
        }
    }
    if (stack.size() > 1) TESSEL_THROW(RuntimeError) << "malformed launch expression";
    return stack.empty() ? 0 : stack.back();
}

std::string LaunchExpr::str(const std::vector<std::string>& names) const {
    std::vector<std::string> stack;
    for (const Term& t : terms) {
        if (t.op == Op::Const) {
            stack.push_back(std::to_string(t.value));
        } else if (t.op == Op::ShapeVar) {
            size_t i = static_cast<size_t>(t.value);
            stack.push_back(i < names.size() ? names[i] : "$" + std::to_string(t.value));
        } else if (stack.size() >= 2) {
            std::string b = stack.back();
            stack.pop_back();
            std::string& a = stack.back();
            bool call = t.op == Op::Min || t.op == Op::Max;
            a = call ? std::string(op_text(t.op)) + "(" + a + ", " + b + ")"
                     : "(" + a + op_text(t.op) + b + ")";
        }
    }
    return stack.empty() ? "0" : stack.back();
}

namespace {

json expr_to_json(const LaunchExpr& e) {
    json terms = json::array();
    for (const auto& t : e.terms) terms.push_back({static_cast<int>(t.op), t.value});
    return terms;
}

LaunchExpr expr_from_json(const json& j) {
    LaunchExpr e;
    for (const json& t : j) {
        int op = t.at(0).get<int>();
        if (op < 0 || op > static_cast<int>(Op::Max))
            TESSEL_THROW(RuntimeError) << "CUDA payload: unknown launch expression operator " << op;
        e.terms.push_back({static_cast<Op>(op), t.at(1).get<int64_t>()});
    }
    return e;
}

json exprs_to_json(const std::vector<LaunchExpr>& exprs) {
    json out = json::array();
    for (const LaunchExpr& e : exprs) out.push_back(expr_to_json(e));
    return out;
}

std::vector<LaunchExpr> exprs_from_json(const json& j) {
    std::vector<LaunchExpr> out;
    for (const json& e : j) out.push_back(expr_from_json(e));
    return out;
}

json tensor_map_to_json(const CudaTensorMap& m) {
    return {{"buffer", m.buffer},
            {"dtype", m.dtype},
            {"dims", exprs_to_json(m.dims)},
            {"strides", exprs_to_json(m.strides)},
            {"box", m.box},
            {"swizzle_bytes", m.swizzle_bytes}};
}

// Refuses a map that is not what CudaTensorMap describes (runtime/cuda/TensorMaps.h says what).
CudaTensorMap tensor_map_from_json(const json& j, const std::string& function, size_t index) {
    CudaTensorMap m;
    m.buffer = j.at("buffer").get<int>();
    m.dtype = j.at("dtype").get<std::string>();
    m.dims = exprs_from_json(j.at("dims"));
    m.strides = exprs_from_json(j.at("strides"));
    m.box = j.at("box").get<std::vector<int64_t>>();
    m.swizzle_bytes = j.at("swizzle_bytes").get<int>();
    std::string problem = internal::cuda::tensor_map_layout_problem(m);
    if (problem.empty() && m.buffer < 0)
        problem = "negative buffer index " + std::to_string(m.buffer);
    if (!problem.empty()) {
        TESSEL_THROW(RuntimeError) << "CUDA payload: launch of '" << function << "', tensor map "
                                   << index << ": " << problem;
    }
    return m;
}

// The parameter kinds' names in the payload, in CudaParam::Kind order.
constexpr const char* kParamKinds[] = {"buffer", "shape_var", "tensor_map"};
static_assert(std::size(kParamKinds) == size_t(CudaParam::Kind::TensorMap) + 1);

CudaParam param_from_json(const json& p, const CudaLaunch& l) {
    std::string kind = p.at(0).get<std::string>();
    int index = p.at(1).get<int>();
    for (size_t k = 0; k < std::size(kParamKinds); ++k) {
        if (kind != kParamKinds[k]) continue;
        CudaParam param{static_cast<CudaParam::Kind>(k), index};
        bool map = param.kind == CudaParam::Kind::TensorMap;
        if (map && (index < 0 || static_cast<size_t>(index) >= l.tensor_maps.size())) {
            TESSEL_THROW(RuntimeError)
                << "CUDA payload: launch of '" << l.function << "': tensor map parameter " << index
                << " out of range (the launch has " << l.tensor_maps.size() << " tensor maps)";
        }
        return param;
    }
    TESSEL_THROW(RuntimeError) << "CUDA payload: unknown parameter kind '" << kind << "'";
}

json launch_to_json(const CudaLaunch& l) {
    json grid = json::array(), block = json::array(), params = json::array();
    for (int d = 0; d < 3; ++d) {
        grid.push_back(expr_to_json(l.grid[d]));
        block.push_back(expr_to_json(l.block[d]));
    }
    for (const auto& p : l.params) params.push_back({kParamKinds[int(p.kind)], p.index});
    json maps = json::array();
    for (const CudaTensorMap& m : l.tensor_maps) maps.push_back(tensor_map_to_json(m));
    const CudaResources& r = l.resources;
    return {{"function", l.function},
            {"stage", l.stage},
            {"grid", grid},
            {"block", block},
            {"dynamic_shared_bytes", expr_to_json(l.dynamic_shared_bytes)},
            {"params", params},
            {"tensor_maps", maps},
            {"resources",
             {r.registers, r.spill_store_bytes, r.spill_load_bytes, r.stack_bytes,
              r.static_shared_bytes}},
            {"dependent", l.dependent}};
}

CudaLaunch launch_from_json(const json& j) {
    CudaLaunch l;
    l.function = j.at("function").get<std::string>();
    l.stage = j.at("stage").get<std::string>();
    for (int d = 0; d < 3; ++d) {
        l.grid[d] = expr_from_json(j.at("grid").at(d));
        l.block[d] = expr_from_json(j.at("block").at(d));
    }
    l.dynamic_shared_bytes = expr_from_json(j.at("dynamic_shared_bytes"));
    if (j.contains("tensor_maps")) {  // absent from payloads written before tensor maps
        for (const json& m : j.at("tensor_maps"))
            l.tensor_maps.push_back(tensor_map_from_json(m, l.function, l.tensor_maps.size()));
    }
    for (const json& p : j.at("params")) l.params.push_back(param_from_json(p, l));
    const json& r = j.at("resources");
    l.resources = {r.at(0).get<int>(), r.at(1).get<int64_t>(), r.at(2).get<int64_t>(),
                   r.at(3).get<int64_t>(), r.at(4).get<int64_t>()};
    l.dependent = j.value("dependent", false);  // absent from payloads written before it
    return l;
}

constexpr char kMagic[8] = {'T', 'S', 'L', 'C', 'U', 'D', 'A', '1'};

}  // namespace

std::vector<uint8_t> encode_cuda_payload(const CudaPayload& payload) {
    json plans = json::object();
    for (const auto& [name, plan] : payload.plans) {
        json ws = json::array(), launches = json::array();
        for (const auto& w : plan.workspaces) {
            json entry = {w.name, expr_to_json(w.bytes)};
            if (w.zeroed) entry.push_back(true);  // (absent: payloads written before it)
            ws.push_back(entry);
        }
        for (const auto& l : plan.launches) launches.push_back(launch_to_json(l));
        plans[name] = {{"workspaces", ws}, {"launches", launches}};
    }
    std::string text = json{{"arch", payload.arch}, {"plans", plans}}.dump();
    std::vector<uint8_t> out(kMagic, kMagic + 8);
    uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
    out.insert(out.end(), text.begin(), text.end());
    out.insert(out.end(), payload.cubin.begin(), payload.cubin.end());
    return out;
}

CudaPayload decode_cuda_payload(const std::vector<uint8_t>& bytes) {
    if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, 8) != 0)
        TESSEL_THROW(RuntimeError) << "CUDA payload: bad magic (not a tessel CUDA module payload)";
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(bytes[8 + i]) << (8 * i);
    if (n > bytes.size() - 16) TESSEL_THROW(RuntimeError) << "CUDA payload: truncated plan";
    CudaPayload p;
    try {
        json j = json::parse(bytes.begin() + 16, bytes.begin() + 16 + static_cast<int64_t>(n));
        p.arch = j.at("arch").get<std::string>();
        for (const auto& [name, pj] : j.at("plans").items()) {
            CudaLaunchPlan plan;
            for (const json& w : pj.at("workspaces"))
                plan.workspaces.push_back({w.at(0).get<std::string>(), expr_from_json(w.at(1)),
                                           w.size() > 2 && w.at(2).get<bool>()});
            for (const json& l : pj.at("launches")) plan.launches.push_back(launch_from_json(l));
            p.plans[name] = std::move(plan);
        }
    } catch (const json::exception& e) {
        TESSEL_THROW(RuntimeError) << "CUDA payload: corrupt plan: " << e.what();
    }
    p.cubin.assign(bytes.begin() + 16 + static_cast<int64_t>(n), bytes.end());
    if (p.cubin.empty()) TESSEL_THROW(RuntimeError) << "CUDA payload: no cubin";
    return p;
}

}  // namespace tessel
