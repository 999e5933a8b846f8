// Reductions: user reducers (comm_reducer), the built-in ones, and argmax / argmin.
#include <unordered_set>

#include "TeInternal.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {
// `e` as a value of type `t`: C++ literals adapt, anything else must already have type `t`.
Expr conform(const std::string& who, const std::string& what, Expr e, Type t) {
    if (e.type() == t) return e;
    Type given = e.type();
    Var target("target", t);
    Expr other = target;
    try {
        internal::match_types(what.c_str(), &e, &other);
    } catch (const DSLError&) {
        e = Expr();
    }
    if (!e.defined() || e.type() != t)
        TESSEL_THROW(DSLError) << who << ": " << what << " has type " << given
                               << " but the value it stands for has type " << t;
    return e;
}

// Throws unless `e` reads no tensor, contains no Reduce and uses no variable outside `allowed`.
void check_closed(const std::string& who, const std::string& what, const Expr& e,
                  const std::unordered_set<const Variable*>& allowed) {
    post_order_visit(e, [&](const IRNode* n) {
        if (n->node_type == IRNodeType::TensorRead || n->node_type == IRNodeType::Reduce)
            TESSEL_THROW(DSLError) << who << ": " << what << " reads a tensor or contains a "
                                   << "reduction; it may only use its lhs and rhs values";
        if (n->node_type == IRNodeType::Variable && !allowed.count(static_cast<const Variable*>(n)))
            TESSEL_THROW(DSLError) << who << ": " << what << " uses the variable '"
                                   << static_cast<const Variable*>(n)->name
                                   << "'; it may only use its lhs and rhs values";
    });
}

// Calls a user function, prefixing DSLErrors it throws with `who`.
template <typename R, typename F>
R call_user(const std::string& who, const F& f) {
    try {
        return f();
    } catch (const DSLError& e) {
        TESSEL_THROW(DSLError) << who << ": " << e.what();
    }
}
}  // namespace

Reducer::Reducer(std::string name, FCombine combine, FIdentity identity)
    : name_(std::move(name)), combine_(std::move(combine)), identity_(std::move(identity)) {
    if (!combine_) TESSEL_THROW(DSLError) << "reducer '" << name_ << "' has no combine function";
    if (!identity_)
        TESSEL_THROW(DSLError) << "reducer '" << name_ << "' has no identity function; a "
                               << "reducer needs an identity element";
}

CommReducer Reducer::instantiate(const std::vector<Type>& types) const {
    std::string who = "reducer '" + name_ + "'";
    std::vector<Var> lhs, rhs;
    std::vector<Expr> lhs_e, rhs_e;
    std::unordered_set<const Variable*> allowed;
    for (size_t i = 0; i < types.size(); ++i) {
        std::string suffix = types.size() == 1 ? "" : std::to_string(i);
        lhs.emplace_back("x" + suffix, types[i]);
        rhs.emplace_back("y" + suffix, types[i]);
        lhs_e.push_back(lhs.back());
        rhs_e.push_back(rhs.back());
        allowed.insert(lhs.back().get());
        allowed.insert(rhs.back().get());
    }
    auto result = call_user<std::vector<Expr>>(who, [&] { return combine_(lhs_e, rhs_e); });
    if (result.size() != types.size())
        TESSEL_THROW(DSLError) << who << ": combine returned " << result.size() << " value(s) for "
                               << types.size() << " input value(s)";
    auto identity = call_user<std::vector<Expr>>(who, [&] { return identity_(types); });
    bool complete = identity.size() == types.size();
    for (const Expr& e : identity) complete = complete && e.defined();
    if (!complete)
        TESSEL_THROW(DSLError) << who << " has no identity element: its identity function "
                               << "returned " << identity.size() << " value(s), not "
                               << types.size() << " defined ones";
    for (size_t i = 0; i < types.size(); ++i) {
        std::string n = std::to_string(i);
        if (!result[i].defined())
            TESSEL_THROW(DSLError) << who << ": combine returned an undefined value " << n;
        result[i] = conform(who, "combine value " + n, result[i], types[i]);
        check_closed(who, "combine value " + n, result[i], allowed);
        identity[i] = conform(who, "identity value " + n, identity[i], types[i]);
        check_closed(who, "identity value " + n, identity[i], {});
    }
    return CommReducer(name_, lhs, rhs, result, identity);
}

