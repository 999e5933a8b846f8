// Layout and indexing operators (op/Transform.h).
#include "tessel/op/Transform.h"

#include <algorithm>
#include <numeric>

#include "op/OpUtil.h"
#include "tessel/op/Reduce.h"

namespace tessel::op {

using internal::bad_param;

namespace {

std::string list_string(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

std::vector<Expr> vars_as_exprs(const std::vector<Var>& v) {
    return std::vector<Expr>(v.begin(), v.end());
}

}  // namespace

Tensor transpose(const Tensor& x, std::vector<int64_t> axes, const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    const size_t n = shape.size();
    if (axes.empty())
        for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(n - 1 - i));
    std::vector<bool> seen(n, false);
    if (axes.size() != n)
        bad_param(name.c_str(), "axes", list_string(axes) + " is not a permutation");
    for (int64_t& a : axes) {
        a = normalize_axis(a, n, name.c_str(), "axes");
        if (seen[a]) bad_param(name.c_str(), "axes", list_string(axes) + " is not a permutation");
        seen[a] = true;
    }
    std::vector<int64_t> out;
    for (int64_t a : axes) out.push_back(shape[a]);
    return compute(
        internal::to_exprs(out),
        [&](const std::vector<Var>& v) {
            std::vector<Expr> idx(n);
            for (size_t i = 0; i < n; ++i) idx[axes[i]] = v[i];
            return x(idx);
        },
        name);
}

Tensor reshape(const Tensor& x, std::vector<int64_t> shape, const std::string& name) {
    std::vector<int64_t> in = constant_shape(x, name.c_str(), "x");
    int64_t total = std::accumulate(in.begin(), in.end(), int64_t(1), std::multiplies<>());
    int64_t known = 1, inferred = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1 && inferred < 0)
            inferred = static_cast<int64_t>(i);
        else if (shape[i] < 1)
            bad_param(name.c_str(), "shape", list_string(shape) + " has a bad extent");
        else
            known *= shape[i];
    }
    if (inferred >= 0 && known > 0 && total % known == 0) shape[inferred] = total / known;
    if (std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>()) != total)
        bad_param(name.c_str(), "shape",
                  list_string(shape) + " does not hold the " + std::to_string(total) +
                      " elements of " + list_string(in));
    return compute(
        internal::to_exprs(shape),
        [&](const std::vector<Var>& v) {
            Expr flat = make_zero(Int(32));
            for (size_t i = 0; i < v.size(); ++i) flat = flat * int(shape[i]) + v[i];
            std::vector<Expr> idx(in.size());
            for (size_t d = in.size(); d-- > 0;) {
                idx[d] = d == 0 ? flat : floormod(flat, int(in[d]));
                flat = floordiv(flat, int(in[d]));
            }
            return x(idx);
        },
        name);
}

Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis, const std::string& name) {
    const char* op = name.c_str();
    if (xs.empty()) bad_param(op, "xs", "must hold at least one tensor");
    std::vector<int64_t> first = constant_shape(xs[0], op, "xs");
    const size_t a = static_cast<size_t>(normalize_axis(axis, first.size(), op, "axis"));
    std::vector<int64_t> offsets = {0};
    for (const Tensor& t : xs) {
        std::vector<int64_t> s = constant_shape(t, op, "xs");
        internal::check_same_dtype(xs[0], t, op, "xs");
        for (size_t d = 0; d < first.size(); ++d)
            if (s.size() != first.size() || (d != a && s[d] != first[d]))
                bad_param(op, "xs",
                          "holds shapes " + list_string(first) + " and " + list_string(s) +
                              " that differ off axis " + std::to_string(a));
        offsets.push_back(offsets.back() + s[a]);
    }
    std::vector<int64_t> out = first;
    out[a] = offsets.back();
    return compute(
        internal::to_exprs(out),
        [&](const std::vector<Var>& v) {
            std::vector<Expr> idx = vars_as_exprs(v);
            idx[a] = v[a] - int(offsets[xs.size() - 1]);
            Expr value = xs.back()(idx);
            for (size_t i = xs.size() - 1; i-- > 0;) {
                idx[a] = v[a] - int(offsets[i]);
                value = if_then_else(v[a] < int(offsets[i + 1]), xs[i](idx), value);
            }
            return value;
        },
        name);
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& indices, int64_t axis,
                          const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    const size_t a = static_cast<size_t>(normalize_axis(axis, shape.size(), name.c_str()));
    std::vector<int64_t> bounds = {0};
    for (int64_t i : indices) {
        if (i <= bounds.back() || i >= shape[a])
            bad_param(name.c_str(), "indices",
                      list_string(indices) + " must increase strictly inside (0, " +
                          std::to_string(shape[a]) + ")");
        bounds.push_back(i);
    }
    bounds.push_back(shape[a]);
    std::vector<Tensor> parts;
    for (size_t p = 0; p + 1 < bounds.size(); ++p) {
        std::vector<int64_t> out = shape;
        out[a] = bounds[p + 1] - bounds[p];
        const int64_t start = bounds[p];
        parts.push_back(compute(
            internal::to_exprs(out),
            [&](const std::vector<Var>& v) {
                std::vector<Expr> idx = vars_as_exprs(v);
                idx[a] = v[a] + int(start);
                return x(idx);
            },
            name + "." + std::to_string(p)));
    }
    return parts;
}

