// Tensors and operations of the DSL: indexing, outputs and identity.
#include <functional>

#include "TeInternal.h"

namespace tessel {

namespace {
// One index converted to the tensor's index dtype, after the checks of Tensor::operator().
Expr check_index(const Tensor& t, size_t dim, const Expr& index, Type idx) {
    if (!index.defined())
        TESSEL_THROW(DSLError) << "tensor '" << t.name() << "': index " << dim << " is undefined";
    if (!index.type().is_scalar() || !index.type().is_int_or_uint())
        TESSEL_THROW(DSLError) << "tensor '" << t.name() << "': index " << dim << " has type "
                               << index.type() << "; indices must be scalar integers";
    std::optional<int64_t> c = as_const_int(index);
    std::optional<int64_t> extent = as_const_int(t.shape()[dim]);
    if (c && extent && (*c < 0 || *c >= *extent))
        TESSEL_THROW(DSLError) << "tensor '" << t.name() << "': index " << *c
                               << " is out of range [0, " << *extent << ") in dimension " << dim;
    if (index.type() == idx) return index;
    if (c) {
        if (*c < idx.min_int() || *c > idx.max_int())
            TESSEL_THROW(DSLError) << "tensor '" << t.name() << "': index " << *c
                                   << " in dimension " << dim << " does not fit " << idx;
        return make_const(idx, *c);
    }
    return cast(idx, index);
}
}  // namespace

Expr Tensor::operator()(const std::vector<Expr>& indices) const {
    if (!defined()) TESSEL_THROW(DSLError) << "reading an undefined tensor";
    if (indices.size() != ndim())
        TESSEL_THROW(DSLError) << "tensor '" << name() << "' has " << ndim() << " dimension"
                               << (ndim() == 1 ? "" : "s") << " but is indexed with "
                               << indices.size() << " ind" << (indices.size() == 1 ? "ex" : "ices");
    Type idx = internal::shape_index_dtype(shape());
    std::vector<Expr> converted;
    for (size_t d = 0; d < indices.size(); ++d)
        converted.push_back(check_index(*this, d, indices[d], idx));
    return TensorRead::make(*this, std::move(converted));
}

const ComputeOpNode* as_compute(const Operation& op) {
    if (!op.defined() || op->kind != OpKind::Compute) return nullptr;
    return static_cast<const ComputeOpNode*>(op.get());
}

const PlaceholderOpNode* as_placeholder(const Operation& op) {
    if (!op.defined() || op->kind != OpKind::Placeholder) return nullptr;
    return static_cast<const PlaceholderOpNode*>(op.get());
}

int op_num_outputs(const Operation& op) {
    if (const ComputeOpNode* c = as_compute(op)) return static_cast<int>(c->body.size());
    TESSEL_CHECK(as_placeholder(op)) << "op_num_outputs of an unknown operation";
    return 1;
}

std::vector<Expr> op_shape(const Operation& op) {
    if (const PlaceholderOpNode* p = as_placeholder(op)) return p->shape;
    const ComputeOpNode* c = as_compute(op);
    TESSEL_CHECK(c) << "op_shape of an unknown operation";
    std::vector<Expr> shape;
    for (const IterVar& iv : c->axis) shape.push_back(iv.dom().extent);
    return shape;
}

Tensor op_output(const Operation& op, int i) {
    if (!op.defined()) TESSEL_THROW(DSLError) << "op_output: the operation is undefined";
    int n = op_num_outputs(op);
    if (i < 0 || i >= n)
        TESSEL_THROW(DSLError) << "operation '" << op->name << "' has " << n
                               << " output(s); there is no output " << i;
    auto* t = new TensorNode();
    t->op = op;
    t->value_index = i;
    t->shape = op_shape(op);
    const ComputeOpNode* c = as_compute(op);
    t->dtype = c ? c->body[i].type() : as_placeholder(op)->dtype;
    t->name = n == 1 ? op->name : op->name + ".v" + std::to_string(i);
    return Tensor(t);
}

}  // namespace tessel