std::vector<Expr> Reducer::operator()(const std::vector<Expr>& sources,
                                      const std::vector<IterVar>& axis, Expr where) const {
    std::string who = "reducer '" + name_ + "'";
    if (sources.empty()) TESSEL_THROW(DSLError) << who << ": nothing to reduce";
    std::vector<Type> types;
    for (size_t i = 0; i < sources.size(); ++i) {
        const Expr& s = sources[i];
        if (!s.defined()) TESSEL_THROW(DSLError) << who << ": source " << i << " is undefined";
        if (s.type().is_handle() || !s.type().is_scalar())
            TESSEL_THROW(DSLError) << who << ": source " << i << " has type " << s.type()
                                   << "; only scalar data values can be reduced";
        types.push_back(s.type());
    }
    for (const IterVar& iv : axis) {
        if (!iv.defined()) TESSEL_THROW(DSLError) << who << ": an axis is undefined";
        if (iv.kind() != IterVarKind::Reduce)
            TESSEL_THROW(DSLError) << who << ": axis '" << iv.var().name()
                                   << "' is not a reduce axis; make it with reduce_axis()";
    }
    if (where.defined() && where.type() != Bool())
        TESSEL_THROW(DSLError) << who << ": the condition has type " << where.type()
                               << "; it must be a bool";
    if (!where.defined()) where = const_true();  // one node, shared by every output's Reduce
    CommReducer combiner = instantiate(types);
    std::vector<Expr> out;
    for (size_t i = 0; i < sources.size(); ++i)
        out.push_back(Reduce::make(combiner, sources, axis, where, static_cast<int>(i)));
    return out;
}

Expr Reducer::operator()(Expr source, const std::vector<IterVar>& axis, Expr where) const {
    return (*this)(std::vector<Expr>{std::move(source)}, axis, std::move(where))[0];
}

Reducer comm_reducer(std::string name, Reducer::FCombine combine, Reducer::FIdentity identity) {
    return Reducer(std::move(name), std::move(combine), std::move(identity));
}

namespace {
// The lowest (highest) value of a type: -inf (+inf) for floats.
Expr lowest(Type t) {
    return t.is_float() ? -inf_value(t) : min_value(t);
}
Expr highest(Type t) {
    return t.is_float() ? inf_value(t) : max_value(t);
}

using Values = std::vector<Expr>;

Reducer binary_reducer(const char* name, Expr (*op)(Expr, Expr), Expr (*identity)(Type)) {
    return comm_reducer(
        name, [op](const Values& l, const Values& r) { return Values{op(l[0], r[0])}; },
        [identity](const std::vector<Type>& t) { return Values{identity(t[0])}; });
}

Expr add(Expr a, Expr b) {
    return a + b;
}
Expr mul(Expr a, Expr b) {
    return a * b;
}
Expr max2(Expr a, Expr b) {
    return max(std::move(a), std::move(b));
}
Expr min2(Expr a, Expr b) {
    return min(std::move(a), std::move(b));
}
}  // namespace

Expr sum(Expr source, const std::vector<IterVar>& axis, Expr where) {
    return binary_reducer("sum", add, make_zero)(std::move(source), axis, std::move(where));
}
Expr prod(Expr source, const std::vector<IterVar>& axis, Expr where) {
    return binary_reducer("prod", mul, make_one)(std::move(source), axis, std::move(where));
}
Expr max(Expr source, const std::vector<IterVar>& axis, Expr where) {
    return binary_reducer("max", max2, lowest)(std::move(source), axis, std::move(where));
}
Expr min(Expr source, const std::vector<IterVar>& axis, Expr where) {
    return binary_reducer("min", min2, highest)(std::move(source), axis, std::move(where));
}

