// Declaring tensors: placeholder, reduce_axis, compute.
#include <limits>

#include "TeInternal.h"

namespace tessel {

namespace {
// One output per body, for a new operation.
std::vector<Tensor> outputs_of(const Operation& op) {
    std::vector<Tensor> out;
    for (int i = 0; i < op_num_outputs(op); ++i) out.push_back(op_output(op, i));
    return out;
}

// Checks one end of a reduce axis domain; returns its constant value if it has one.
std::optional<int64_t> check_bound(const Expr& e, const char* which, const std::string& name) {
    if (!e.defined())
        TESSEL_THROW(DSLError) << "reduce_axis '" << name << "': the " << which << " is undefined";
    if (!e.type().is_scalar() || !e.type().is_int_or_uint())
        TESSEL_THROW(DSLError) << "reduce_axis '" << name << "': the " << which << " has type "
                               << e.type() << "; it must be a scalar integer";
    if (!e.as<IntImm>() && !e.as<UIntImm>()) return std::nullopt;
    std::optional<int64_t> v = as_const_int(e);
    if (!v)
        TESSEL_THROW(DSLError) << "reduce_axis '" << name << "': the " << which
                               << " does not fit int64";
    return v;
}

// Calls the user's function; DSLErrors it raises (mismatched dtypes, bad indices ...) are
// re-thrown naming the compute, so every error says which tensor was being declared.
std::vector<Expr> call_compute_function(const FComputeMulti& f, const std::vector<Var>& vars,
                                        const std::string& name) {
    std::string prefix = "compute '" + name + "'";
    try {
        return f(vars);
    } catch (const DSLError& e) {
        std::string message = e.what();
        if (message.rfind(prefix, 0) == 0) throw;
        TESSEL_THROW(DSLError) << prefix << ": " << message;
    }
}
}  // namespace

Tensor placeholder(const std::vector<Expr>& shape, Type dtype, const std::string& name,
                   bool constant) {
    std::string what = "placeholder '" + name + "'";
    if (!dtype.is_scalar() || dtype.is_handle())
        TESSEL_THROW(DSLError) << what << ": element type " << dtype
                               << " is not a scalar data type";
    std::vector<Expr> extents = internal::normalize_shape(shape, what);
    Operation op(new PlaceholderOpNode(name, std::move(extents), dtype, constant));
    return op_output(op, 0);
}

IterVar reduce_axis(const Range& dom, const std::string& name) {
    std::optional<int64_t> lo = check_bound(dom.min, "min", name);
    std::optional<int64_t> ext = check_bound(dom.extent, "extent", name);
    if (ext && *ext <= 0)
        TESSEL_THROW(DSLError) << "reduce_axis '" << name << "': the extent is " << *ext
                               << "; extents must be positive";
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
    auto wide_type = [](Type t) { return t.bits > 32 || (t.is_uint() && t.bits == 32); };
    bool wide = (lo ? (*lo < kMin || *lo > kMax) : wide_type(dom.min.type())) ||
                (ext ? *ext > kMax : wide_type(dom.extent.type())) ||
                (lo && ext && *lo + *ext - 1 > kMax);
    Type idx = wide ? Int(64) : Int(32);
    Expr min = lo ? make_const(idx, *lo) : cast(idx, dom.min);
    Expr extent = ext ? make_const(idx, *ext) : cast(idx, dom.extent);
    Var v = internal::make_axis_var(name, idx, IterVarKind::Reduce);
    return IterVar(v, Range(min, extent), IterVarKind::Reduce);
}

std::vector<Tensor> compute_multi(const std::vector<Expr>& shape, const FComputeMulti& f,
                                  const std::string& name) {
    std::vector<Expr> extents = internal::normalize_shape(shape, "compute '" + name + "'");
    Type idx = internal::shape_index_dtype(extents);
    std::vector<IterVar> axis;
    std::vector<Var> vars;
    for (size_t d = 0; d < extents.size(); ++d) {
        Var v = internal::make_axis_var("i" + std::to_string(d), idx, IterVarKind::DataPar);
        vars.push_back(v);
        axis.emplace_back(v, Range(make_zero(idx), extents[d]), IterVarKind::DataPar);
    }
    if (!f) TESSEL_THROW(DSLError) << "compute '" << name << "': no compute function";
    std::vector<Expr> body = call_compute_function(f, vars, name);
    std::vector<IterVar> reduce = internal::verify_compute_body(name, axis, body);
    Operation op(new ComputeOpNode(name, std::move(axis), std::move(reduce), std::move(body)));
    return outputs_of(op);
}

Tensor compute(const std::vector<Expr>& shape, const FCompute& f, const std::string& name) {
    if (!f) TESSEL_THROW(DSLError) << "compute '" << name << "': no compute function";
    std::vector<Tensor> out = compute_multi(
        shape, [&f](const std::vector<Var>& v) { return std::vector<Expr>{f(v)}; }, name);
    return out[0];
}

}  // namespace tessel
