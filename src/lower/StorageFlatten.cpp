#include "tessel/lower/StorageFlatten.h"

#include "PassUtil.h"
#include "tessel/arith/Modular.h"
#include "tessel/ir/IRMutator.h"

namespace tessel {

using internal::cast_index;
using internal::fold_add;
using internal::fold_mul;

namespace {

/// The index type of an access: the widest integer type among the buffer's layout and the indices.
Type access_index_type(const Buffer& b, const std::vector<Expr>& indices) {
    Type t = b->elem_offset.defined() ? b->elem_offset.type() : Int(32);
    for (const Expr& e : b->shape) t = internal::wider_index_type(t, e.type());
    for (const Expr& e : b->strides) t = internal::wider_index_type(t, e.type());
    for (const Expr& e : indices) t = internal::wider_index_type(t, e.type());
    return t;
}

/// The element strides of `b` in type t: its own, or compact row-major ones.
std::vector<Expr> element_strides(const Buffer& b, Type t) {
    size_t n = b->shape.size();
    std::vector<Expr> strides(n);
    if (!b->strides.empty()) {
        TESSEL_CHECK(b->strides.size() == n)
            << "buffer " << b.name() << " has " << b->strides.size() << " strides for " << n
            << " dimensions";
        for (size_t k = 0; k < n; ++k) strides[k] = cast_index(t, b->strides[k]);
        return strides;
    }
    Expr s = make_one(t);
    for (size_t k = n; k-- > 0;) {
        strides[k] = s;
        s = fold_mul(s, cast_index(t, b->shape[k]));
    }
    return strides;
}

/// Widens a scalar to `lanes` lanes (vectors are returned as they are).
Expr widen(const Expr& e, int lanes) {
    if (e.type().lanes == lanes) return e;
    TESSEL_CHECK(e.type().is_scalar()) << "index of " << e.type().lanes << " lanes with " << lanes;
    return Broadcast::make(e, lanes);
}

/// sum_k indices[k] * strides[k] + offset, lane-wise when some index is a vector.
Expr weighted_sum(const std::vector<Expr>& indices, const std::vector<Expr>& strides,
                  const Expr& offset, int lanes) {
    Expr sum;
    for (size_t k = 0; k < indices.size(); ++k) {
        Expr term = fold_mul(indices[k], widen(strides[k], indices[k].type().lanes));
        if (!sum.defined()) {
            sum = term;
        } else {
            int l = std::max(sum.type().lanes, term.type().lanes);
            sum = fold_add(widen(sum, l), widen(term, l));
        }
    }
    if (!sum.defined()) return widen(offset, lanes);
    int l = sum.type().lanes;
    return widen(fold_add(sum, widen(offset, l)), lanes);
}

}  // namespace

Expr swizzle_index(const Expr& index, const BufferSwizzle& z) {
    Type t = index.type().element_of();
    auto c = [&](int64_t v) { return make_const(t, v); };
    // A dense vector inside one 16-byte chunk stays dense: the swizzle moves the chunk whole.
    if (const auto* ramp = index.as<Ramp>();
        ramp && is_one(ramp->stride) && z.vector % ramp->lanes == 0) {
        ModularSet m = modular_set_of(ramp->base, {});
        if (m.coeff % ramp->lanes == 0 && m.base % ramp->lanes == 0) {
            Expr base =
                Call::make(Intrinsic::swizzle, {ramp->base, c(z.vector), c(z.span), c(z.phases)});
            return Ramp::make(base, ramp->stride, ramp->lanes);
        }
    }
    return Call::make(Intrinsic::swizzle, {index, c(z.vector), c(z.span), c(z.phases)});
}

namespace {

// The summands of an Add / Sub tree with their signs.
void summands(const Expr& e, bool negative, std::vector<std::pair<Expr, bool>>* out) {
    if (const Add* add = e.as<Add>()) {
        summands(add->a, negative, out);
        summands(add->b, negative, out);
    } else if (const Sub* sub = e.as<Sub>()) {
        summands(sub->a, negative, out);
        summands(sub->b, !negative, out);
    } else {
        out->push_back({e, negative});
    }
}

// *acc += e (or -= e), starting from nothing.
void add_summand(Expr* acc, const Expr& e, bool negative) {
    Expr a = acc->defined() ? *acc : make_zero(e.type());
    *acc = negative ? Sub::make(a, e) : acc->defined() ? Add::make(a, e) : e;
}

}  // namespace

Expr split_whole_cycles(const Expr& o, const BufferSwizzle& z, Expr* rest) {
    std::vector<std::pair<Expr, bool>> terms;
    summands(o, false, &terms);
    const int64_t cycle = z.span * z.phases;
    Expr whole, other;
    for (const auto& [e, negative] : terms) {
        ModularSet m = modular_set_of(e, {});
        add_summand(m.coeff % cycle == 0 && m.base % cycle == 0 ? &whole : &other, e, negative);
    }
    *rest = other.defined() ? other : make_zero(o.type());
    return whole;
}

Expr unswizzled_index(const Expr& index, BufferSwizzle* z, Expr* outside) {
    if (index.type().is_vector()) return Expr();
    std::vector<std::pair<Expr, bool>> terms;
    summands(index, false, &terms);
    const Call* call = nullptr;
    Expr rest;
    for (const auto& [e, negative] : terms) {
        const Call* c = e.as<Call>();
        if (c && c->op == Intrinsic::swizzle && !negative && !call) {
            call = c;
            continue;
        }
        add_summand(&rest, e, negative);
    }
    if (!call) return Expr();
    BufferSwizzle found{*as_const_int(call->args[1]), *as_const_int(call->args[2]),
                        *as_const_int(call->args[3])};
    if (rest.defined()) {  // must be whole phase cycles (the simplifier's rewrite_swizzle)
        Expr other;
        split_whole_cycles(rest, found, &other);
        if (!is_zero(other)) return Expr();
    }
    *z = found;
    if (outside) *outside = rest.defined() ? rest : make_zero(index.type());
    return rest.defined() ? Add::make(call->args[0], rest) : call->args[0];
}

Expr flat_index(const Buffer& buffer, const std::vector<Expr>& indices) {
    Expr index = unswizzled_flat_index(buffer, indices);
    return buffer->swizzle.defined() ? swizzle_index(index, buffer->swizzle) : index;
}

Expr unswizzled_flat_index(const Buffer& buffer, const std::vector<Expr>& indices) {
    TESSEL_CHECK(indices.size() == buffer->shape.size())
        << "buffer " << buffer.name() << " accessed with " << indices.size() << " indices";
    Type t = access_index_type(buffer, indices);
    std::vector<Expr> strides = element_strides(buffer, t);
    Expr offset = buffer->elem_offset.defined() ? cast_index(t, buffer->elem_offset) : make_zero(t);
    std::vector<Expr> idx;
    int lanes = 1, vector_dims = 0, ramp_dim = -1;
    for (size_t k = 0; k < indices.size(); ++k) {
        idx.push_back(cast_index(t, indices[k]));
        if (indices[k].type().is_vector()) {
            lanes = indices[k].type().lanes;
            ++vector_dims;
            if (indices[k].as<Ramp>()) ramp_dim = static_cast<int>(k);
        }
    }
    if (vector_dims == 1 && ramp_dim >= 0) {
        // A Ramp in one dimension: the flat index is a Ramp too (dense when that stride is 1).
        const auto* ramp = idx[ramp_dim].as<Ramp>();
        Expr stride = fold_mul(ramp->stride, strides[ramp_dim]);
        idx[ramp_dim] = ramp->base;
        return Ramp::make(weighted_sum(idx, strides, offset, 1), stride, ramp->lanes);
    }
    return weighted_sum(idx, strides, offset, lanes);
}

namespace {

class StorageFlattener : public IRMutator {
public:
    using IRMutator::visit;

