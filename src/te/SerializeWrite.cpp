// Writing a tensor-expression DAG as JSON (te/Serialize.h documents the format).
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "SerializeInternal.h"
#include "tessel/te/Serialize.h"

namespace tessel {

namespace {

using json = nlohmann::ordered_json;

class DagWriter {
public:
    json write(const TensorDAG& dag);

private:
    json write_op(const Operation& op);
    json write_compute(const ComputeOpNode* c);
    json expr(const Expr& e);
    json exprs(const std::vector<Expr>& es);
    json leaf(const Expr& e);
    json reduce(const Reduce* r);
    json combiner(const CommReducer& c);
    // Numbers `v` as a new binding (until unbind) and returns its number.
    int bind(const Var& v);
    void unbind(const Var& v) { bound_.erase(v.get()); }
    int var_id(const Variable* v);

    std::unordered_map<const OperationNode*, int> op_index_;
    std::unordered_map<const Variable*, int> bound_;
    std::unordered_map<const Variable*, int> free_;
    std::unordered_map<const CommReducerNode*, json> combiners_;
    json free_vars_ = json::array();
    int next_id_ = 0;
    std::string op_name_;  // the operation being written, for errors
};

json DagWriter::write(const TensorDAG& dag) {
    json ops = json::array();
    for (const Operation& op : topo_order(dag.outputs)) {
        op_index_[op.get()] = static_cast<int>(ops.size());
        ops.push_back(write_op(op));
    }
    json inputs = json::array(), outputs = json::array();
    for (const Tensor& t : dag.inputs) inputs.push_back(op_index_.at(t.op().get()));
    for (const Tensor& t : dag.outputs)
        outputs.push_back(json::array({op_index_.at(t.op().get()), t.value_index()}));
    json doc;
    doc["format"] = internal::kDagJsonFormat;
    doc["version"] = kDagJsonVersion;
    doc["vars"] = std::move(free_vars_);
    doc["ops"] = std::move(ops);
    doc["inputs"] = std::move(inputs);
    doc["outputs"] = std::move(outputs);
    return doc;
}

json DagWriter::write_op(const Operation& op) {
    op_name_ = op->name;
    json j;
    if (const PlaceholderOpNode* p = as_placeholder(op)) {
        j["kind"] = "placeholder";
        j["name"] = p->name;
        j["dtype"] = p->dtype.str();
        j["shape"] = exprs(p->shape);
        if (p->constant) j["constant"] = true;  // absent: not constant (older DAGs too)
        return j;
    }
    const ComputeOpNode* c = as_compute(op);
    TESSEL_CHECK(c) << "operation '" << op->name << "' is neither placeholder nor compute";
    return write_compute(c);
}

json DagWriter::write_compute(const ComputeOpNode* c) {
    json j;
    j["kind"] = "compute";
    j["name"] = c->name;
    json shape = json::array(), axis = json::array(), reduce_axis = json::array();
    for (const IterVar& iv : c->axis) shape.push_back(expr(iv.dom().extent));
    for (const IterVar& iv : c->reduce_axis) {
        json r;
        r["id"] = bind(iv.var());
        r["name"] = iv.var().name();
        r["min"] = expr(iv.dom().min);
        r["extent"] = expr(iv.dom().extent);
        reduce_axis.push_back(std::move(r));
    }
    for (const IterVar& iv : c->axis) axis.push_back(bind(iv.var()));
    j["shape"] = std::move(shape);
    j["axis"] = std::move(axis);
    j["reduce_axis"] = std::move(reduce_axis);
    j["body"] = exprs(c->body);
    for (const IterVar& iv : c->axis) unbind(iv.var());
    for (const IterVar& iv : c->reduce_axis) unbind(iv.var());
    return j;
}

int DagWriter::bind(const Var& v) {
    int id = next_id_++;
    bound_[v.get()] = id;
    return id;
}

int DagWriter::var_id(const Variable* v) {
    if (auto it = bound_.find(v); it != bound_.end()) return it->second;
    if (auto it = free_.find(v); it != free_.end()) return it->second;
    int id = next_id_++;
    free_[v] = id;
    json decl;
    decl["id"] = id;
    decl["name"] = v->name;
    decl["dtype"] = v->type.str();
    free_vars_.push_back(std::move(decl));
    return id;
}

json DagWriter::exprs(const std::vector<Expr>& es) {
    json a = json::array();
    for (const Expr& e : es) a.push_back(expr(e));
    return a;
}

// Constants and variables.
json DagWriter::leaf(const Expr& e) {
    json j;
    j["node"] = node_type_name(e.node_type());
    if (const IntImm* n = e.as<IntImm>()) {
        j["dtype"] = n->type.str();
        j["value"] = n->value;
    } else if (const UIntImm* u = e.as<UIntImm>()) {
        j["dtype"] = u->type.str();
        j["value"] = u->value;
    } else if (const FloatImm* f = e.as<FloatImm>()) {
        j["dtype"] = f->type.str();
        if (std::isnan(f->value))
            j["value"] = "nan";
        else if (std::isinf(f->value))
            j["value"] = f->value > 0 ? "inf" : "-inf";
        else
            j["value"] = f->value;
    } else {
        j["id"] = var_id(e.as<Variable>());
    }
    return j;
}

json DagWriter::combiner(const CommReducer& c) {
    json j;
    j["name"] = c->name;
    json lhs = json::array(), rhs = json::array();
    for (const Var& v : c->lhs) lhs.push_back(bind(v));
    for (const Var& v : c->rhs) rhs.push_back(bind(v));
    j["lhs"] = std::move(lhs);
    j["rhs"] = std::move(rhs);
    j["result"] = exprs(c->result);
    for (const Var& v : c->lhs) unbind(v);
    for (const Var& v : c->rhs) unbind(v);
    j["identity"] = exprs(c->identity);
    return j;
}

json DagWriter::reduce(const Reduce* r) {
    json j;
    j["node"] = "Reduce";
    // The Reduces of one reducer call share their combiner: write it with the same numbers, so
    // that the reader sees one call.
    auto it = combiners_.find(r->combiner.get());
    if (it == combiners_.end())
        it = combiners_.emplace(r->combiner.get(), combiner(r->combiner)).first;
    j["combiner"] = it->second;
    j["source"] = exprs(r->source);
    json axis = json::array();
    for (const IterVar& iv : r->axis) {
        auto bound = bound_.find(iv.var().get());
        TESSEL_CHECK(bound != bound_.end()) << "a Reduce over an axis its compute does not list";
        axis.push_back(bound->second);
    }
    j["axis"] = std::move(axis);
    j["condition"] = expr(r->condition);
    j["value_index"] = r->value_index;
    return j;
}

#define TESSEL_BINARY_CASE(T)   \
    case IRNodeType::T: {       \
        const T* n = e.as<T>(); \
        j["a"] = expr(n->a);    \
        j["b"] = expr(n->b);    \
        return j;               \
    }

json DagWriter::expr(const Expr& e) {
    TESSEL_CHECK(e.defined()) << "an undefined expression in operation '" << op_name_ << "'";
    json j;
    j["node"] = node_type_name(e.node_type());
    switch (e.node_type()) {
        case IRNodeType::IntImm:
        case IRNodeType::UIntImm:
        case IRNodeType::FloatImm:
        case IRNodeType::Variable: return leaf(e);
        case IRNodeType::Cast:
            j["dtype"] = e.type().str();
            j["value"] = expr(e.as<Cast>()->value);
            return j;
            TESSEL_FOR_EACH_SERIALIZED_BINARY_NODE(TESSEL_BINARY_CASE)
        case IRNodeType::Not: j["a"] = expr(e.as<Not>()->a); return j;
        case IRNodeType::Select: {
            const Select* s = e.as<Select>();
            j["condition"] = expr(s->condition);
            j["true_value"] = expr(s->true_value);
            j["false_value"] = expr(s->false_value);
            return j;
        }
        case IRNodeType::Ramp:
            j["base"] = expr(e.as<Ramp>()->base);
            j["stride"] = expr(e.as<Ramp>()->stride);
            j["lanes"] = e.as<Ramp>()->lanes;
            return j;
        case IRNodeType::Broadcast:
            j["value"] = expr(e.as<Broadcast>()->value);
            j["lanes"] = e.as<Broadcast>()->lanes;
            return j;
        case IRNodeType::Let: {
            const Let* l = e.as<Let>();
            j["value"] = expr(l->value);
            json decl;
            decl["id"] = bind(l->var);
            decl["name"] = l->var.name();
            decl["dtype"] = l->var.type().str();
            j["var"] = std::move(decl);
            j["body"] = expr(l->body);
            unbind(l->var);
            return j;
        }
        case IRNodeType::Call: {
            const Call* c = e.as<Call>();
            if (!intrinsic_is_pure(c->op))
                TESSEL_THROW(DSLError)
                    << "dag_to_json: operation '" << op_name_ << "' calls " << intrinsic_name(c->op)
                    << ", which a tensor expression cannot hold";
            j["op"] = intrinsic_name(c->op);
            j["args"] = exprs(c->args);
            return j;
        }
        case IRNodeType::TensorRead: {
            const TensorRead* t = e.as<TensorRead>();
            auto it = op_index_.find(t->tensor.op().get());
            TESSEL_CHECK(it != op_index_.end()) << "a read of a tensor outside the DAG";
            j["tensor"] = json::array({it->second, t->tensor.value_index()});
            j["indices"] = exprs(t->indices);
            return j;
        }
        case IRNodeType::Reduce: return reduce(e.as<Reduce>());
        default:
            TESSEL_THROW(DSLError)
                << "dag_to_json: operation '" << op_name_ << "' holds a "
                << node_type_name(e.node_type()) << ", which a tensor expression cannot hold";
    }
}
#undef TESSEL_BINARY_CASE

}  // namespace

std::string dag_to_json(const TensorDAG& dag, int indent) {
    check_tensor_dag(dag, "dag_to_json");
    // Names that are not valid UTF-8 are written with U+FFFD in place of the bad bytes.
    return DagWriter().write(dag).dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string dag_to_json(const std::vector<Tensor>& outputs, int indent) {
    return dag_to_json(make_tensor_dag(outputs, "dag_to_json"), indent);
}

}  // namespace tessel
