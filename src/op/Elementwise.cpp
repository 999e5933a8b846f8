// Element-wise operators (op/Elementwise.h).
#include "tessel/op/Elementwise.h"

#include <cmath>

#include "op/OpUtil.h"

namespace tessel::op {

using internal::bad_param;

namespace {

// The indices of an operand of `shape` read at output point `v` (broadcast from the right).
std::vector<Expr> broadcast_indices(const std::vector<int64_t>& shape, const std::vector<Var>& v) {
    std::vector<Expr> idx;
    size_t offset = v.size() - shape.size();
    for (size_t d = 0; d < shape.size(); ++d)
        idx.push_back(shape[d] == 1 ? make_zero(v[offset + d].type()) : Expr(v[offset + d]));
    return idx;
}

Expr constant(Expr like, double value) {
    return make_const(like.type(), value);
}

}  // namespace

const char* activation_name(Activation a) {
    switch (a) {
        case Activation::None: return "none";
        case Activation::ReLU: return "relu";
        case Activation::GELU: return "gelu";
        case Activation::SiLU: return "silu";
        case Activation::Sigmoid: return "sigmoid";
        case Activation::Tanh: return "tanh";
    }
    return "?";
}

Activation parse_activation(const std::string& name, const char* param) {
    for (Activation a : {Activation::None, Activation::ReLU, Activation::GELU, Activation::SiLU,
                         Activation::Sigmoid, Activation::Tanh})
        if (name == activation_name(a)) return a;
    bad_param("activation", param,
              "is '" + name + "'; expected none, relu, gelu, silu, sigmoid or tanh");
}

Expr apply_activation(Activation a, Expr x) {
    if (a != Activation::None && a != Activation::ReLU && !x.type().is_float())
        TESSEL_THROW(DSLError) << "activation " << activation_name(a)
                               << ": needs a float value, got " << x.type().str();
    switch (a) {
        case Activation::None: return x;
        case Activation::ReLU: return tessel::max(x, make_zero(x.type()));
        case Activation::GELU:
            return x * constant(x, 0.5) *
                   (constant(x, 1.0) + tessel::erf(x * constant(x, 1.0 / std::sqrt(2.0))));
        case Activation::SiLU: return x * tessel::sigmoid(x);
        case Activation::Sigmoid: return tessel::sigmoid(x);
        case Activation::Tanh: return tessel::tanh(x);
    }
    return x;
}

std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     const char* op) {
    std::vector<int64_t> out(std::max(a.size(), b.size()));
    for (size_t i = 0; i < out.size(); ++i) {
        int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
        int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
        if (x != y && x != 1 && y != 1)
            TESSEL_THROW(DSLError) << op << ": shapes do not broadcast: extents " << x << " and "
                                   << y << " on dimension " << out.size() - 1 - i;
        out[out.size() - 1 - i] = x == 1 ? y : x;
    }
    return out;
}

Tensor unary(const Tensor& x, const std::function<Expr(Expr)>& f, const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    return compute(
        internal::to_exprs(shape),
        [&](const std::vector<Var>& v) { return f(x(std::vector<Expr>(v.begin(), v.end()))); },
        name);
}

Tensor binary(const Tensor& a, const Tensor& b, const std::function<Expr(Expr, Expr)>& f,
              const std::string& name) {
    std::vector<int64_t> sa = constant_shape(a, name.c_str(), "a");
    std::vector<int64_t> sb = constant_shape(b, name.c_str(), "b");
    internal::check_same_dtype(a, b, name.c_str(), "b");
    std::vector<int64_t> out = broadcast_shape(sa, sb, name.c_str());
    return compute(
        internal::to_exprs(out),
        [&](const std::vector<Var>& v) {
            return f(a(broadcast_indices(sa, v)), b(broadcast_indices(sb, v)));
        },
        name);
}

Tensor relu(const Tensor& x, const std::string& name) {
    return activation(x, Activation::ReLU, name);
}
Tensor gelu(const Tensor& x, const std::string& name) {
    return activation(x, Activation::GELU, name);
}
Tensor silu(const Tensor& x, const std::string& name) {
    return activation(x, Activation::SiLU, name);
}
Tensor sigmoid(const Tensor& x, const std::string& name) {
    return activation(x, Activation::Sigmoid, name);
}
Tensor tanh(const Tensor& x, const std::string& name) {
    return activation(x, Activation::Tanh, name);
}

