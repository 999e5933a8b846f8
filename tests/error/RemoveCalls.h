// A helper for tests/error: a lowered function with the calls of one intrinsic removed, the way
// a pass that forgot them would leave it, so that the interpreter's report of what breaks can be
// checked.
#pragma once

#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"

namespace tessel::testing {

/// Replaces every statement `op(...)` by a no-op; `removed` counts them.
class RemoveCalls : public IRMutator {
public:
    explicit RemoveCalls(Intrinsic op) : op_(op) {}
    using IRMutator::visit;
    int removed = 0;

protected:
    Stmt visit(const Evaluate* op) override {
        const Call* c = op->value.as<Call>();
        if (!c || c->op != op_) return IRMutator::visit(op);
        ++removed;
        return Evaluate::make(make_const(Int(32), 0));
    }

private:
    Intrinsic op_;
};

}  // namespace tessel::testing
