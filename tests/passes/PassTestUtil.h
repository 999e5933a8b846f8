// Test helpers for pass tests: a tiny statement executor (until the loop-IR interpreter lands)
// and the comparison of a statement before and after a pass on random inputs.
//
// The executor runs every loop kind serially, allocates zero-filled memory, checks every access
// against its buffer and throws RuntimeError on an out-of-bounds access or a failed assert.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessel/ir/ExprEval.h"
#include "tessel/ir/IRPrinter.h"

namespace tessel::test {

/// Memory of one buffer: element type and elements.
struct TestMemory {
    Type elem;
    std::vector<Scalar> data;
};

/// Runs statements over named memories (keyed by the buffer's data variable).
class TestExecutor {
public:
    TestExecutor() : ev_(FloatMode::Exact, callbacks()) {}

    /// Gives `data_var` the memory `mem` (replacing earlier contents).
    void set_memory(const Var& data_var, TestMemory mem) { mem_[data_var.get()] = std::move(mem); }
    const TestMemory& memory(const Var& data_var) const { return mem_.at(data_var.get()); }
    void bind_int(const Var& v, int64_t value) { ev_.bind_int(v, value); }

    void run(const Stmt& s) {
        if (!s.defined()) return;
        if (const auto* op = s.as<For>()) return run_for(op);
        if (const auto* op = s.as<LetStmt>()) {
            ev_.bind(op->var, ev_.eval(op->value));
            run(op->body);
            return ev_.unbind(op->var);
        }
        if (const auto* op = s.as<AttrStmt>()) return run(op->body);
        if (const auto* op = s.as<AssertStmt>()) {
            if (!ev_.eval(op->condition).as_bool()) throw RuntimeError(op->message);
            return;
        }
        if (const auto* op = s.as<Store>()) return run_store(op);
        if (const auto* op = s.as<Allocate>()) return run_allocate(op);
        if (const auto* op = s.as<Seq>()) {
            for (const Stmt& t : op->stmts) run(t);
            return;
        }
        if (const auto* op = s.as<IfThenElse>()) {
            return run(ev_.eval(op->condition).as_bool() ? op->then_case : op->else_case);
        }
        if (const auto* op = s.as<Evaluate>()) return (void)ev_.eval(op->value);
        throw RuntimeError(std::string("TestExecutor: cannot run ") +
                           node_type_name(s.node_type()));
    }

private:
    ExprEvalCallbacks callbacks() {
        ExprEvalCallbacks cb;
        cb.load = [this](const Load* op, const Value& index, const Value& mask) {
            Value r{op->type, std::vector<Scalar>(op->type.lanes)};
            for (int l = 0; l < index.lane_count(); ++l) {
                r.lanes[l].i = 0;
                if (op->type.is_float()) r.lanes[l].f = 0;
                if (mask.as_bool(l)) r.lanes[l] = element(op->buffer_var, index.as_int(l));
            }
            return r;
        };
        return cb;
    }

    Scalar& element(const Var& buf, int64_t i) {
        auto it = mem_.find(buf.get());
        if (it == mem_.end()) throw RuntimeError("TestExecutor: no memory for " + buf.name());
        if (i < 0 || i >= static_cast<int64_t>(it->second.data.size()))
            throw RuntimeError("TestExecutor: " + buf.name() + "[" + std::to_string(i) +
                               "] out of bounds");
        return it->second.data[i];
    }

    void run_for(const For* op) {
        int64_t lo = ev_.eval(op->min).as_int(), n = ev_.eval(op->extent).as_int();
        for (int64_t i = lo; i < lo + n; ++i) {
            ev_.bind_int(op->loop_var, i);
            run(op->body);
        }
        ev_.unbind(op->loop_var);
    }

    void run_store(const Store* op) {
        Value v = ev_.eval(op->value), idx = ev_.eval(op->index);
        Value pred = op->predicate.defined() ? ev_.eval(op->predicate)
                                             : Value::make_bool(true, idx.lane_count());
        for (int l = 0; l < idx.lane_count(); ++l)
            if (pred.as_bool(l)) element(op->buffer_var, idx.as_int(l)) = v.lanes[l];
    }

    void run_allocate(const Allocate* op) {
        int64_t n = 1;
        for (const Expr& e : op->extents) n *= ev_.eval(e).as_int();
        Scalar zero;
        zero.i = 0;
        if (op->dtype.is_float()) zero.f = 0;
        mem_[op->buffer_var.get()] = TestMemory{op->dtype, std::vector<Scalar>(n, zero)};
        run(op->body);
        mem_.erase(op->buffer_var.get());
    }

    std::unordered_map<const Variable*, TestMemory> mem_;
    ExprEvaluator ev_;
};

/// A buffer's memory with random contents: floats in [-1, 1), integers in [0, 100).
inline TestMemory random_memory(Type elem, int64_t size, std::mt19937* rng) {
    TestMemory m{elem, std::vector<Scalar>(size)};
    std::uniform_real_distribution<double> f(-1.0, 1.0);
    std::uniform_int_distribution<int64_t> i(0, 99);
    for (Scalar& s : m.data) {
        if (elem.is_float()) {
            s.f = round_to_float_type(f(*rng), elem);
        } else {
            s.i = i(*rng);
        }
    }
    return m;
}

/// A flat buffer argument for run_and_compare: its data variable, element type and size.
struct FlatArg {
    Var data;
    Type elem;
    int64_t size;
};

/// Runs `before` and `after` on the same random contents of `args` and expects every buffer to
/// end up identical (bit-exact).
inline void expect_same_results(const Stmt& before, const Stmt& after,
                                const std::vector<FlatArg>& args, unsigned seed = 1) {
    std::mt19937 rng(seed);
    TestExecutor a, b;
    for (const FlatArg& arg : args) {
        TestMemory m = random_memory(arg.elem, arg.size, &rng);
        a.set_memory(arg.data, m);
        b.set_memory(arg.data, m);
    }
    a.run(before);
    b.run(after);
    for (const FlatArg& arg : args) {
        const TestMemory &ma = a.memory(arg.data), &mb = b.memory(arg.data);
        for (size_t i = 0; i < ma.data.size(); ++i) {
            ASSERT_EQ(ma.data[i].i, mb.data[i].i)
                << arg.data.name() << "[" << i << "] differs\nbefore:\n"
                << before << "after:\n"
                << after;
        }
    }
}

}  // namespace tessel::test
