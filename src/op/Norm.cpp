// Normalisations (op/Norm.h).
#include "tessel/op/Norm.h"

#include "op/OpUtil.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Reduce.h"

namespace tessel::op {

using internal::bad_param;

namespace {

using Indices = std::vector<Expr>;

// The sum over the last axis of `f(indices)` (indices of x, the last one the reduction variable),
// keeping the axis as an extent of 1.
Tensor last_axis_sum(const std::vector<int64_t>& shape, const std::function<Expr(Indices)>& f,
                     const std::string& name) {
    std::vector<int64_t> out = shape;
    out.back() = 1;
    IterVar k = reduce_axis({0, make_const(Int(32), shape.back())}, "k");
    return compute(
        internal::to_exprs(out),
        [&](const std::vector<Var>& v) {
            Indices idx(v.begin(), v.end());
            idx.back() = k.var();
            return tessel::sum(f(idx), {k});
        },
        name);
}

// `idx` with the last index 0: the point of a keepdims reduction over the last axis.
Indices row_of(Indices idx) {
    idx.back() = make_zero(idx.back().type());
    return idx;
}

void check_vector(const Tensor& v, int64_t extent, const Tensor& x, const char* op,
                  const char* param) {
    if (!v.defined()) return;
    internal::check_rank(v, 1, op, param);
    internal::check_same_dtype(x, v, op, param);
    int64_t got = constant_shape(v, op, param)[0];
    if (got != extent)
        bad_param(op, param,
                  "has extent " + std::to_string(got) + " but the normalised axis has " +
                      std::to_string(extent));
}

std::vector<int64_t> check_norm_input(const Tensor& x, double eps, const char* op) {
    std::vector<int64_t> shape = constant_shape(x, op, "x");
    if (shape.empty()) bad_param(op, "x", "must have at least one axis");
    internal::check_float(x, op, "x");
    if (!(eps > 0)) bad_param(op, "eps", "must be positive, got " + std::to_string(eps));
    return shape;
}

// The normalisations compute in float32 for 16-bit inputs and return the input's type.
internal::Accumulation wide(const Tensor& x, const std::string& name) {
    return internal::accumulation(x.dtype(), std::nullopt, name.c_str());
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis, const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    internal::check_float(x, name.c_str(), "x");
    normalize_axis(axis, shape.size(), name.c_str());
    const internal::Accumulation acc = wide(x, name);
    Tensor mx = max(x, {axis}, true, name + ".max");
    Tensor e = binary(
        x, mx, [&acc](Expr a, Expr m) { return tessel::exp(acc.widen(a) - acc.widen(m)); },
        name + ".exp");
    Tensor s = sum(e, {axis}, true, std::nullopt, name + ".sum");
    // One division per row, not per element: the kernels are bound by memory, and a division
    // per element costs more than the loads on a GPU (within a rounding of e / s).
    return binary(
        e, s, [&acc](Expr a, Expr t) { return acc.narrow(a * (make_const(t.type(), 1.0) / t)); },
        name);
}

Tensor log_softmax(const Tensor& x, int64_t axis, const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    internal::check_float(x, name.c_str(), "x");
    normalize_axis(axis, shape.size(), name.c_str());
    const internal::Accumulation acc = wide(x, name);
    // Every stage in the accumulator's type (its own stage for a 16-bit input, inlined).
    Tensor xw = acc.accumulate == x.dtype() ? x : cast(x, acc.accumulate, name + ".wide");
    Tensor mx = max(xw, {axis}, true, name + ".max");
    Tensor e = binary(
        xw, mx, [](Expr a, Expr m) { return tessel::exp(a - m); }, name + ".exp");
    Tensor s = sum(e, {axis}, true, std::nullopt, name + ".sum");
    Tensor shift = binary(
        mx, s, [](Expr m, Expr t) { return m + tessel::log(t); }, name + ".shift");
    return binary(
        xw, shift, [&acc](Expr a, Expr b) { return acc.narrow(a - b); }, name);
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps,
                  const std::string& name) {
    const char* op = name.c_str();
    std::vector<int64_t> shape = check_norm_input(x, eps, op);
    check_vector(gamma, shape.back(), x, op, "gamma");
    check_vector(beta, shape.back(), x, op, "beta");
    const internal::Accumulation acc = wide(x, name);
    const Type t = acc.accumulate;
    const Expr inv_m = make_const(t, 1.0 / static_cast<double>(shape.back()));
    Tensor total = last_axis_sum(
        shape, [&](const Indices& i) { return acc.widen(x(i)); }, name + ".sum");
    Tensor sq = last_axis_sum(
        shape,
        [&](const Indices& i) {
            Expr d = acc.widen(x(i)) - total(row_of(i)) * inv_m;
            return d * d;
        },
        name + ".sqsum");
    return compute(
        internal::to_exprs(shape),
        [&](const std::vector<Var>& v) {
            Indices i(v.begin(), v.end());
            Expr inv = tessel::rsqrt(sq(row_of(i)) * inv_m + make_const(t, eps));
            Expr y = (acc.widen(x(i)) - total(row_of(i)) * inv_m) * inv;
            if (gamma.defined()) y = y * acc.widen(gamma(v.back()));
            if (beta.defined()) y = y + acc.widen(beta(v.back()));
            return acc.narrow(y);
        },
        name);
}

Tensor rms_norm(const Tensor& x, const Tensor& gamma, double eps, const std::string& name) {
    const char* op = name.c_str();
    std::vector<int64_t> shape = check_norm_input(x, eps, op);
    check_vector(gamma, shape.back(), x, op, "gamma");
    const internal::Accumulation acc = wide(x, name);
    const Type t = acc.accumulate;
    const Expr inv_m = make_const(t, 1.0 / static_cast<double>(shape.back()));
    Tensor sq = last_axis_sum(
        shape, [&](const Indices& i) { return acc.widen(x(i)) * acc.widen(x(i)); },
        name + ".sqsum");
    return compute(
        internal::to_exprs(shape),
        [&](const std::vector<Var>& v) {
            Indices i(v.begin(), v.end());
            Expr y = acc.widen(x(i)) * tessel::rsqrt(sq(row_of(i)) * inv_m + make_const(t, eps));
            return acc.narrow(gamma.defined() ? y * acc.widen(gamma(v.back())) : y);
        },
        name);
}

Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                  const Tensor& var, double eps, int64_t axis, const std::string& name) {
    const char* op = name.c_str();
    std::vector<int64_t> shape = check_norm_input(x, eps, op);
    const auto c = static_cast<size_t>(normalize_axis(axis, shape.size(), op));
    const std::pair<const Tensor*, const char*> vectors[] = {
        {&gamma, "gamma"}, {&beta, "beta"}, {&mean, "mean"}, {&var, "var"}};
    for (auto [v, param] : vectors) {
        if (!v->defined()) bad_param(op, param, "is undefined");
        check_vector(*v, shape[c], x, op, param);
    }
    const internal::Accumulation acc = wide(x, name);
    return compute(
        internal::to_exprs(shape),
        [&](const std::vector<Var>& v) {
            Indices i(v.begin(), v.end());
            auto w = [&](const Tensor& t, const Indices& at) { return acc.widen(t(at)); };
            Expr inv = tessel::rsqrt(w(var, {v[c]}) + make_const(acc.accumulate, eps));
            return acc.narrow((w(x, i) - w(mean, {v[c]})) * inv * w(gamma, {v[c]}) +
                              w(beta, {v[c]}));
        },
        name);
}

}  // namespace tessel::op
