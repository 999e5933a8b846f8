// Reading the expressions of a JSON DAG (te/Serialize.h documents the format).
//
// Nodes are made with their make(), after checking here what make() would otherwise report as an
// InternalError: the document is untrusted input, and a malformed one is the user's mistake,
// reported as a DSLError. Tensor reads and reductions go through the DSL (Tensor::operator(),
// Reducer), which checks them itself.
#include <cmath>
#include <limits>

#include "DagReader.h"
#include "SerializeInternal.h"
#include "tessel/te/Serialize.h"

namespace tessel::internal {

namespace {

enum class BinaryKind { Arith, Compare, Logic };
struct BinaryNode {
    BinaryKind kind;
    Expr (*make)(Expr, Expr);
};

BinaryKind binary_kind(IRNodeType t) {
    if (t == IRNodeType::And || t == IRNodeType::Or) return BinaryKind::Logic;
    if (t >= IRNodeType::EQ && t <= IRNodeType::GE) return BinaryKind::Compare;
    return BinaryKind::Arith;
}

const std::unordered_map<std::string, BinaryNode>& binary_nodes() {
#define TESSEL_BINARY_ENTRY(T) {#T, {binary_kind(IRNodeType::T), &T::make}},
    static const std::unordered_map<std::string, BinaryNode> nodes = {
        TESSEL_FOR_EACH_SERIALIZED_BINARY_NODE(TESSEL_BINARY_ENTRY)};
#undef TESSEL_BINARY_ENTRY
    return nodes;
}

// Lanes of a Ramp or Broadcast: more than one, and few enough for a Type.
int check_lanes(int64_t lanes, const char* node) {
    if (lanes < 2 || lanes > std::numeric_limits<uint16_t>::max())
        TESSEL_THROW(DSLError) << node << " of " << lanes << " lanes (2 to 65535 allowed)";
    return static_cast<int>(lanes);
}

// The argument types of a pure intrinsic, as Call::make requires them.
void check_call_args(Intrinsic op, const std::vector<Expr>& args) {
    const char* name = intrinsic_name(op);
    auto fail = [&](const std::string& why) { TESSEL_THROW(DSLError) << name << ": " << why; };
    Type t = args[0].type();
    switch (op) {
        case Intrinsic::abs:
            if (t.is_bool() || t.is_handle()) fail("argument of type " + t.str());
            break;
        case Intrinsic::isnan:
            if (!t.is_float()) fail("argument of type " + t.str() + " (float expected)");
            break;
        case Intrinsic::likely:
            if (!t.is_bool()) fail("argument of type " + t.str() + " (bool expected)");
            break;
        case Intrinsic::if_then_else:
            if (!t.is_bool()) fail("condition of type " + t.str());
            if (args[1].type() != args[2].type())
                fail("branches of types " + args[1].type().str() + " and " + args[2].type().str());
            if (t.lanes != 1 && t.lanes != args[1].type().lanes) fail("condition lanes differ");
            break;
        default:
            if (!t.is_float()) fail("argument of type " + t.str() + " (float expected)");
            for (const Expr& a : args)
                if (a.type() != t) fail("arguments of types " + t.str() + " and " + a.type().str());
    }
}

}  // namespace

const std::unordered_map<std::string, DagReader::NodeReader>& DagReader::node_readers() {
    static const std::unordered_map<std::string, NodeReader> readers = {
        {"IntImm", &DagReader::int_imm},      {"UIntImm", &DagReader::uint_imm},
        {"FloatImm", &DagReader::float_imm},  {"Variable", &DagReader::variable},
        {"Cast", &DagReader::cast},           {"Not", &DagReader::logical_not},
        {"Select", &DagReader::select},       {"Ramp", &DagReader::ramp},
        {"Broadcast", &DagReader::broadcast}, {"Let", &DagReader::let},
        {"Call", &DagReader::call},           {"TensorRead", &DagReader::tensor_read},
        {"Reduce", &DagReader::reduce},
    };
    return readers;
}

Expr DagReader::expr(const json& j) {
    if (++depth_ > kMaxJsonExprDepth)
        TESSEL_THROW(DSLError) << "expressions nested deeper than " << kMaxJsonExprDepth
                               << " levels";
    std::string name = string_field(j, "node");
    Expr e;
    if (binary_nodes().count(name)) {
        e = binary(name, j);
    } else if (auto it = node_readers().find(name); it != node_readers().end()) {
        e = (this->*(it->second))(j);
    } else {
        std::string known;
        for (const auto& [n, r] : node_readers()) known += " " + n;
        for (const auto& [n, b] : binary_nodes()) known += " " + n;
        TESSEL_THROW(DSLError) << "unknown expression node '" << name
                               << "' (a tensor expression holds only:" << known << ")";
    }
    --depth_;
    return e;
}

Expr DagReader::expr_field(const json& obj, const char* key) {
    const json& j = field(obj, key);
    At at(*this, key);
    return expr(j);
}

std::vector<Expr> DagReader::exprs(const json& obj, const char* key) {
    const json& a = array_field(obj, key);
    std::vector<Expr> out;
    for (size_t i = 0; i < a.size(); ++i) {
        At at(*this, indexed(key, i));
        out.push_back(expr(a[i]));
    }
    return out;
}

Expr DagReader::binary(const std::string& name, const json& j) {
    const BinaryNode& node = binary_nodes().at(name);
    Expr a = expr_field(j, "a"), b = expr_field(j, "b");
    Type t = a.type();
    if (t != b.type())
        TESSEL_THROW(DSLError) << name << " of mismatched types " << t << " and " << b.type();
    bool ok = node.kind == BinaryKind::Logic     ? t.is_bool()
              : node.kind == BinaryKind::Compare ? !t.is_handle()
                                                 : !t.is_bool() && !t.is_handle();
    if (!ok) TESSEL_THROW(DSLError) << name << " of operands of type " << t;
    return node.make(a, b);
}

Expr DagReader::int_imm(const json& j) {
    Type t = dtype_field(j, "dtype");
    if (!t.is_scalar() || !(t.is_int() || t.is_bool()))
        TESSEL_THROW(DSLError) << "IntImm of type " << t << " (a signed integer or bool expected)";
    int64_t v = integer_field(j, "value");
    if (v < t.min_int() || v > t.max_int())
        TESSEL_THROW(DSLError) << "IntImm " << v << " does not fit " << t;
    return IntImm::make(t, v);
}

Expr DagReader::uint_imm(const json& j) {
    Type t = dtype_field(j, "dtype");
    if (!t.is_scalar() || !t.is_uint())
        TESSEL_THROW(DSLError) << "UIntImm of type " << t << " (an unsigned integer expected)";
    const json& v = field(j, "value");
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
        TESSEL_THROW(DSLError) << "UIntImm value " << v.dump() << " is no unsigned integer";
    uint64_t u = v.get<uint64_t>();
    if (t.bits < 64 && u > (uint64_t(1) << t.bits) - 1)
        TESSEL_THROW(DSLError) << "UIntImm " << u << " does not fit " << t;
    return UIntImm::make(t, u);
}

Expr DagReader::float_imm(const json& j) {
    Type t = dtype_field(j, "dtype");
    if (!t.is_scalar() || !t.is_float())
        TESSEL_THROW(DSLError) << "FloatImm of type " << t << " (a float type expected)";
    const json& v = field(j, "value");
    if (v.is_number()) return FloatImm::make(t, v.get<double>());
    std::string s = v.is_string() ? v.get<std::string>() : "";
    if (s == "inf" || s == "-inf")
        return FloatImm::make(t, s[0] == '-' ? -std::numeric_limits<double>::infinity()
                                             : std::numeric_limits<double>::infinity());
    if (s == "nan") return FloatImm::make(t, std::numeric_limits<double>::quiet_NaN());
    TESSEL_THROW(DSLError) << "FloatImm value " << v.dump()
                           << " is neither a number nor \"inf\", \"-inf\" or \"nan\"";
}

Expr DagReader::variable(const json& j) {
    int64_t id = integer_field(j, "id");
    auto it = scope_.find(id);
    if (it == scope_.end()) TESSEL_THROW(DSLError) << "variable " << id << " is not declared here";
    return it->second;
}

Expr DagReader::cast(const json& j) {
    Type t = dtype_field(j, "dtype");
    Expr v = expr_field(j, "value");
    if (t.is_handle() || v.type().is_handle() || t.lanes != v.type().lanes)
        TESSEL_THROW(DSLError) << "Cast of " << v.type() << " to " << t;
    return Cast::make(t, v);
}

Expr DagReader::logical_not(const json& j) {
    Expr a = expr_field(j, "a");
    if (!a.type().is_bool()) TESSEL_THROW(DSLError) << "Not of type " << a.type();
    return Not::make(a);
}

Expr DagReader::select(const json& j) {
    Expr c = expr_field(j, "condition");
    Expr t = expr_field(j, "true_value"), f = expr_field(j, "false_value");
    if (!c.type().is_bool()) TESSEL_THROW(DSLError) << "Select condition of type " << c.type();
    if (t.type() != f.type())
        TESSEL_THROW(DSLError) << "Select of mismatched types " << t.type() << " and " << f.type();
    if (c.type().lanes != 1 && c.type().lanes != t.type().lanes)
        TESSEL_THROW(DSLError) << "Select condition of " << c.type().lanes << " lanes";
    return Select::make(c, t, f);
}

Expr DagReader::ramp(const json& j) {
    Expr base = expr_field(j, "base"), stride = expr_field(j, "stride");
    int lanes = check_lanes(integer_field(j, "lanes"), "Ramp");
    if (!base.type().is_scalar() || base.type() != stride.type() || !base.type().is_int_or_uint())
        TESSEL_THROW(DSLError) << "Ramp of " << base.type() << " and " << stride.type()
                               << " (one scalar integer type expected)";
    return Ramp::make(base, stride, lanes);
}

Expr DagReader::broadcast(const json& j) {
    Expr v = expr_field(j, "value");
    int lanes = check_lanes(integer_field(j, "lanes"), "Broadcast");
    if (!v.type().is_scalar()) TESSEL_THROW(DSLError) << "Broadcast of a " << v.type();
    return Broadcast::make(v, lanes);
}

Expr DagReader::let(const json& j) {
    Expr value = expr_field(j, "value");
    Var v;
    {
        At at(*this, "var");
        v = declare(field(j, "var"));
    }
    if (v.type() != value.type())
        TESSEL_THROW(DSLError) << "Let of a " << v.type() << " variable to a " << value.type();
    Expr body = expr_field(j, "body");
    unbind(integer_field(field(j, "var"), "id"));
    return Let::make(v, value, body);
}

Expr DagReader::call(const json& j) {
    std::string name = string_field(j, "op");
    Intrinsic op;
    if (!intrinsic_from_name(name, &op))
        TESSEL_THROW(DSLError) << "unknown intrinsic '" << name << "'";
    if (!intrinsic_is_pure(op))
        TESSEL_THROW(DSLError) << "intrinsic '" << name << "' cannot occur in a tensor expression";
    std::vector<Expr> args = exprs(j, "args");
    if (static_cast<int>(args.size()) != intrinsic_arity(op))
        TESSEL_THROW(DSLError) << name << " takes " << intrinsic_arity(op) << " arguments, got "
                               << args.size();
    check_call_args(op, args);
    return Call::make(op, args);
}

Expr DagReader::tensor_read(const json& j) {
    if (!in_body_)
        TESSEL_THROW(DSLError) << "a TensorRead outside a compute's body (shapes and reduce-axis "
                               << "domains may only use constants and the document's variables)";
    Tensor t;
    {
        At at(*this, "tensor");
        t = tensor_ref(field(j, "tensor"));
    }
    return t(exprs(j, "indices"));
}

// Reduces of one reducer call (argmax's index and value) are written once per output; they are
// read back as one call, so that they share combiner, sources and axes as compute requires.
Expr DagReader::reduce(const json& j) {
    if (!in_body_) TESSEL_THROW(DSLError) << "a Reduce outside a compute's body";
    int64_t value_index = integer_field(j, "value_index");
    json call = j;
    call.erase("value_index");
    std::string key = call.dump();
    auto it = reductions_.find(key);
    if (it == reductions_.end()) it = reductions_.emplace(key, reducer_call(j)).first;
    const std::vector<Expr>& values = it->second;
    if (value_index < 0 || value_index >= static_cast<int64_t>(values.size()))
        TESSEL_THROW(DSLError) << "Reduce value_index " << value_index << " of a reduction of "
                               << values.size() << " value(s)";
    return values[value_index];
}

std::vector<Expr> DagReader::reducer_call(const json& j) {
    std::vector<Expr> sources = exprs(j, "source");
    std::vector<IterVar> axis;
    const json& ids = array_field(j, "axis");
    for (size_t i = 0; i < ids.size(); ++i) {
        At at(*this, indexed("axis", i));
        auto it = reduce_axes_.find(integer(ids[i], "a reduce axis"));
        if (it == reduce_axes_.end())
            TESSEL_THROW(DSLError)
                << "variable " << ids[i].dump() << " is not a reduce axis of this compute";
        axis.push_back(it->second);
    }
    Expr condition = expr_field(j, "condition");
    const json& c = field(j, "combiner");
    At at(*this, "combiner");
    const json &lhs = array_field(c, "lhs"), &rhs = array_field(c, "rhs");
    auto combine = [&](const std::vector<Expr>& l, const std::vector<Expr>& r) {
        if (lhs.size() != l.size() || rhs.size() != r.size())
            TESSEL_THROW(DSLError) << "the combiner has " << lhs.size() << " lhs and " << rhs.size()
                                   << " rhs variables for " << l.size() << " values";
        for (size_t i = 0; i < l.size(); ++i) {
            bind(integer(lhs[i], "an lhs variable"), Var(l[i].as<Variable>()));
            bind(integer(rhs[i], "an rhs variable"), Var(r[i].as<Variable>()));
        }
        std::vector<Expr> result = exprs(c, "result");
        for (size_t i = 0; i < l.size(); ++i) {
            unbind(integer(lhs[i], "an lhs variable"));
            unbind(integer(rhs[i], "an rhs variable"));
        }
        return result;
    };
    auto identity = [&](const std::vector<Type>&) { return exprs(c, "identity"); };
    Reducer reducer(string_field(c, "name"), combine, identity);
    return reducer(sources, axis, condition);
}

}  // namespace tessel::internal