    Expr visit(const BufferLoad* op) override {
        std::vector<Expr> indices;
        mutate_all(op->indices, &indices);
        Expr index = flat_index(op->buffer, indices);
        return Load::make(op->type.with_lanes(index.type().lanes), op->buffer->data, index);
    }

    Stmt visit(const BufferStore* op) override {
        Expr value = mutate(op->value);
        std::vector<Expr> indices;
        mutate_all(op->indices, &indices);
        Expr index = flat_index(op->buffer, indices);
        int lanes = index.type().lanes;
        if (value.type().lanes != lanes) value = widen(value, lanes);
        return Store::make(op->buffer->data, value, index);
    }

    Stmt visit(const Allocate* op) override {
        Stmt body = mutate(op->body);
        std::vector<Expr> extents;
        mutate_all(op->extents, &extents);
        if (extents.size() > 1) {
            Type t = extents[0].type();
            for (const Expr& e : extents) t = internal::wider_index_type(t, e.type());
            extents = {internal::fold_product(extents, t)};
        }
        return Allocate::make(op->buffer_var, op->dtype, extents, op->scope, body);
    }
};

}  // namespace

LoweredFunc storage_flatten(const LoweredFunc& f) {
    LoweredFunc out = f;
    out.body = StorageFlattener().mutate(f.body);
    return out;
}

}  // namespace tessel
