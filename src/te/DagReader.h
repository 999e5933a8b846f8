// The JSON DAG reader's class, shared by its two source files: SerializeRead.cpp (the document and
// its operations) and SerializeReadExpr.cpp (expressions). Not a public API.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessel/te/TensorDAG.h"

namespace tessel::internal {

/// Reads one document of te/Serialize.h's format. Every error is a DSLError without location;
/// dag_from_json adds path() to it.
class DagReader {
public:
    using json = nlohmann::ordered_json;

    /// The DAG of a parsed document.
    TensorDAG read(const json& doc);
    /// Where the reader was when it stopped, e.g. "ops[2].body[0].b".
    std::string path() const;

private:
    using NodeReader = Expr (DagReader::*)(const json&);
    static const std::unordered_map<std::string, NodeReader>& node_readers();

    // Appends a segment to the path; removes it again unless an exception is on its way out, so
    // that dag_from_json still sees where the reader was.
    class At {
    public:
        At(DagReader& r, std::string segment);
        ~At();
        At(const At&) = delete;
        At& operator=(const At&) = delete;

    private:
        DagReader& reader_;
        int exceptions_;
    };

    // Fields, checked.
    const json& field(const json& obj, const char* key);
    const json& array_field(const json& obj, const char* key);
    int64_t integer(const json& j, const char* what);
    int64_t integer_field(const json& obj, const char* key);
    std::string string_field(const json& obj, const char* key);
    Type dtype_field(const json& obj, const char* key);

    // Variables in scope, by number.
    void bind(int64_t id, const Var& v);
    void unbind(int64_t id) { scope_.erase(id); }
    Var declare(const json& decl);

    // The document (SerializeRead.cpp).
    void read_ops(const json& ops);
    Operation read_placeholder(const json& j);
    Operation read_compute(const json& j);
    std::vector<IterVar> read_reduce_axes(const json& j);
    std::vector<Expr> read_bodies(const json& j, const std::vector<Var>& axis_vars);
    Tensor tensor_ref(const json& j);
    std::vector<Tensor> read_inputs(const json& doc);
    std::vector<Tensor> read_outputs(const json& doc);

    // Expressions (SerializeReadExpr.cpp).
    Expr expr(const json& j);
    Expr expr_field(const json& obj, const char* key);
    std::vector<Expr> exprs(const json& obj, const char* key);
    Expr binary(const std::string& name, const json& j);
    Expr int_imm(const json& j);
    Expr uint_imm(const json& j);
    Expr float_imm(const json& j);
    Expr variable(const json& j);
    Expr cast(const json& j);
    Expr logical_not(const json& j);
    Expr select(const json& j);
    Expr ramp(const json& j);
    Expr broadcast(const json& j);
    Expr let(const json& j);
    Expr call(const json& j);
    Expr tensor_read(const json& j);
    Expr reduce(const json& j);
    std::vector<Expr> reducer_call(const json& j);

    std::vector<Operation> ops_;
    std::unordered_map<int64_t, Var> scope_;
    std::unordered_map<int64_t, IterVar> reduce_axes_;               // of the compute being read
    std::unordered_map<std::string, std::vector<Expr>> reductions_;  // its reducer calls
    std::vector<std::string> path_;
    int depth_ = 0;
    bool in_body_ = false;  // reading a compute's bodies: tensor reads and reductions allowed
};

}  // namespace tessel::internal
