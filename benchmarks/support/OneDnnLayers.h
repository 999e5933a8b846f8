// ResNet-50's layers timed against oneDNN in one harness (benchmarks tune_network_cpu and
// network_cpu): random inputs for a task's arguments, oneDNN's forward-inference primitive of an
// op.conv2d_nchw, op.conv2d_nchwc (or _winograd) or op.dense layer (format any, reorders outside
// the timing, as a framework keeps its tensors), the two timed alternately, and tessel's output
// checked against oneDNN's. A layer whose weight is constant runs tessel's pre_transform once
// before the timing, as oneDNN's weight reorder runs once; both one-time costs are measured too.
// Link oneDNN (libdnnl-dev).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "support/BenchUtil.h"
#include "tessel/auto_schedule/task/SearchTask.h"
#include "tessel/auto_schedule/tuner/Job.h"
#include "tessel/driver/Build.h"
#include "tessel/driver/DefaultSchedule.h"
#include "tessel/op/Conv.h"
#include "tessel/runtime/NDArray.h"
#include "tessel/runtime/ThreadPool.h"

namespace tessel::bench {

// oneDNN's OpenMP threads as many as tessel's (set before the library loads, by re-executing this
// program once). Both libraries keep their default waiting (their threads spin a while after a
// call); the comparison lets each one's threads settle before timing the other's
// (interleaved_median_ms).
inline void match_openmp_threads(char** argv) {
    if (std::getenv("OMP_NUM_THREADS")) return;
    std::string threads = std::to_string(ThreadPool::default_num_threads());
    setenv("OMP_NUM_THREADS", threads.c_str(), 1);
    execv("/proc/self/exe", argv);
    std::perror("re-exec failed; measuring with the current environment");
}

// --- One layer timed in one harness: tessel's best schedule and oneDNN. ---

inline int64_t product(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

inline std::vector<int64_t> shape_of(const Tensor& t) {
    std::vector<int64_t> s;
    for (const Expr& e : t.shape()) s.push_back(*as_const_int(e));
    return s;
}

struct LayerTiming {
    double tessel_ms = 0, onednn_ms = 0;
    /// The one-time weight transforms: tessel's pre_transform (0 without one) and oneDNN's
    /// reorder into its weights' layout (medians of a few calls).
    double tessel_transform_ms = 0, onednn_transform_ms = 0;
    bool ok = false;
};

// The median milliseconds of a few calls of a one-time transform.
inline double transform_ms(const std::function<void()>& work) {
    return median_ms(work, 1, 5);
}

// oneDNN's forward-inference primitive of the layer on `inputs` (plain layouts): its output
// (plain layout) in `out`, and the median milliseconds of `tessel` and of the primitive alone,
// timed alternately. A convolution is oneDNN's direct one, or with `any_algorithm` the one
// oneDNN chooses (convolution_auto: its Winograd where it has one), against tessel's Winograd.
inline std::pair<double, double> onednn_layer(const JobTask& t,
                                              const std::vector<std::vector<float>>& inputs,
                                              std::vector<float>& out,
                                              const std::function<void()>& tessel, int runs,
                                              double* reorder_ms = nullptr,
                                              bool any_algorithm = false) {
    using namespace dnnl;
    using tag = memory::format_tag;
    engine eng(engine::kind::cpu, 0);
    stream s(eng);
    const auto& p = t.params;
    auto integer = [&](size_t i) { return std::get<int64_t>(p[i]); };
    auto list = [&](size_t i) { return std::get<std::vector<int64_t>>(p[i]); };
    std::function<void()> work;
    std::vector<primitive> keep;
    std::vector<memory> mems;
    std::unordered_map<int, memory> args;
    memory user_dst;
    if (t.workload == "op.conv2d_nchw") {
        int64_t n = integer(0), c = integer(1), h = integer(2), w = integer(3), k = integer(4);
        auto kernel = list(5), stride = list(6), pad = list(7), dil = list(8);
        int64_t oh = (h + pad[0] + pad[2] - dil[0] * (kernel[0] - 1) - 1) / stride[0] + 1;
        int64_t ow = (w + pad[1] + pad[3] - dil[1] * (kernel[1] - 1) - 1) / stride[1] + 1;
        memory::dims src{n, c, h, w}, wei{k, c, kernel[0], kernel[1]}, dst{n, k, oh, ow};
        auto any = [](const memory::dims& d) {
            return memory::desc(d, memory::data_type::f32, tag::any);
        };
        convolution_forward::desc d(
            prop_kind::forward_inference,
            any_algorithm ? algorithm::convolution_auto : algorithm::convolution_direct, any(src),
            any(wei), any(dst), {stride[0], stride[1]}, {dil[0] - 1, dil[1] - 1}, {pad[0], pad[1]},
            {pad[2], pad[3]});
        convolution_forward::primitive_desc pd(d, eng);
        if (any_algorithm) std::cerr << "  oneDNN's choice: " << pd.impl_info_str() << "\n";
        memory user_src({src, memory::data_type::f32, tag::nchw}, eng,
                        const_cast<float*>(inputs[0].data()));
        memory user_wei({wei, memory::data_type::f32, tag::oihw}, eng,
                        const_cast<float*>(inputs[1].data()));
        user_dst = memory({dst, memory::data_type::f32, tag::nchw}, eng, out.data());
        memory src_m(pd.src_desc(), eng), wei_m(pd.weights_desc(), eng), dst_m(pd.dst_desc(), eng);
        reorder(user_src, src_m).execute(s, user_src, src_m);
        reorder wei_reorder(user_wei, wei_m);
        wei_reorder.execute(s, user_wei, wei_m);
        if (reorder_ms)
            *reorder_ms = transform_ms([&] { wei_reorder.execute(s, user_wei, wei_m), s.wait(); });
        convolution_forward conv(pd);
        args = {{DNNL_ARG_SRC, src_m}, {DNNL_ARG_WEIGHTS, wei_m}, {DNNL_ARG_DST, dst_m}};
        work = [conv, &s, &args] { conv.execute(s, args), s.wait(); };
        work();
        reorder(dst_m, user_dst).execute(s, dst_m, user_dst);
    } else {  // op.dense: x (M, K), w (N, K), bias (N)
        int64_t m = integer(0), n = integer(1), k = integer(2);
        memory::dims src{m, k}, wei{n, k}, bias{n}, dst{m, n};
        inner_product_forward::desc d(prop_kind::forward_inference,
                                      memory::desc(src, memory::data_type::f32, tag::any),
                                      memory::desc(wei, memory::data_type::f32, tag::any),
                                      memory::desc(bias, memory::data_type::f32, tag::x),
                                      memory::desc(dst, memory::data_type::f32, tag::nc));
        inner_product_forward::primitive_desc pd(d, eng);
        memory user_src({src, memory::data_type::f32, tag::nc}, eng,
                        const_cast<float*>(inputs[0].data()));
        memory user_wei({wei, memory::data_type::f32, tag::oi}, eng,
                        const_cast<float*>(inputs[1].data()));
        memory bias_m({bias, memory::data_type::f32, tag::x}, eng,
                      const_cast<float*>(inputs[2].data()));
        memory src_m(pd.src_desc(), eng), wei_m(pd.weights_desc(), eng);
        user_dst = memory({dst, memory::data_type::f32, tag::nc}, eng, out.data());
        reorder(user_src, src_m).execute(s, user_src, src_m);
        reorder wei_reorder(user_wei, wei_m);
        wei_reorder.execute(s, user_wei, wei_m);
        if (reorder_ms)
            *reorder_ms = transform_ms([&] { wei_reorder.execute(s, user_wei, wei_m), s.wait(); });
        inner_product_forward ip(pd);
        args = {{DNNL_ARG_SRC, src_m},
                {DNNL_ARG_WEIGHTS, wei_m},
                {DNNL_ARG_BIAS, bias_m},
                {DNNL_ARG_DST, user_dst}};
        work = [ip, &s, &args] { ip.execute(s, args), s.wait(); };
        work();
    }
    s.wait();
    return interleaved_median_ms(tessel, work, 3, runs);
}

// Random inputs (never zeros) for a task's arguments, and its output last.
struct LayerArrays {
    std::vector<std::vector<float>> inputs;  // the inputs' values (oneDNN reads them too)
    std::vector<NDArray> arrays;             // the kernel's arguments
};

inline LayerArrays layer_arrays(const SearchTask& task) {
    LayerArrays a;
    std::vector<Tensor> args = task.dag().args();
    for (size_t i = 0; i < args.size(); ++i) {
        std::vector<int64_t> shape = shape_of(args[i]);
        a.arrays.push_back(NDArray::empty(shape, float32()));
        if (i + 1 < args.size()) {
            a.inputs.push_back(random_floats(static_cast<size_t>(product(shape)), 7 + uint32_t(i)));
            std::copy(a.inputs.back().begin(), a.inputs.back().end(),
                      static_cast<float*>(a.arrays.back().data()));
        }
    }
    return a;
}

// Whether tessel's output `got` matches oneDNN's `expected`: the largest error against the
// output's RMS below 1e-3. Each output is a sum of thousands of products of random numbers, so an
// element-wise relative error is ill-conditioned where a sum falls near zero (float32's rounding
// alone gave 0.019 there on a correct 3 x 3, 512-channel kernel), while a wrong schedule is off by
// the order of the RMS itself.
inline bool matches(const JobTask& t, const float* got, const std::vector<float>& expected) {
    double worst = 0, square_sum = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
        square_sum += double(expected[i]) * expected[i];
    }
    worst /= std::sqrt(square_sum / double(std::max<size_t>(1, expected.size()))) + 1e-30;
    if (worst >= 1e-3)
        std::cerr << "  " << t.workload << ": tessel differs from oneDNN by " << worst
                  << " of the output RMS\n";
    return worst < 1e-3;
}

// An op.conv2d_nchwc (or op.conv2d_nchwc_winograd) layer (blocked activations,
// docs/operators.md) as oneDNN sees it: the op.conv2d_nchw of the same geometry (groups 1), and
// its arrays between the two layouts.
struct BlockedConv {
    int64_t n, c, h, w, k, r, s, cb, kb;

