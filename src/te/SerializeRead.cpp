// Reading a tensor-expression DAG from JSON: the document and its operations (te/Serialize.h
// documents the format and the errors; SerializeReadExpr.cpp reads expressions).
//
// The DAG is rebuilt through the DSL (placeholder, reduce_axis, compute_multi, Reducer), so what
// comes back passed the same checks as a DAG declared by hand.
#include <algorithm>
#include <exception>
#include <limits>

#include "DagReader.h"
#include "SerializeInternal.h"
#include "support/JsonDepth.h"
#include "support/JsonFields.h"
#include "tessel/te/Serialize.h"

namespace tessel {
namespace internal {

DagReader::At::At(DagReader& r, std::string segment)
    : reader_(r), exceptions_(std::uncaught_exceptions()) {
    reader_.path_.push_back(std::move(segment));
}

DagReader::At::~At() {
    if (std::uncaught_exceptions() == exceptions_) reader_.path_.pop_back();
}

std::string DagReader::path() const {
    std::string p;
    for (const std::string& s : path_) p += (p.empty() || s[0] == '[' ? "" : ".") + s;
    return p;
}

namespace {

// The DAG reader's wording of a field problem (tests check it); dag_from_json adds the path.
[[noreturn]] void bad_dag_field(const FieldProblem& p) {
    using K = FieldProblem::Kind;
    std::string what = p.field ? "field '" + p.key + "'" : p.key;
    switch (p.kind) {
        case K::NotAnObject:
            TESSEL_THROW(DSLError)
                << "expected an object with field '" << p.key << "', got " << p.type_name;
        case K::Missing: TESSEL_THROW(DSLError) << "missing field '" << p.key << "'";
        case K::OutOfRange:  // an integer beyond int64
        case K::WrongType:
            if (p.kind == K::OutOfRange || p.expected == JsonType::Integer)
                TESSEL_THROW(DSLError)
                    << what << " has the wrong type: expected an integer (int64), got " << p.value;
            TESSEL_THROW(DSLError) << what << " has the wrong type: expected "
                                   << json_type_words(p.expected) << ", got " << p.type_name;
        default: TESSEL_THROW(DSLError) << describe(p);
    }
}

// A reader of one object of the document. bad_dag_field throws: a read that returns has
// succeeded.
BasicJsonFields<DagReader::json> fields(const DagReader::json& obj) {
    return BasicJsonFields<DagReader::json>(obj, "", bad_dag_field);
}

constexpr int64_t kMinInt64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

}  // namespace

const DagReader::json& DagReader::field(const json& obj, const char* key) {
    return *fields(obj).value(key, kRequired);
}

const DagReader::json& DagReader::array_field(const json& obj, const char* key) {
    return *fields(obj).array(key, kRequired);
}

int64_t DagReader::integer(const json& j, const char* what) {
    int64_t v = 0;
    fields(j).integer_item(j, what, v, kMinInt64, kMaxInt64);
    return v;
}

int64_t DagReader::integer_field(const json& obj, const char* key) {
    int64_t v = 0;
    fields(obj).integer(key, v, kMinInt64, kMaxInt64, kRequired);
    return v;
}

std::string DagReader::string_field(const json& obj, const char* key) {
    std::string s;
    fields(obj).text(key, s, kRequired);
    return s;
}

Type DagReader::dtype_field(const json& obj, const char* key) {
    return Type::parse(string_field(obj, key));
}

void DagReader::bind(int64_t id, const Var& v) {
    if (!scope_.emplace(id, v).second)
        TESSEL_THROW(DSLError) << "variable " << id << " is declared twice";
}

Var DagReader::declare(const json& decl) {
    Type t = dtype_field(decl, "dtype");
    if (!t.is_scalar() || t.is_handle())
        TESSEL_THROW(DSLError) << "variable '" << string_field(decl, "name") << "' has type " << t
                               << "; variables of a tensor expression are scalar data values";
    Var v(string_field(decl, "name"), t);
    bind(integer_field(decl, "id"), v);
    return v;
}

TensorDAG DagReader::read(const json& doc) {
    if (!doc.is_object())
        TESSEL_THROW(DSLError) << "expected a JSON object {\"format\": \"" << kDagJsonFormat
                               << "\", ...}, got " << doc.type_name();
    if (string_field(doc, "format") != kDagJsonFormat)
        TESSEL_THROW(DSLError) << "field 'format' is \"" << string_field(doc, "format")
                               << "\", not \"" << kDagJsonFormat << "\"";
    int64_t version = integer_field(doc, "version");
    if (version != kDagJsonVersion)
        TESSEL_THROW(DSLError) << "unsupported format version " << version
                               << " (this build reads version " << kDagJsonVersion << ")";
    const json& vars = array_field(doc, "vars");
    for (size_t i = 0; i < vars.size(); ++i) {
        At at(*this, indexed("vars", i));
        declare(vars[i]);
    }
    read_ops(array_field(doc, "ops"));
    TensorDAG dag{read_inputs(doc), read_outputs(doc)};
    check_tensor_dag(dag, "the document's inputs and outputs");
    return dag;
}

void DagReader::read_ops(const json& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
        At at(*this, indexed("ops", i));
        std::string kind = string_field(ops[i], "kind");
        if (kind == "placeholder")
            ops_.push_back(read_placeholder(ops[i]));
        else if (kind == "compute")
            ops_.push_back(read_compute(ops[i]));
        else
            TESSEL_THROW(DSLError)
                << "unknown operation kind '" << kind << "' (known: placeholder, compute)";
    }
}

Operation DagReader::read_placeholder(const json& j) {
    bool constant = false;  // absent in DAGs written before constant operands
    fields(j).boolean("constant", constant);
    return placeholder(exprs(j, "shape"), dtype_field(j, "dtype"), string_field(j, "name"),
                       constant)
        .op();
}

std::vector<IterVar> DagReader::read_reduce_axes(const json& j) {
    const json& axes = array_field(j, "reduce_axis");
    std::vector<IterVar> out;
    for (size_t i = 0; i < axes.size(); ++i) {
        At at(*this, indexed("reduce_axis", i));
        Range dom(expr_field(axes[i], "min"), expr_field(axes[i], "extent"));
        IterVar iv = reduce_axis(dom, string_field(axes[i], "name"));
        int64_t id = integer_field(axes[i], "id");
        bind(id, iv.var());
        reduce_axes_[id] = iv;
        out.push_back(iv);
    }
    return out;
}

Operation DagReader::read_compute(const json& j) {
    std::vector<Expr> shape = exprs(j, "shape");
    const json& axis = array_field(j, "axis");
    if (axis.size() != shape.size())
        TESSEL_THROW(DSLError) << "field 'axis' lists " << axis.size() << " variables for a "
                               << shape.size() << "-D shape";
    reduce_axes_.clear();
    reductions_.clear();
    std::vector<IterVar> reduce = read_reduce_axes(j);
    std::vector<Tensor> out = compute_multi(
        shape, [&](const std::vector<Var>& vars) { return read_bodies(j, vars); },
        string_field(j, "name"));
    for (const auto& [id, iv] : reduce_axes_) unbind(id);
    reduce_axes_.clear();
    return out[0].op();
}

std::vector<Expr> DagReader::read_bodies(const json& j, const std::vector<Var>& axis_vars) {
    const json& axis = array_field(j, "axis");
    std::vector<int64_t> ids;
    for (size_t d = 0; d < axis.size(); ++d) {
        At at(*this, indexed("axis", d));
        ids.push_back(integer(axis[d], "an axis"));
        bind(ids.back(), axis_vars[d]);
    }
    in_body_ = true;
    std::vector<Expr> bodies = exprs(j, "body");
    in_body_ = false;
    for (int64_t id : ids) unbind(id);
    return bodies;
}

Tensor DagReader::tensor_ref(const json& j) {
    if (!j.is_array() || j.size() != 2)
        TESSEL_THROW(DSLError) << "expected a tensor as [operation index, value index], got "
                               << j.dump();
    int64_t op = integer(j[0], "the operation index");
    if (op < 0 || op >= static_cast<int64_t>(ops_.size()))
        TESSEL_THROW(DSLError) << "operation index " << op << " refers to no earlier operation ("
                               << ops_.size() << " read so far)";
    int64_t value = integer(j[1], "the value index");
    if (value < 0 || value >= op_num_outputs(ops_[op]))
        TESSEL_THROW(DSLError) << "operation '" << ops_[op]->name << "' has no output " << value;
    return op_output(ops_[op], static_cast<int>(value));
}

std::vector<Tensor> DagReader::read_inputs(const json& doc) {
    const json& inputs = array_field(doc, "inputs");
    std::vector<Tensor> out;
    for (size_t i = 0; i < inputs.size(); ++i) {
        At at(*this, indexed("inputs", i));
        out.push_back(tensor_ref(json::array({inputs[i], 0})));
    }
    return out;
}

std::vector<Tensor> DagReader::read_outputs(const json& doc) {
    const json& outputs = array_field(doc, "outputs");
    std::vector<Tensor> out;
    for (size_t i = 0; i < outputs.size(); ++i) {
        At at(*this, indexed("outputs", i));
        out.push_back(tensor_ref(outputs[i]));
    }
    return out;
}

}  // namespace internal

TensorDAG dag_from_json(const std::string& text) {
    using json = internal::DagReader::json;
    // An expression level takes at most two levels of JSON (a node object and an argument list).
    constexpr int kMaxNesting = 2 * kMaxJsonExprDepth + 16;
    // nlohmann's parser recurses on deep documents: the depth is checked before parsing.
    if (internal::json_nesting_depth(text, kMaxNesting) > kMaxNesting)
        TESSEL_THROW(DSLError) << "dag_from_json: the JSON is nested deeper than " << kMaxNesting
                               << " levels (expressions may nest " << kMaxJsonExprDepth << " deep)";
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        TESSEL_THROW(DSLError) << "dag_from_json: malformed JSON: " << e.what();
    }
    internal::DagReader reader;
    std::string message;
    try {
        return reader.read(doc);
    } catch (const DSLError& e) {
        message = e.what();
    } catch (const json::exception& e) {  // a check missed above: still the document's fault
        message = e.what();
    }
    std::string where = reader.path();
    TESSEL_THROW(DSLError) << "dag_from_json: " << (where.empty() ? "" : "at " + where + ": ")
                           << message;
}

}  // namespace tessel
