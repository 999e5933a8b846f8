// Launch plans: evaluation of launch expressions and the payload's byte format.
#include "tessel/runtime/CudaLaunchPlan.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

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

json launch_to_json(const CudaLaunch& l) {
    json grid = json::array(), block = json::array(), params = json::array();
    for (int d = 0; d < 3; ++d) {
        grid.push_back(expr_to_json(l.grid[d]));
        block.push_back(expr_to_json(l.block[d]));
    }
    for (const auto& p : l.params)
        params.push_back({p.kind == CudaParam::Kind::Buffer ? "buffer" : "shape_var", p.index});
    const CudaResources& r = l.resources;
    return {{"function", l.function},
            {"stage", l.stage},
            {"grid", grid},
            {"block", block},
            {"dynamic_shared_bytes", expr_to_json(l.dynamic_shared_bytes)},
            {"params", params},
            {"resources",
             {r.registers, r.spill_store_bytes, r.spill_load_bytes, r.stack_bytes,
              r.static_shared_bytes}}};
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
    for (const json& p : j.at("params")) {
        std::string kind = p.at(0).get<std::string>();
        if (kind != "buffer" && kind != "shape_var")
            TESSEL_THROW(RuntimeError) << "CUDA payload: unknown parameter kind '" << kind << "'";
        l.params.push_back({kind == "buffer" ? CudaParam::Kind::Buffer : CudaParam::Kind::ShapeVar,
                            p.at(1).get<int>()});
    }
    const json& r = j.at("resources");
    l.resources = {r.at(0).get<int>(), r.at(1).get<int64_t>(), r.at(2).get<int64_t>(),
                   r.at(3).get<int64_t>(), r.at(4).get<int64_t>()};
    return l;
}

constexpr char kMagic[8] = {'T', 'S', 'L', 'C', 'U', 'D', 'A', '1'};

}  // namespace

std::vector<uint8_t> encode_cuda_payload(const CudaPayload& payload) {
    json plans = json::object();
    for (const auto& [name, plan] : payload.plans) {
        json ws = json::array(), launches = json::array();
        for (const auto& w : plan.workspaces) ws.push_back({w.name, expr_to_json(w.bytes)});
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
                plan.workspaces.push_back({w.at(0).get<std::string>(), expr_from_json(w.at(1))});
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