std::vector<Tensor> split_sections(const Tensor& x, int64_t sections, int64_t axis,
                                   const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    const size_t a = static_cast<size_t>(normalize_axis(axis, shape.size(), name.c_str()));
    if (sections < 1 || shape[a] % sections != 0)
        bad_param(name.c_str(), "sections",
                  "(" + std::to_string(sections) + ") must divide the extent " +
                      std::to_string(shape[a]) + " of axis " + std::to_string(a));
    std::vector<int64_t> indices;
    for (int64_t s = 1; s < sections; ++s) indices.push_back(s * (shape[a] / sections));
    return split(x, indices, axis, name);
}

Tensor pad(const Tensor& x, const std::vector<int64_t>& before, std::vector<int64_t> after,
           double value, const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    if (after.empty()) after = before;
    const std::vector<int64_t>& after_ref = after;
    for (const std::vector<int64_t>* list : {&before, &after_ref}) {
        const char* param = list == &before ? "before" : "after";
        if (list->size() != shape.size())
            bad_param(name.c_str(), param,
                      list_string(*list) + " must have one entry per axis (" +
                          std::to_string(shape.size()) + ")");
        for (int64_t p : *list)
            if (p < 0) bad_param(name.c_str(), param, list_string(*list) + " has negative padding");
    }
    Type t = x.dtype();
    Expr fill = t.is_float() ? make_const(t, value) : make_const(t, int64_t(value));
    return internal::pad_with(x, before, after, fill, name);
}

namespace internal {

Tensor pad_with(const Tensor& x, const std::vector<int64_t>& before,
                const std::vector<int64_t>& after, const Expr& fill, const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    std::vector<int64_t> out;
    for (size_t d = 0; d < shape.size(); ++d) out.push_back(shape[d] + before[d] + after[d]);
    return compute(
        to_exprs(out),
        [&](const std::vector<Var>& v) {
            Expr inside = make_const(Bool(), int64_t(1));
            std::vector<Expr> idx;
            for (size_t d = 0; d < v.size(); ++d) {
                if (before[d] == 0 && after[d] == 0) {
                    idx.push_back(v[d]);
                    continue;
                }
                idx.push_back(v[d] - int(before[d]));
                inside = inside && v[d] >= int(before[d]) && v[d] < int(before[d] + shape[d]);
            }
            return if_then_else(inside, x(idx), fill);
        },
        name);
}

}  // namespace internal

Tensor take(const Tensor& x, const Tensor& indices, int64_t axis, const std::string& name) {
    std::vector<int64_t> shape = constant_shape(x, name.c_str(), "x");
    std::vector<int64_t> ishape = constant_shape(indices, name.c_str(), "indices");
    if (!indices.dtype().is_int() && !indices.dtype().is_uint())
        bad_param(name.c_str(), "indices", "must be integer, got " + indices.dtype().str());
    const size_t a = static_cast<size_t>(normalize_axis(axis, shape.size(), name.c_str()));
    std::vector<int64_t> out(shape.begin(), shape.begin() + a);
    out.insert(out.end(), ishape.begin(), ishape.end());
    out.insert(out.end(), shape.begin() + a + 1, shape.end());
    return compute(
        internal::to_exprs(out),
        [&](const std::vector<Var>& v) {
            std::vector<Expr> iidx(v.begin() + a, v.begin() + a + ishape.size());
            Expr i = tessel::cast(Int(32), indices(iidx));
            i = tessel::min(tessel::max(i, 0), int(shape[a] - 1));
            std::vector<Expr> idx(v.begin(), v.begin() + a);
            idx.push_back(i);
            idx.insert(idx.end(), v.begin() + a + ishape.size(), v.end());
            return x(idx);
        },
        name);
}

}  // namespace tessel::op
