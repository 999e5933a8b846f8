// The index dtype policy of the DSL (Operation.h, "Index dtype"): int32 unless a constant extent,
// the element count, or a symbolic extent's type needs int64.
#include <cstdint>
#include <limits>

#include "TeInternal.h"

namespace tessel::internal {

namespace {
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// A symbolic extent of this type may exceed int32.
bool wider_than_int32(Type t) { return t.bits > 32 || (t.is_uint() && t.bits == 32); }

bool is_int_constant(const Expr& e) { return e.as<IntImm>() || e.as<UIntImm>(); }

// Checks one extent and returns its constant value, if it has one.
std::optional<int64_t> check_extent(const Expr& e, size_t dim, const std::string& what) {
    if (!e.defined())
        TESSEL_THROW(DSLError) << what << ": the extent of dimension " << dim << " is undefined";
    if (!e.type().is_scalar() || !e.type().is_int_or_uint())
        TESSEL_THROW(DSLError) << what << ": the extent of dimension " << dim << " has type "
                               << e.type() << "; extents must be scalar integers";
    if (!is_int_constant(e)) return std::nullopt;
    std::optional<int64_t> v = as_const_int(e);
    if (!v)
        TESSEL_THROW(DSLError) << what << ": the extent of dimension " << dim
                               << " does not fit int64";
    if (*v <= 0)
        TESSEL_THROW(DSLError) << what << ": the extent of dimension " << dim << " is " << *v
                               << "; extents must be positive";
    return v;
}
}  // namespace

Var make_axis_var(const std::string& name, Type t, IterVarKind kind) {
    return Var(static_cast<const Variable*>(new AxisVariable(name, t, kind)));
}

std::optional<IterVarKind> axis_var_kind(const Variable* v) {
    if (auto* a = dynamic_cast<const AxisVariable*>(v)) return a->kind;
    return std::nullopt;
}

std::vector<Expr> normalize_shape(const std::vector<Expr>& shape, const std::string& what) {
    bool wide = false;
    int64_t count = 1;  // saturates just above int32's range
    std::vector<std::optional<int64_t>> constants;
    for (size_t d = 0; d < shape.size(); ++d) {
        std::optional<int64_t> v = check_extent(shape[d], d, what);
        constants.push_back(v);
        if (!v) {
            wide = wide || wider_than_int32(shape[d].type());
            continue;
        }
        wide = wide || *v > kInt32Max;
        count = (*v > kInt32Max || count * *v > kInt32Max) ? kInt32Max + 1 : count * *v;
    }
    wide = wide || count > kInt32Max;
    Type idx = wide ? Int(64) : Int(32);
    std::vector<Expr> out;
    for (size_t d = 0; d < shape.size(); ++d) {
        out.push_back(constants[d] ? make_const(idx, *constants[d]) : cast(idx, shape[d]));
    }
    return out;
}

Type shape_index_dtype(const std::vector<Expr>& shape) {
    return shape.empty() ? Int(32) : shape[0].type();
}

}  // namespace tessel::internal
