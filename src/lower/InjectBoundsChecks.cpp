#include "tessel/lower/InjectBoundsChecks.h"

#include <sstream>

#include "PassUtil.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel {

namespace {

using SizeMap = std::unordered_map<const Variable*, Expr>;

/// 0 <= i < size for a scalar index.
Expr scalar_in_bounds(const Expr& i, const Expr& size) {
    Type t = internal::wider_index_type(i.type(), size.type());
    Expr ii = internal::cast_index(t, i), n = internal::cast_index(t, size);
    return And::make(GE::make(ii, make_zero(t)), LT::make(ii, n));
}

/// Every lane of `index` lies in [0, size), or undefined if that cannot be expressed.
Expr in_bounds(const Expr& index, const Expr& size) {
    std::vector<Expr> lanes;
    if (index.type().is_scalar()) {
        lanes = {index};
    } else if (const auto* r = index.as<Ramp>()) {
        lanes = {internal::lane_of(index, 0), internal::lane_of(index, r->lanes - 1)};
    } else if (const auto* b = index.as<Broadcast>()) {
        lanes = {b->value};
    } else {
        for (int k = 0; k < index.type().lanes; ++k) lanes.push_back(internal::lane_of(index, k));
    }
    Expr cond;
    for (const Expr& l : lanes) {
        if (!l.defined()) return Expr();
        Expr c = scalar_in_bounds(l, size);
        cond = cond.defined() ? And::make(cond, c) : c;
    }
    return cond;
}

/// Builds the asserts for the accesses in one statement's own expressions.
class CheckCollector : public IRVisitor {
public:
    using IRVisitor::visit;
    explicit CheckCollector(const SizeMap& sizes) : sizes_(sizes) {}
    std::vector<Stmt> asserts;

    /// Adds the check of an access to `buffer` at `index`.
    void check(const Var& buffer, const Expr& index) {
        auto it = sizes_.find(buffer.get());
        if (it == sizes_.end()) return;
        Expr cond = in_bounds(index, it->second);
        if (!cond.defined()) return;
        for (size_t k = context_.size(); k-- > 0;) {
            const Context& c = context_[k];
            if (c.let_var.defined()) {
                if (uses_var(cond, c.let_var)) cond = Let::make(c.let_var, c.let_value, cond);
            } else {
                cond = Or::make(Not::make(c.guard), cond);
            }
        }
        std::ostringstream msg;
        msg << "bounds check: " << buffer.name() << "[" << index << "] outside [0, " << it->second
            << ")";
        asserts.push_back(AssertStmt::make(cond, msg.str()));
    }

protected:
    void visit(const Load* op) override {
        IRVisitor::visit(op);
        if (!op->predicate.defined() && vector_guards_ == 0) check(op->buffer_var, op->index);
    }
    void visit(const Let* op) override {
        visit(op->value);
        context_.push_back({Expr(), op->var, op->value});
        visit(op->body);
        context_.pop_back();
    }
    void visit(const Call* op) override {
        if (op->op == Intrinsic::fragment_store && op->args.size() == 7) {
            // A store at its tensor's edge: its tile's origin D is checked; D', the next row,
            // may lie past the end (ir/IR.h), and the limits keep the elements inside.
            for (size_t a = 0; a < op->args.size(); ++a)
                if (a != 2) visit(op->args[a]);
            return;
        }
        if (op->op != Intrinsic::if_then_else) return IRVisitor::visit(op);
        visit(op->args[0]);
        if (op->args[0].type().is_vector()) {
            ++vector_guards_;
            visit(op->args[1]);
            visit(op->args[2]);
            --vector_guards_;
            return;
        }
        context_.push_back({op->args[0], Var(), Expr()});
        visit(op->args[1]);
        context_.back().guard = Not::make(op->args[0]);
        visit(op->args[2]);
        context_.pop_back();
    }

private:
    /// An enclosing if_then_else branch (guard) or Let binding.
    struct Context {
        Expr guard;
        Var let_var;
        Expr let_value;
    };
    const SizeMap& sizes_;
    std::vector<Context> context_;
    int vector_guards_ = 0;
};

class BoundsCheckInjector : public IRMutator {
public:
    using IRMutator::visit;
    explicit BoundsCheckInjector(SizeMap sizes) : sizes_(std::move(sizes)) {}

protected:
    Stmt visit(const Store* op) override {
        CheckCollector c(sizes_);
        c.visit(op->value);
        c.visit(op->index);
        c.visit(op->predicate);
        if (!op->predicate.defined()) c.check(op->buffer_var, op->index);
        return with_checks(c, op);
    }
    Stmt visit(const Evaluate* op) override { return checked(op, {op->value}); }
    Stmt visit(const AssertStmt* op) override { return checked(op, {op->condition}); }
    Stmt visit(const LetStmt* op) override { return checked(op, {op->value}); }
    Stmt visit(const IfThenElse* op) override { return checked(op, {op->condition}); }
    Stmt visit(const For* op) override { return checked(op, {op->min, op->extent}); }
    Stmt visit(const AttrStmt* op) override { return checked(op, {op->value}); }
    Stmt visit(const Allocate* op) override {
        CheckCollector c(sizes_);
        for (const Expr& e : op->extents) c.visit(e);
        Type t = op->extents.empty() ? Int(32) : op->extents[0].type();
        for (const Expr& e : op->extents) t = internal::wider_index_type(t, e.type());
        sizes_[op->buffer_var.get()] = internal::fold_product(op->extents, t);
        Stmt s = IRMutator::visit(op);
        sizes_.erase(op->buffer_var.get());
        return c.asserts.empty() ? s : Seq::make(with(c.asserts, s));
    }

private:
    template <typename T>
    Stmt checked(const T* op, std::initializer_list<Expr> exprs) {
        CheckCollector c(sizes_);
        for (const Expr& e : exprs) c.visit(e);
        return with_checks(c, op);
    }
    template <typename T>
    Stmt with_checks(const CheckCollector& c, const T* op) {
        Stmt s = IRMutator::visit(op);
        return c.asserts.empty() ? s : Seq::make(with(c.asserts, s));
    }
    static std::vector<Stmt> with(std::vector<Stmt> asserts, const Stmt& s) {
        asserts.push_back(s);
        return asserts;
    }
    SizeMap sizes_;
};

}  // namespace

LoweredFunc inject_bounds_checks(const LoweredFunc& f) {
    SizeMap sizes;
    for (const Buffer& b : f.args) {
        Type t = b->shape.empty() ? Int(32) : b->shape[0].type();
        for (const Expr& e : b->shape) t = internal::wider_index_type(t, e.type());
        sizes[b->data.get()] = internal::fold_product(b->shape, t);
    }
    LoweredFunc out = f;
    out.body = BoundsCheckInjector(std::move(sizes)).mutate(f.body);
    return out;
}

}  // namespace tessel
