// Helpers for the schedule correctness tests: lower a schedule, run it in the loop-IR interpreter
// on random inputs and compare every output with the reference interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/Builders.h"
#include "tessel/HostArray.h"
#include "tessel/Tolerance.h"
#include "tessel/driver/Build.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/LoopInterpreter.h"
#include "tessel/lower/Lower.h"
#include "tessel/lower/ScheduleOps.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/schedule/Schedule.h"
#include "tessel/te/Operation.h"
#include "tessel/te/ReferenceInterpreter.h"

namespace tessel::testing {

/// The constant shape of `t` (fails the test if an extent is symbolic).
inline std::vector<int64_t> const_shape(const Tensor& t) {
    std::vector<int64_t> shape;
    for (const Expr& e : t.shape()) {
        auto c = as_const_int(e);
        EXPECT_TRUE(c.has_value()) << "tensor " << t.name() << " has a symbolic extent";
        shape.push_back(c ? *c : 1);
    }
    return shape;
}

/// The leaf extents of stage `stage` after Schedule::infer_extents(), as constants (-1 where
/// an extent is symbolic).
inline std::vector<int64_t> inferred_extents(const Schedule& s, int stage) {
    std::vector<int64_t> result;
    std::vector<std::vector<Expr>> all = s.infer_extents();  // outlives the loop
    for (const Expr& e : all[stage]) result.push_back(as_const_int(e).value_or(-1));
    return result;
}

/// The placeholders of the schedule's DAG, in stage order.
inline std::vector<Tensor> placeholders_of(const Schedule& s) {
    std::vector<Tensor> result;
    for (const Stage& st : s.stages())
        if (as_placeholder(st.op)) result.push_back(op_output(st.op, 0));
    return result;
}

/// The runtime type of a tessel type (bool as one byte).
inline DataType to_runtime(Type t) {
    if (t.is_bool()) return boolean();
    auto code = t.is_int()      ? DataTypeCode::Int
                : t.is_uint()   ? DataTypeCode::UInt
                : t.is_bfloat() ? DataTypeCode::BFloat
                                : DataTypeCode::Float;
    return {code, t.bits, 1};
}

/// An NDArray viewing `a`'s storage (which must outlive it).
inline NDArray view_of(HostArray& a) {
    return NDArray::from_external(a.data(), a.shape(), to_runtime(a.dtype()), cpu(), nullptr);
}

/// The constant shape of a lowered function's argument buffer.
inline std::vector<int64_t> buffer_shape(const Buffer& b) {
    std::vector<int64_t> shape;
    for (const Expr& e : b.shape()) shape.push_back(as_const_int(e).value());
    return shape;
}

/// A schedule that pre-transforms weights (Schedule::pre_transform): runs `transform` (its
/// pre-transform function; the loop interpreter's when `jit` is null, else the module's kernel)
/// on the weights among `arrays` (in `args`' order) into `packed`, and returns the kernel's
/// arrays: the transformed weights in their weights' places.
inline std::vector<HostArray*> with_transformed_weights(const LoweredFunc& transform,
                                                        const std::vector<Tensor>& args,
                                                        std::vector<HostArray*> arrays,
                                                        std::vector<HostArray>& packed,
                                                        const Module* jit = nullptr) {
    const size_t n = transform.args.size() / 2;
    packed.clear();
    packed.reserve(n);
    std::vector<HostArray*> call;
    for (size_t k = 0; k < n; ++k) {
        size_t i = 0;
        while (i < args.size() && args[i].name() != transform.args[k].name()) ++i;
        call.push_back(arrays.at(i));
    }
    for (size_t k = 0; k < n; ++k) {
        const Buffer& b = transform.args[n + k];
        packed.emplace_back(b.dtype(), buffer_shape(b));
        call.push_back(&packed.back());
    }
    if (jit) {
        std::vector<NDArray> views;
        for (HostArray* a : call) views.push_back(view_of(*a));
        jit->get(transform.name)(views);
    } else {
        run_lowered(transform, call);
    }
    for (size_t k = 0; k < n; ++k)
        for (size_t i = 0; i < args.size(); ++i)
            if (args[i].name() == transform.args[k].name()) arrays[i] = &packed[k];
    return arrays;
}

/// Builds `s` over `args` with the LLVM backend and runs it on `arrays` (inputs already filled),
/// after its pre-transform function when it has one; adds a test failure and returns false if
/// building or running throws.
inline bool run_jit(const Schedule& s, const std::vector<Tensor>& args,
                    std::vector<HostArray>& arrays, const std::string& ir,
                    const std::string& target = "llvm") {
    try {
        Module m = build(s, args, target);
        std::vector<HostArray*> ptrs;
        for (HostArray& a : arrays) ptrs.push_back(&a);
        std::vector<HostArray> packed;
        if (has_pre_transform(s))
            ptrs = with_transformed_weights(lower_pre_transform(s, args, "main_pre_transform"),
                                            args, ptrs, packed, &m);
        std::vector<NDArray> views;
        for (HostArray* a : ptrs) views.push_back(view_of(*a));
        m.get("main")(views);
        return true;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "JIT (" << target << ") failed: " << e.what() << "\n" << ir;
        return false;
    }
}

/// Whether a stage of `s` binds a loop to blockIdx/threadIdx (the schedule is for a GPU).
inline bool has_thread_bindings(const Schedule& s) {
    for (const Stage& st : s.stages())
        for (int id : st.attach == AttachKind::Inlined ? std::vector<int>{} : st.leaf)
            if (st.iters[id].annotation >= IterAnnotation::BlockX) return true;
    return false;
}

/// Lowers `s` over (placeholders, outputs), runs it on random inputs and compares each output
/// with the reference interpreter; `reduction_length` sets the float tolerance. Returns the loop
/// nests as schedule_ops builds them (before partitioning, vectorization and unrolling), printed,
/// for extra checks on the schedule's structure. With the LLVM backend built in, the schedule also
/// runs JIT-compiled (build(), codegen/Build.h) and is compared with the reference the same way;
/// a schedule with thread bindings runs as an SPMD program in the loop interpreter only, and the
/// LLVM backend must refuse it with a CompileError.
inline std::string expect_matches_reference(const Schedule& s, int64_t reduction_length = 1,
                                            uint64_t seed = 1) {
    std::vector<Tensor> inputs = placeholders_of(s);
    std::vector<Tensor> args = inputs;
    for (const Tensor& t : s.outputs()) args.push_back(t);
    LoweredFunc f = lower(s, args);
    std::string ir = to_string(schedule_ops(s, args, "main"));
    std::vector<HostArray> arrays;
    std::vector<std::pair<Tensor, HostArray>> ref_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
        arrays.push_back(HostArray::random(inputs[i].dtype(), const_shape(inputs[i]), seed + i));
        ref_inputs.emplace_back(inputs[i], arrays.back());
    }
    for (const Tensor& t : s.outputs()) arrays.emplace_back(t.dtype(), const_shape(t));
    std::vector<HostArray*> ptrs;
    for (HostArray& a : arrays) ptrs.push_back(&a);
    std::vector<HostArray> packed;
    try {
        if (has_pre_transform(s))
            ptrs = with_transformed_weights(lower_pre_transform(s, args, "main_pre_transform"),
                                            args, ptrs, packed);
        run_lowered(f, ptrs);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "run_lowered failed: " << e.what() << "\n" << ir;
        return ir;
    }
    std::vector<HostArray> ref = evaluate_reference(s.outputs(), ref_inputs);
    for (size_t o = 0; o < ref.size(); ++o) {
        CompareResult r =
            compare_to_reference(arrays[inputs.size() + o], ref[o],
                                 tolerance_for(s.outputs()[o].dtype(), reduction_length));
        EXPECT_TRUE(r.ok) << "output " << s.outputs()[o].name() << ": " << r.message() << "\n"
                          << ir;
    }
    if (!has_llvm_backend()) return ir;
    if (has_thread_bindings(s)) {  // a GPU schedule: the CPU backend must refuse it clearly
        try {
            build(s, args, "llvm");
            ADD_FAILURE() << "the llvm backend accepted thread-bound IR\n" << ir;
        } catch (const CompileError& e) {
            EXPECT_NE(std::string(e.what()).find("GPU target"), std::string::npos) << e.what();
        }
        return ir;
    }
    for (size_t o = 0; o < ref.size(); ++o)
        arrays[inputs.size() + o] = HostArray(s.outputs()[o].dtype(), const_shape(s.outputs()[o]));
    if (!run_jit(s, args, arrays, ir)) return ir;
    for (size_t o = 0; o < ref.size(); ++o) {
        CompareResult r =
            compare_to_reference(arrays[inputs.size() + o], ref[o],
                                 tolerance_for(s.outputs()[o].dtype(), reduction_length));
        EXPECT_TRUE(r.ok) << "JIT output " << s.outputs()[o].name() << ": " << r.message() << "\n"
                          << ir;
    }
    return ir;
}

/// NCHW 3x3 convolution with zero padding through if_then_else; the input is X(n, c, h, w).
inline Tensor conv2d_3x3(const Tensor& X, const Tensor& W, int pad, const std::string& name) {
    const std::vector<Expr>& xs = X.shape();
    const std::vector<Expr>& ws = W.shape();
    int h = static_cast<int>(*as_const_int(xs[2])), w = static_cast<int>(*as_const_int(xs[3]));
    int c = static_cast<int>(*as_const_int(xs[1]));
    IterVar rc = reduce_axis({0, c}, "rc"), ry = reduce_axis({0, 3}, "ry");
    IterVar rx = reduce_axis({0, 3}, "rx");
    return compute(
        {xs[0], ws[0], h + 2 * pad - 2, w + 2 * pad - 2},
        [&](Var b, Var k, Var y, Var x) {
            Expr iy = y + ry.var() - pad, ix = x + rx.var() - pad;
            Expr inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            Expr v = if_then_else(inside, X(b, rc, iy, ix), make_zero(Float(32)));
            return sum(v * W(k, rc, ry, rx), {rc, ry, rx});
        },
        name);
}

}  // namespace tessel::testing