    explicit BlockedConv(const JobTask& t) {
        auto integer = [&](size_t i) { return std::get<int64_t>(t.params[i]); };
        const auto& kernel = std::get<std::vector<int64_t>>(t.params[5]);
        n = integer(0), c = integer(1), h = integer(2), w = integer(3), k = integer(4);
        r = kernel[0], s = kernel.size() > 1 ? kernel[1] : kernel[0];
        cb = integer(9), kb = integer(10);
    }
    JobTask nchw(const JobTask& t) const {
        JobTask plain = t;
        plain.workload = "op.conv2d_nchw";
        plain.params[9] = int64_t(1);  // groups
        plain.params.erase(plain.params.begin() + 10);
        return plain;
    }
    // x (N, C / cb, H, W, cb) → (N, C, H, W).
    std::vector<float> input(const std::vector<float>& xb) const {
        std::vector<float> x(xb.size());
        for (size_t i = 0; i < x.size(); ++i) {
            const int64_t j = int64_t(i), b = j / (c * h * w), ch = j / (h * w) % c,
                          pix = j % (h * w);
            x[i] = xb[size_t(((b * (c / cb) + ch / cb) * h * w + pix) * cb + ch % cb)];
        }
        return x;
    }
    // w (K / kb, C / cb, R, S, cb, kb) → (K, C, R, S).
    std::vector<float> weight(const std::vector<float>& wb) const {
        std::vector<float> wt(wb.size());
        for (size_t i = 0; i < wt.size(); ++i) {
            const int64_t j = int64_t(i), o = j / (c * r * s), ch = j / (r * s) % c,
                          win = j % (r * s);
            wt[i] = wb[size_t((((o / kb) * (c / cb) + ch / cb) * r * s + win) * cb * kb +
                              (ch % cb) * kb + o % kb)];
        }
        return wt;
    }
    // y (N, K / kb, OH, OW, kb) → (N, K, OH, OW): `pixels` = OH * OW.
    std::vector<float> output(const float* yb, int64_t pixels) const {
        std::vector<float> y(size_t(n * k * pixels));
        for (size_t i = 0; i < y.size(); ++i) {
            const int64_t j = int64_t(i), b = j / (k * pixels), o = j / pixels % k,
                          pix = j % pixels;
            y[i] = yb[((b * (k / kb) + o / kb) * pixels + pix) * kb + o % kb];
        }
        return y;
    }
};

// `schedule` of `task` (layer `t` of a job) built and timed against oneDNN's layer alternately
// (`runs` samples each, the medians), its output checked against oneDNN's first. A blocked
// convolution (op.conv2d_nchwc, op.conv2d_nchwc_winograd) is timed against oneDNN's of the same
// geometry on the same numbers, which oneDNN takes in its own layouts (reordered outside the
// timing). A Winograd convolution (op.conv2d_nchwc_winograd, op.conv2d_nchw_winograd) is timed
// against oneDNN's own choice of algorithm.
inline LayerTiming time_layer(const JobTask& t, const SearchTask& task, const Schedule& schedule,
                              int runs) {
    LayerTiming r;
    Module m = build(schedule, task.dag().args(), task.target());
    Kernel k = m.get("main");
    LayerArrays a = layer_arrays(task);
    std::vector<NDArray> call = a.arrays;
    std::vector<std::string> names = m.kernel_names();
    if (std::find(names.begin(), names.end(), "main_pre_transform") != names.end()) {
        // Layout rewrite: the weights packed once, the kernel given the packed arrays.
        Kernel pre = m.get("main_pre_transform");
        const std::vector<ArgSpec>& specs = pre.signature().args;
        const size_t n = specs.size() / 2;
        std::vector<NDArray> pre_args(specs.size());
        for (size_t w = 0; w < n; ++w) {
            size_t i = 0;
            while (k.signature().args[i].name != specs[n + w].name) ++i;
            std::vector<int64_t> shape;
            for (const Dim& d : specs[n + w].shape) shape.push_back(d.value);
            pre_args[w] = a.arrays[i];
            pre_args[n + w] = NDArray::empty(shape, float32());
            call[i] = pre_args[n + w];
        }
        r.tessel_transform_ms = transform_ms([&] { pre(pre_args); });
    }
    auto tessel_run = [&] { k(call); };
    tessel_run();
    const NDArray& out = a.arrays.back();
    const int64_t size = product(out.shape());
    std::vector<float> expected(static_cast<size_t>(size));
    const float* got = static_cast<const float*>(out.data());
    std::vector<float> unblocked;
    if (t.workload == "op.conv2d_nchwc" || t.workload == "op.conv2d_nchwc_winograd") {
        BlockedConv b(t);
        std::vector<std::vector<float>> plain = {b.input(a.inputs[0]), b.weight(a.inputs[1])};
        std::tie(r.tessel_ms, r.onednn_ms) =
            onednn_layer(b.nchw(t), plain, expected, tessel_run, runs, &r.onednn_transform_ms,
                         t.workload == "op.conv2d_nchwc_winograd");
        unblocked = b.output(got, size / (b.n * b.k));
        got = unblocked.data();
    } else if (t.workload == "op.conv2d_nchw_winograd") {  // oneDNN's choice of algorithm
        JobTask plain = t;
        plain.workload = "op.conv2d_nchw";
        std::tie(r.tessel_ms, r.onednn_ms) =
            onednn_layer(plain, a.inputs, expected, tessel_run, runs, &r.onednn_transform_ms, true);
    } else {
        std::tie(r.tessel_ms, r.onednn_ms) =
            onednn_layer(t, a.inputs, expected, tessel_run, runs, &r.onednn_transform_ms);
    }
    r.ok = matches(t, got, expected);
    return r;
}

}  // namespace tessel::bench
