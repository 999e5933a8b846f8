// Test helpers for pass tests: statement execution through the loop-IR interpreter over simple
// element vectors, and the comparison of a statement before and after a pass on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessel/HostArray.h"
#include "tessel/ir/ExprEval.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/lower/LoopInterpreter.h"

namespace tessel::test {

/// Memory of one buffer: element type and elements (floats in .f, integers in .i).
struct TestMemory {
    Type elem;
    std::vector<Scalar> data;
};

/// Runs statements with run_stmt (lower/LoopInterpreter.h) over memories keyed by the buffers'
/// data variables; the memories are copied into HostArrays and back around each run.
class TestExecutor {
public:
    /// Gives `data_var` the memory `mem` (replacing earlier contents).
    void set_memory(const Var& data_var, TestMemory mem) {
        mem_[data_var.get()] = {data_var, std::move(mem)};
    }
    const TestMemory& memory(const Var& data_var) const { return mem_.at(data_var.get()).second; }
    void bind_int(const Var& v, int64_t value) {
        scalars_.emplace_back(v, Value::make_int(v.type(), value));
    }

    void run(const Stmt& s) {
        std::vector<HostArray> arrays;
        arrays.reserve(mem_.size());
        std::vector<std::pair<Var, HostArray*>> buffers;
        for (auto& [key, entry] : mem_) {
            const TestMemory& m = entry.second;
            arrays.emplace_back(m.elem, std::vector<int64_t>{static_cast<int64_t>(m.data.size())});
            for (size_t i = 0; i < m.data.size(); ++i) {
                if (m.elem.is_float())
                    arrays.back().set(i, m.data[i].f);
                else
                    arrays.back().set_int(i, m.data[i].i);
            }
            buffers.emplace_back(entry.first, &arrays.back());
        }
        run_stmt(s, buffers, scalars_);
        size_t k = 0;
        for (auto& [key, entry] : mem_) {
            TestMemory& m = entry.second;
            for (size_t i = 0; i < m.data.size(); ++i) {
                if (m.elem.is_float())
                    m.data[i].f = arrays[k].get(i);
                else
                    m.data[i].i = arrays[k].get_int(i);
            }
            ++k;
        }
    }

private:
    std::unordered_map<const Variable*, std::pair<Var, TestMemory>> mem_;
    std::vector<std::pair<Var, Value>> scalars_;
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