Tensor activation(const Tensor& x, Activation a, const std::string& name) {
    std::string n = internal::name_or(name, activation_name(a));
    if (a != Activation::None && a != Activation::ReLU && x.defined())
        internal::check_float(x, n.c_str(), "x");
    return unary(
        x, [a](Expr e) { return apply_activation(a, e); }, n);
}

Tensor exp(const Tensor& x, const std::string& name) {
    internal::check_float(x, name.c_str(), "x");
    return unary(
        x, [](Expr e) { return tessel::exp(e); }, name);
}
Tensor log(const Tensor& x, const std::string& name) {
    internal::check_float(x, name.c_str(), "x");
    return unary(
        x, [](Expr e) { return tessel::log(e); }, name);
}
Tensor sqrt(const Tensor& x, const std::string& name) {
    internal::check_float(x, name.c_str(), "x");
    return unary(
        x, [](Expr e) { return tessel::sqrt(e); }, name);
}
Tensor abs(const Tensor& x, const std::string& name) {
    return unary(
        x, [](Expr e) { return tessel::abs(e); }, name);
}
Tensor negative(const Tensor& x, const std::string& name) {
    return unary(
        x, [](Expr e) { return -e; }, name);
}

Tensor add(const Tensor& a, const Tensor& b, const std::string& name) {
    return binary(
        a, b, [](Expr x, Expr y) { return x + y; }, name);
}
Tensor subtract(const Tensor& a, const Tensor& b, const std::string& name) {
    return binary(
        a, b, [](Expr x, Expr y) { return x - y; }, name);
}
Tensor multiply(const Tensor& a, const Tensor& b, const std::string& name) {
    return binary(
        a, b, [](Expr x, Expr y) { return x * y; }, name);
}
Tensor divide(const Tensor& a, const Tensor& b, const std::string& name) {
    return binary(
        a, b, [](Expr x, Expr y) { return x / y; }, name);
}
Tensor maximum(const Tensor& a, const Tensor& b, const std::string& name) {
    return binary(
        a, b, [](Expr x, Expr y) { return tessel::max(x, y); }, name);
}
Tensor minimum(const Tensor& a, const Tensor& b, const std::string& name) {
    return binary(
        a, b, [](Expr x, Expr y) { return tessel::min(x, y); }, name);
}
Tensor power(const Tensor& a, const Tensor& b, const std::string& name) {
    internal::check_float(a, name.c_str(), "a");
    return binary(
        a, b, [](Expr x, Expr y) { return tessel::pow(x, y); }, name);
}

Tensor cast(const Tensor& x, Type dtype, const std::string& name) {
    if (dtype.lanes != 1 || dtype.is_handle())
        bad_param(name.c_str(), "dtype", "must be a scalar type, got " + dtype.str());
    return unary(
        x, [dtype](Expr e) { return tessel::cast(dtype, e); }, name);
}

Tensor clip(const Tensor& x, double lo, double hi, const std::string& name) {
    if (!(lo <= hi))
        bad_param(name.c_str(), "lo",
                  "(" + std::to_string(lo) + ") must not exceed hi (" + std::to_string(hi) + ")");
    return unary(
        x,
        [lo, hi](Expr e) {
            Expr l = e.type().is_float() ? constant(e, lo) : make_const(e.type(), int64_t(lo));
            Expr h = e.type().is_float() ? constant(e, hi) : make_const(e.type(), int64_t(hi));
            return tessel::min(tessel::max(e, l), h);
        },
        name);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, const std::string& name) {
    std::vector<int64_t> sc = constant_shape(cond, name.c_str(), "cond");
    std::vector<int64_t> sa = constant_shape(a, name.c_str(), "a");
    std::vector<int64_t> sb = constant_shape(b, name.c_str(), "b");
    internal::check_same_dtype(a, b, name.c_str(), "b");
    std::vector<int64_t> out =
        broadcast_shape(broadcast_shape(sc, sa, name.c_str()), sb, name.c_str());
    return compute(
        internal::to_exprs(out),
        [&](const std::vector<Var>& v) {
            Expr c = cond(broadcast_indices(sc, v));
            if (!c.type().is_bool()) c = c != make_zero(c.type());
            return select(c, a(broadcast_indices(sa, v)), b(broadcast_indices(sb, v)));
        },
        name);
}

}  // namespace tessel::op
