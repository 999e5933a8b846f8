#include "tessel/lower/VerifyLowered.h"

#include <sstream>
#include <unordered_map>

#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

class Verifier : public IRVisitor {
public:
    using IRVisitor::visit;
    explicit Verifier(const LoweredFunc& f) : f_(f) {
        for (const Buffer& b : f.args) {
            define(b->data, b->dtype);
            for (const Expr& e : b->shape) {
                post_order_visit(e, [&](const IRNode* n) {
                    if (n->node_type == IRNodeType::Variable)
                        scope_.emplace(static_cast<const Variable*>(n), 1);
                });
            }
        }
    }

protected:
    void visit(const Variable* op) override {
        if (!scope_.count(op)) fail("variable used before its definition", Expr(op));
    }
    void visit(const TensorRead* op) override { fail("tensor read left", Expr(op)); }
    void visit(const Reduce* op) override { fail("reduction left", Expr(op)); }
    void visit(const BufferLoad* op) override { fail("BufferLoad left", Expr(op)); }
    void visit(const BufferStore* op) override { fail("BufferStore left", Stmt(op)); }
    void visit(const Call* op) override {
        if (!intrinsic_is_pure(op->op)) fail("impure call outside an Evaluate", Expr(op));
        IRVisitor::visit(op);
    }
    void visit(const Evaluate* op) override {
        const auto* call = op->value.as<Call>();
        if (call && call->op == Intrinsic::thread_allreduce) return visit_allreduce(call);
        if (call && !intrinsic_is_pure(call->op)) {
            for (const Expr& a : call->args) visit(a);
            return;
        }
        IRVisitor::visit(op);
    }
    void visit(const For* op) override {
        if (op->kind == ForKind::Vectorized || op->kind == ForKind::Unrolled)
            fail(std::string(for_kind_name(op->kind)) + " loop left", Stmt(op));
        std::optional<int64_t> n = as_const_int(op->extent);
        if (n && *n < 0) fail("loop of negative extent", Stmt(op));
        visit(op->min);
        visit(op->extent);
        scoped(op->loop_var, Type(), Stmt(op), [&] { visit(op->body); });
    }
    void visit(const LetStmt* op) override {
        visit(op->value);
        scoped(op->var, Type(), Stmt(op), [&] { visit(op->body); });
    }
    void visit(const Let* op) override {
        visit(op->value);
        if (scope_.count(op->var.get())) fail("variable bound again in its scope", Expr(op));
        define(op->var, Type());
        visit(op->body);
        undefine(op->var);
    }
    void visit(const Allocate* op) override {
        for (const Expr& e : op->extents) visit(e);
        scoped(op->buffer_var, op->dtype, Stmt(op), [&] { visit(op->body); });
    }
    void visit(const Load* op) override {
        check_access(op->buffer_var, op->type, Expr(op), Stmt());
        visit(op->index);
        visit(op->predicate);
    }
    void visit(const Store* op) override {
        check_access(op->buffer_var, op->value.type(), Expr(), Stmt(op));
        visit(op->value);
        visit(op->index);
        visit(op->predicate);
    }

private:
    // thread_allreduce binds its combiner's lhs and rhs in the results (ir/IR.h).
    void visit_allreduce(const Call* call) {
        const int64_t n = as_const_int(call->args[0]).value();
        for (size_t k = 0; k < call->args.size(); ++k) {
            const int64_t pos = static_cast<int64_t>(k) - 2;
            if (pos >= 2 * n && pos < 4 * n) continue;  // lhs, rhs
            if (pos >= 4 * n && pos < 5 * n) {
                for (int64_t v = 0; v < n; ++v) {
                    define(Var(call->args[2 + 2 * n + v].as<Variable>()), Type());
                    define(Var(call->args[2 + 3 * n + v].as<Variable>()), Type());
                }
                visit(call->args[k]);
                for (int64_t v = 0; v < n; ++v) {
                    undefine(Var(call->args[2 + 2 * n + v].as<Variable>()));
                    undefine(Var(call->args[2 + 3 * n + v].as<Variable>()));
                }
                continue;
            }
            visit(call->args[k]);
        }
    }
    template <typename F>
    void scoped(const Var& v, Type dtype, const Stmt& where, F body) {
        if (scope_.count(v.get()))
            fail("variable " + v.name() + " bound again in its scope", where);
        define(v, dtype);
        body();
        undefine(v);
    }
    void define(const Var& v, Type dtype) {
        scope_[v.get()] = 1;
        if (v.type().is_handle()) dtypes_[v.get()] = dtype;
    }
    void undefine(const Var& v) {
        scope_.erase(v.get());
        dtypes_.erase(v.get());
    }
    void check_access(const Var& buf, Type t, const Expr& e, const Stmt& s) {
        auto it = dtypes_.find(buf.get());
        if (!scope_.count(buf.get()) || it == dtypes_.end()) {
            e.defined() ? fail("access to an undefined buffer " + buf.name(), e)
                        : fail("access to an undefined buffer " + buf.name(), s);
        }
        if (it->second != t.element_of()) {
            std::ostringstream why;
            why << "access of " << t.element_of() << " to buffer " << buf.name() << " of "
                << it->second;
            e.defined() ? fail(why.str(), e) : fail(why.str(), s);
        }
    }
    template <typename Node>
    [[noreturn]] void fail(const std::string& why, const Node& node) {
        std::ostringstream os;
        os << "verify_lowered: " << why << ": " << node;
        if constexpr (std::is_same_v<Node, Expr>) os << "\n";
        os << "in function " << f_.name << ":\n" << f_.body;
        throw InternalError(os.str());
    }

    const LoweredFunc& f_;
    std::unordered_map<const Variable*, int> scope_;
    std::unordered_map<const Variable*, Type> dtypes_;
};

}  // namespace

void verify_lowered(const LoweredFunc& f) {
    Verifier(f).visit(f.body);
}

}  // namespace tessel
