// Reductions over axes (op/Reduce.h).
#include "tessel/op/Reduce.h"

#include "op/OpUtil.h"
#include "tessel/op/Elementwise.h"

namespace tessel::op {

using internal::bad_param;

int64_t normalize_axis(int64_t axis, size_t ndim, const char* op, const char* param) {
    const auto n = static_cast<int64_t>(ndim);
    if (axis < -n || axis >= n)
        bad_param(op, param,
                  "(" + std::to_string(axis) + ") is out of range for a " + std::to_string(n) +
                      "-D tensor");
    return axis < 0 ? axis + n : axis;
}

namespace {

// Which axes are reduced (every axis for an empty list), checked.
std::vector<bool> reduced_axes(const std::vector<int64_t>& axis, size_t ndim, const char* op) {
    std::vector<bool> reduced(ndim, axis.empty());
    for (int64_t a : axis) {
        int64_t d = normalize_axis(a, ndim, op);
        if (reduced[d]) bad_param(op, "axis", "lists axis " + std::to_string(d) + " twice");
        reduced[d] = true;
    }
    return reduced;
}

// A reduction of x over `axis`: `body(value, axes)` returns the reduced expressions (one per
// output), `finish` post-processes each output value.
using ReduceBody = std::function<std::vector<Expr>(Expr, const std::vector<IterVar>&)>;

std::vector<Tensor> reduce_over(const Tensor& x, const std::vector<int64_t>& axis, bool keepdims,
                                const std::string& name, const ReduceBody& body) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    std::vector<bool> reduced = reduced_axes(axis, shape.size(), name.c_str());
    std::vector<int64_t> out;
    std::vector<IterVar> raxes(shape.size());
    std::vector<IterVar> rlist;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (!reduced[d]) {
            out.push_back(shape[d]);
            continue;
        }
        if (keepdims) out.push_back(1);
        raxes[d] = reduce_axis({0, make_const(Int(32), shape[d])}, "r" + std::to_string(d));
        rlist.push_back(raxes[d]);
    }
    return compute_multi(
        internal::to_exprs(out),
        [&](const std::vector<Var>& v) {
            std::vector<Expr> idx;
            size_t o = 0;
            for (size_t d = 0; d < shape.size(); ++d) {
                if (reduced[d]) {
                    idx.push_back(raxes[d].var());
                    o += keepdims ? 1 : 0;
                } else {
                    idx.push_back(v[o++]);
                }
            }
            return body(x(idx), rlist);
        },
        name);
}

Tensor reduce_one(const Tensor& x, const std::vector<int64_t>& axis, bool keepdims,
                  const std::string& name,
                  Expr (*reducer)(Expr, const std::vector<IterVar>&, Expr)) {
    return reduce_over(x, axis, keepdims, name, [reducer](Expr v, const std::vector<IterVar>& r) {
        return std::vector<Expr>{reducer(v, r, Expr())};
    })[0];
}

}  // namespace

namespace {

// The sum of x over `axis` in the accumulator's type.
Tensor wide_sum(const Tensor& x, const std::vector<int64_t>& axis, bool keepdims,
                const internal::Accumulation& acc, const std::string& name) {
    return reduce_over(x, axis, keepdims, name, [&acc](Expr v, const std::vector<IterVar>& r) {
        return std::vector<Expr>{tessel::sum(acc.widen(v), r)};
    })[0];
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& axis, bool keepdims,
           std::optional<Type> out_dtype, const std::string& name) {
    internal::Accumulation acc = internal::accumulation(x.dtype(), out_dtype, name.c_str());
    if (acc.accumulate == acc.out) return wide_sum(x, axis, keepdims, acc, name);
    Tensor total = wide_sum(x, axis, keepdims, acc, name + ".acc");
    return unary(
        total, [&acc](Expr e) { return acc.narrow(e); }, name);
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& axis, bool keepdims,
            std::optional<Type> out_dtype, const std::string& name) {
    internal::check_float(x, name.c_str(), "x");
    internal::Accumulation acc = internal::accumulation(x.dtype(), out_dtype, name.c_str());
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    std::vector<bool> reduced = reduced_axes(axis, shape.size(), name.c_str());
    int64_t count = 1;
    for (size_t d = 0; d < shape.size(); ++d) count *= reduced[d] ? shape[d] : 1;
    Tensor total = wide_sum(x, axis, keepdims, acc, name + ".sum");
    const double inv = 1.0 / static_cast<double>(count);
    return unary(
        total, [inv, &acc](Expr e) { return acc.narrow(e * make_const(e.type(), inv)); }, name);
}

Tensor max(const Tensor& x, const std::vector<int64_t>& axis, bool keepdims,
           const std::string& name) {
    return reduce_one(x, axis, keepdims, name, &tessel::max);
}

Tensor min(const Tensor& x, const std::vector<int64_t>& axis, bool keepdims,
           const std::string& name) {
    return reduce_one(x, axis, keepdims, name, &tessel::min);
}

namespace {

// The index output of an arg-reduction, copied into a stage of its own: a schedule may only lower
// every output of a multi-output stage, and the value output is not the operator's.
Tensor arg_reduce(const Tensor& x, int64_t axis, bool keepdims, const std::string& name,
                  bool is_max) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    normalize_axis(axis, shape.size(), name.c_str());
    Tensor pair = reduce_over(
        x, {axis}, keepdims, name + ".pair", [is_max](Expr v, const std::vector<IterVar>& r) {
            return is_max ? tessel::argmax(r[0].var(), v, r) : tessel::argmin(r[0].var(), v, r);
        })[0];
    return unary(
        pair, [](Expr e) { return e; }, name);
}

}  // namespace

Tensor argmax(const Tensor& x, int64_t axis, bool keepdims, const std::string& name) {
    return arg_reduce(x, axis, keepdims, name, true);
}

Tensor argmin(const Tensor& x, int64_t axis, bool keepdims, const std::string& name) {
    return arg_reduce(x, axis, keepdims, name, false);
}

}  // namespace tessel::op