namespace {

// Significand bits (with the implicit one) and largest binary exponent of a float type.
std::pair<int, int> float_format(Type t) {
    if (t.is_bfloat()) return {8, 127};
    if (t.bits == 16) return {11, 15};
    if (t.bits == 32) return {24, 127};
    return {53, 1023};
}

// Whether every value of `from` is a value of `to` (scalar types).
bool holds_every_value(Type to, Type from) {
    if (to == from) return true;
    if (from.is_bool()) return !to.is_bool() && !to.is_handle();
    if (from.is_float()) {
        if (!to.is_float()) return false;
        auto [fm, fe] = float_format(from);
        auto [tm, te] = float_format(to);
        return tm >= fm && te >= fe;
    }
    if (!from.is_int_or_uint()) return false;
    // An integer's magnitude bits: all of them for unsigned, one fewer for signed.
    const int magnitude = from.is_uint() ? from.bits : from.bits - 1;
    if (to.is_float()) return float_format(to).first >= magnitude;
    if (to.is_uint()) return from.is_uint() && to.bits >= from.bits;
    return to.is_int() && to.bits - 1 >= magnitude;
}

// `source` as the accumulator type `accumulate`, which must hold every value of the source's.
Expr accumulated(const char* reducer, Type accumulate, Expr source) {
    if (!source.defined()) TESSEL_THROW(DSLError) << reducer << ": the source is undefined";
    const Type from = source.type().element_of();
    if (!accumulate.is_scalar() || !holds_every_value(accumulate, from))
        TESSEL_THROW(DSLError) << reducer << ": cannot accumulate " << from << " values in "
                               << accumulate << ", which does not hold every " << from
                               << " value (the accumulator must be at least as wide as the "
                                  "operands; cast the result to narrow it)";
    return cast(accumulate, std::move(source));
}

}  // namespace

Expr sum(Expr source, const std::vector<IterVar>& axis, Type accumulate, Expr where) {
    return sum(accumulated("sum", accumulate, std::move(source)), axis, std::move(where));
}
Expr prod(Expr source, const std::vector<IterVar>& axis, Type accumulate, Expr where) {
    return prod(accumulated("prod", accumulate, std::move(source)), axis, std::move(where));
}

namespace {
// argmax (want_max) or argmin over (index, value) pairs; see Operation.h for why it is
// associative and commutative, and why the identity never wins a tie.
std::vector<Expr> arg_reduce(bool want_max, Expr index, Expr value,
                             const std::vector<IterVar>& axis, Expr where) {
    const char* name = want_max ? "argmax" : "argmin";
    if (!index.defined() || !index.type().is_scalar() || !index.type().is_int_or_uint())
        TESSEL_THROW(DSLError) << name << ": the index must be a scalar integer expression, got "
                               << (index.defined() ? index.type().str() : "undefined");
    if (!value.defined() || !value.type().is_scalar() || value.type().is_bool() ||
        value.type().is_handle())
        TESSEL_THROW(DSLError) << name << ": the value must be a scalar number, got "
                               << (value.defined() ? value.type().str() : "undefined");
    auto combine = [want_max](const Values& l, const Values& r) {
        const Expr &li = l[0], &lv = l[1], &ri = r[0], &rv = r[1];
        Expr better = want_max ? rv > lv : rv < lv;
        Expr tie = rv == lv;
        if (lv.type().is_float()) {  // NaN is the best value; ties among NaNs as among equals
            Expr ln = isnan(lv), rn = isnan(rv);
            better = (rn && !ln) || better;
            tie = tie || (rn && ln);
        }
        Expr take = better || (tie && ri < li);
        return Values{select(take, ri, li), select(take, rv, lv)};
    };
    auto identity = [want_max](const std::vector<Type>& t) {
        return Values{max_value(t[0]), want_max ? lowest(t[1]) : highest(t[1])};
    };
    Reducer r = comm_reducer(name, combine, identity);
    return r({std::move(index), std::move(value)}, axis, std::move(where));
}
}  // namespace

std::vector<Expr> argmax(Expr index, Expr value, const std::vector<IterVar>& axis, Expr where) {
    return arg_reduce(true, std::move(index), std::move(value), axis, std::move(where));
}
std::vector<Expr> argmin(Expr index, Expr value, const std::vector<IterVar>& axis, Expr where) {
    return arg_reduce(false, std::move(index), std::move(value), axis, std::move(where));
}

}  // namespace tessel
