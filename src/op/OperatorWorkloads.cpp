// The operator library's workloads (op/Workloads.h): every operator under "op.<operator>" with its
// parameters (docs/operators.md lists them), so that a search task or the tuning daemon can
// build it by name. The names carry the "op." prefix because the fuzzer's built-in workloads
// ("matmul", "softmax", ...) are fixed computations of other shapes
// (src/auto_schedule/task/Workloads.cpp).
#include <functional>
#include <map>

#include "op/OpUtil.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Matmul.h"
#include "tessel/op/Norm.h"
#include "tessel/op/Pool.h"
#include "tessel/op/Quantize.h"
#include "tessel/op/Reduce.h"
#include "tessel/op/Transform.h"
#include "tessel/op/Workloads.h"

namespace tessel::internal {

namespace {

using op::internal::to_exprs;
using P = WorkloadParams;

int64_t integer(const P& p, size_t i) {
    return std::get<int64_t>(p[i]);
}
const std::vector<int64_t>& list(const P& p, size_t i) {
    return std::get<std::vector<int64_t>>(p[i]);
}
const std::string& text(const P& p, size_t i) {
    return std::get<std::string>(p[i]);
}
Type dtype(const P& p) {
    return std::get<Type>(p.back());
}
Tensor input(const std::vector<int64_t>& shape, Type t, const char* name) {
    return placeholder(to_exprs(shape), t, name);
}

// A list parameter of 1 or N entries as N entries (one value repeats): [3] → [3, 3].
template <size_t N>
std::array<int64_t, N> expand(const std::vector<int64_t>& v, const char* param) {
    std::array<int64_t, N> out{};
    if (v.size() != 1 && v.size() != N && !(N == 4 && v.size() == 2))
        op::internal::bad_param("workload", param,
                                "must have 1" + std::string(N == 4 ? ", 2" : "") + " or " +
                                    std::to_string(N) + " entries");
    for (size_t i = 0; i < N; ++i) out[i] = v.size() == N ? v[i] : v[i % v.size()];
    return out;
}

op::Conv2DParams conv_params(const P& p, size_t stride, int64_t groups) {
    return {expand<2>(list(p, stride), "stride"), expand<4>(list(p, stride + 1), "padding"),
            expand<2>(list(p, stride + 2), "dilation"), groups};
}

using Specs = std::vector<std::pair<const char*, ParamKind>>;

std::vector<WorkloadParamSpec> spec(const Specs& l) {
    std::vector<WorkloadParamSpec> s;
    for (auto [name, kind] : l) s.push_back({name, kind});
    s.push_back({"dtype", ParamKind::DType});
    return s;
}

// A workload whose last parameter is the optional out_dtype (op/Matmul.h): `build` receives the
// other parameters (the dtype last, as every builder here reads it) and the out_dtype if given.
// Instances made before out_dtype existed keep their keys.
using AccumulatingBuilder = std::function<TensorDAG(const P&, std::optional<Type>)>;
WorkloadDefinition accumulating(std::string name, std::vector<WorkloadParamSpec> params,
                                AccumulatingBuilder build) {
    params.push_back({"out_dtype", ParamKind::DType, true});
    const size_t all = params.size();
    return {std::move(name), std::move(params), [build = std::move(build), all](const P& p) {
                if (p.size() < all) return build(p, std::nullopt);
                return build(P(p.begin(), p.end() - 1), std::get<Type>(p.back()));
            }};
}

constexpr ParamKind I = ParamKind::Int, L = ParamKind::IntList, S = ParamKind::String,
                    F = ParamKind::Float;

// The convolutions' geometry followed by `more`, their own parameters (then the dtype).
Specs conv_geometry(const Specs& more) {
    Specs s = {{"N", I},      {"C", I},      {"H", I},       {"W", I},       {"K", I},
               {"kernel", L}, {"stride", L}, {"padding", L}, {"dilation", L}};
    s.insert(s.end(), more.begin(), more.end());
    return s;
}

TensorDAG unary(const P& p) {
    static const std::map<std::string, std::function<Tensor(const Tensor&)>> fns = {
        {"relu", [](const Tensor& x) { return op::relu(x); }},
        {"gelu", [](const Tensor& x) { return op::gelu(x); }},
        {"silu", [](const Tensor& x) { return op::silu(x); }},
        {"sigmoid", [](const Tensor& x) { return op::sigmoid(x); }},
        {"tanh", [](const Tensor& x) { return op::tanh(x); }},
        {"exp", [](const Tensor& x) { return op::exp(x); }},
        {"log", [](const Tensor& x) { return op::log(x); }},
        {"sqrt", [](const Tensor& x) { return op::sqrt(x); }},
        {"abs", [](const Tensor& x) { return op::abs(x); }},
        {"negative", [](const Tensor& x) { return op::negative(x); }}};
    auto it = fns.find(text(p, 1));
    if (it == fns.end())
        op::internal::bad_param("op.unary", "fn", "'" + text(p, 1) + "' is not a unary operator");
    Tensor x = input(list(p, 0), dtype(p), "x");
    return {{x}, {it->second(x)}};
}

TensorDAG binary(const P& p) {
    static const std::map<std::string, std::function<Tensor(const Tensor&, const Tensor&)>> fns = {
        {"add", [](const Tensor& a, const Tensor& b) { return op::add(a, b); }},
        {"subtract", [](const Tensor& a, const Tensor& b) { return op::subtract(a, b); }},
        {"multiply", [](const Tensor& a, const Tensor& b) { return op::multiply(a, b); }},
        {"divide", [](const Tensor& a, const Tensor& b) { return op::divide(a, b); }},
        {"maximum", [](const Tensor& a, const Tensor& b) { return op::maximum(a, b); }},
        {"minimum", [](const Tensor& a, const Tensor& b) { return op::minimum(a, b); }},
        {"power", [](const Tensor& a, const Tensor& b) { return op::power(a, b); }}};
    auto it = fns.find(text(p, 2));
    if (it == fns.end())
        op::internal::bad_param("op.binary", "fn", "'" + text(p, 2) + "' is not a binary operator");
    Tensor a = input(list(p, 0), dtype(p), "a"), b = input(list(p, 1), dtype(p), "b");
    return {{a, b}, {it->second(a, b)}};
}

TensorDAG reduction(const P& p, const std::string& kind, std::optional<Type> out_dtype) {
    Tensor x = input(list(p, 0), dtype(p), "x");
    bool keep = integer(p, 2) != 0;
    if (kind == "argmax" || kind == "argmin") {
        if (list(p, 1).size() != 1)
            op::internal::bad_param(kind.c_str(), "axis", "must be one axis");
        int64_t a = list(p, 1)[0];
        return {{x}, {kind == "argmax" ? op::argmax(x, a, keep) : op::argmin(x, a, keep)}};
    }
    if (kind == "sum" || kind == "mean") {
        auto fn = kind == "sum" ? &op::sum : &op::mean;
        return {{x}, {fn(x, list(p, 1), keep, out_dtype, kind)}};
    }
    auto fn = kind == "max" ? &op::max : &op::min;
    return {{x}, {fn(x, list(p, 1), keep, kind)}};
}

TensorDAG dense(const P& p, std::optional<Type> out_dtype) {
    Type t = dtype(p);
    Tensor x = input({integer(p, 0), integer(p, 2)}, t, "x");
    Tensor w = input({integer(p, 1), integer(p, 2)}, t, "w");
    Tensor b = integer(p, 3) ? input({integer(p, 1)}, t, "bias") : Tensor();
    Tensor y = op::dense(x, w, b, op::parse_activation(text(p, 4)), out_dtype);
    if (b.defined()) return {{x, w, b}, {y}};
    return {{x, w}, {y}};
}

// The operand shapes and parameters of a conv2d workload (the convolutions' geometry and groups).
struct ConvShapes {
    std::vector<int64_t> x, w;
    op::Conv2DParams params;
};
ConvShapes conv_shapes(const P& p, bool nhwc, const char* workload) {
    int64_t n = integer(p, 0), c = integer(p, 1), h = integer(p, 2), w = integer(p, 3);
    int64_t k = integer(p, 4), groups = integer(p, 9);
    auto kernel = expand<2>(list(p, 5), "kernel");
    if (groups < 1) op::internal::bad_param(workload, "groups", "must be at least 1");
    if (nhwc)
        return {{n, h, w, c}, {kernel[0], kernel[1], c / groups, k}, conv_params(p, 6, groups)};
    return {{n, c, h, w}, {k, c / groups, kernel[0], kernel[1]}, conv_params(p, 6, groups)};
}

TensorDAG conv2d(const P& p, bool nhwc, std::optional<Type> out_dtype) {
    ConvShapes s = conv_shapes(p, nhwc, "op.conv2d");
    Tensor x = input(s.x, dtype(p), "x"), f = input(s.w, dtype(p), "w");
    s.params.out_dtype = out_dtype;
    return {{x, f}, {nhwc ? op::conv2d_nhwc(x, f, s.params) : op::conv2d_nchw(x, f, s.params)}};
}

// op.conv2d_nchw_winograd: conv2d_nchw's parameters, Winograd's F(2 x 2, 3 x 3).
TensorDAG conv2d_winograd(const P& p, std::optional<Type> out_dtype) {
    ConvShapes s = conv_shapes(p, false, "op.conv2d_nchw_winograd");
    Tensor x = input(s.x, dtype(p), "x"), f = input(s.w, dtype(p), "w");
    s.params.out_dtype = out_dtype;
    return {{x, f}, {op::conv2d_nchw_winograd(x, f, s.params)}};
}

// conv2d_nchwc: the geometry in channels (C, K), then the input's and the output's channel blocks.
// op.conv2d_nchwc_winograd: the same parameters, Winograd's F(2 x 2, 3 x 3).
TensorDAG conv2d_blocked(const P& p, std::optional<Type> out_dtype, bool winograd) {
    const char* workload = winograd ? "op.conv2d_nchwc_winograd" : "op.conv2d_nchwc";
    const int64_t c = integer(p, 1), k = integer(p, 4), cb = integer(p, 9), kb = integer(p, 10);
    if (cb < 1 || c % cb != 0)
        op::internal::bad_param(workload, "in_block", "must divide C = " + std::to_string(c));
    if (kb < 1 || k % kb != 0)
        op::internal::bad_param(workload, "out_block", "must divide K = " + std::to_string(k));
    auto kernel = expand<2>(list(p, 5), "kernel");
    Tensor x = input({integer(p, 0), c / cb, integer(p, 2), integer(p, 3), cb}, dtype(p), "x");
    Tensor f = input({k / kb, c / cb, kernel[0], kernel[1], cb, kb}, dtype(p), "w");
    op::Conv2DParams cp = conv_params(p, 6, 1);
    cp.out_dtype = out_dtype;
    return {{x, f}, {winograd ? op::conv2d_nchwc_winograd(x, f, cp) : op::conv2d_nchwc(x, f, cp)}};
}

TensorDAG depthwise(const P& p, std::optional<Type> out_dtype) {
    Type t = dtype(p);
    int64_t c = integer(p, 1);
    auto kernel = expand<2>(list(p, 5), "kernel");
    Tensor x = input({integer(p, 0), c, integer(p, 2), integer(p, 3)}, t, "x");
    Tensor f = input({c * integer(p, 4), 1, kernel[0], kernel[1]}, t, "w");
    op::Conv2DParams cp = conv_params(p, 6, c);
    cp.out_dtype = out_dtype;
    return {{x, f}, {op::depthwise_conv2d_nchw(x, f, cp)}};
}

TensorDAG conv2d_transpose(const P& p, std::optional<Type> out_dtype) {
    Type t = dtype(p);
    auto kernel = expand<2>(list(p, 5), "kernel");
    Tensor x = input({integer(p, 0), integer(p, 1), integer(p, 2), integer(p, 3)}, t, "x");
    Tensor f = input({integer(p, 1), integer(p, 4), kernel[0], kernel[1]}, t, "w");
    op::Conv2DParams cp = conv_params(p, 6, 1);
    cp.out_dtype = out_dtype;
    return {{x, f}, {op::conv2d_transpose_nchw(x, f, cp, expand<2>(list(p, 9), "output_padding"))}};
}

TensorDAG pool(const P& p) {
    Tensor x = input({integer(p, 0), integer(p, 1), integer(p, 2), integer(p, 3)}, dtype(p), "x");
    return {{x},
            {op::pool2d(x, op::parse_pool_kind(text(p, 4)), expand<2>(list(p, 5), "window"),
                        expand<2>(list(p, 6), "stride"), expand<4>(list(p, 7), "padding"),
                        integer(p, 8) != 0)}};
}

TensorDAG norm(const P& p, const std::string& kind) {
    Type t = dtype(p);
    const std::vector<int64_t>& shape = list(p, 0);
    Tensor x = input(shape, t, "x");
    if (shape.empty()) op::internal::bad_param(kind.c_str(), "shape", "must not be empty");
    if (kind == "softmax") return {{x}, {op::softmax(x, integer(p, 1))}};
    if (kind == "log_softmax") return {{x}, {op::log_softmax(x, integer(p, 1))}};
    if (kind == "batch_norm") {
        int64_t c = shape[op::normalize_axis(integer(p, 1), shape.size(), "batch_norm")];
        std::vector<Tensor> v;
        for (const char* n : {"gamma", "beta", "mean", "var"}) v.push_back(input({c}, t, n));
        return {{x, v[0], v[1], v[2], v[3]},
                {op::batch_norm(x, v[0], v[1], v[2], v[3], 1e-5, integer(p, 1))}};
    }
    Tensor gamma = input({shape.back()}, t, "gamma");
    if (kind == "rms_norm") return {{x, gamma}, {op::rms_norm(x, gamma)}};
    Tensor beta = input({shape.back()}, t, "beta");
    return {{x, gamma, beta}, {op::layer_norm(x, gamma, beta)}};
}

TensorDAG concatenate(const P& p) {
    std::vector<Tensor> xs;
    for (int64_t i = 0; i < integer(p, 1); ++i)
        xs.push_back(input(list(p, 0), dtype(p), ("x" + std::to_string(i)).c_str()));
    if (xs.empty()) op::internal::bad_param("op.concatenate", "count", "must be at least 1");
    return {xs, {op::concatenate(xs, integer(p, 2))}};
}

TensorDAG take(const P& p) {
    Tensor x = input(list(p, 0), dtype(p), "x");
    Tensor idx = input(list(p, 1), Int(32), "indices");
    return {{x, idx}, {op::take(x, idx, integer(p, 2))}};
}

TensorDAG where(const P& p) {
    Tensor c = input(list(p, 0), Bool(), "cond");
    Tensor a = input(list(p, 0), dtype(p), "a"), b = input(list(p, 0), dtype(p), "b");
    return {{c, a, b}, {op::where(c, a, b)}};
}

// The quantization of an operand: a float32 scale and a zero point of `t`, one value each (shape
// ()) or one per channel ((channels,)).
op::QuantParams quant_input(const std::string& prefix, Type t, int64_t channels,
                            std::vector<Tensor>& inputs) {
    std::vector<int64_t> shape;
    if (channels > 0) shape.push_back(channels);
    op::QuantParams q{input(shape, Float(32), (prefix + "_scale").c_str()),
                      input(shape, t, (prefix + "_zero_point").c_str())};
    inputs.push_back(q.scale);
    inputs.push_back(q.zero_point);
    return q;
}

using QLinearBuild =
    std::function<Tensor(const Tensor&, const op::QuantParams&, const Tensor&,
                         const op::QuantParams&, const op::QuantParams&, const Tensor&)>;

// A quantized operator's placeholders (ONNX's order: x, its scale and zero point, w, its scale
// and zero point, y's, the bias) and result. Parameters from `first`: per_channel, bias,
// x_dtype, w_dtype, then the result's dtype.
TensorDAG qlinear(const P& p, size_t first, const std::vector<int64_t>& x_shape,
                  const std::vector<int64_t>& w_shape, int64_t channels,
                  const QLinearBuild& build) {
    Tensor x = input(x_shape, std::get<Type>(p[first + 2]), "x");
    std::vector<Tensor> inputs{x};
    op::QuantParams xq = quant_input("x", x.dtype(), 0, inputs);
    Tensor w = input(w_shape, std::get<Type>(p[first + 3]), "w");
    inputs.push_back(w);
    op::QuantParams wq = quant_input("w", w.dtype(), integer(p, first) ? channels : 0, inputs);
    op::QuantParams yq = quant_input("y", dtype(p), 0, inputs);
    Tensor bias = integer(p, first + 1) ? input({channels}, Int(32), "B") : Tensor();
    if (bias.defined()) inputs.push_back(bias);
    return {inputs, {build(x, xq, w, wq, yq, bias)}};
}

std::vector<WorkloadDefinition> tensor_workloads() {
    auto x0 = [](const P& p) { return input(list(p, 0), dtype(p), "x"); };
    std::vector<WorkloadDefinition> w = {
        {"op.unary", spec({{"shape", L}, {"fn", S}}), unary},
        {"op.binary", spec({{"a_shape", L}, {"b_shape", L}, {"fn", S}}), binary},
        {"op.cast", spec({{"shape", L}, {"to", ParamKind::DType}}),
         [x0](const P& p) {
             Tensor x = x0(p);
             return TensorDAG{{x}, {op::cast(x, std::get<Type>(p[1]))}};
         }},
        {"op.clip", spec({{"shape", L}, {"lo", F}, {"hi", F}}),
         [x0](const P& p) {
             Tensor x = x0(p);
             return TensorDAG{{x}, {op::clip(x, std::get<double>(p[1]), std::get<double>(p[2]))}};
         }},
        {"op.where", spec({{"shape", L}}), where},
        {"op.transpose", spec({{"shape", L}, {"axes", L}}),
         [x0](const P& p) {
             Tensor x = x0(p);
             return TensorDAG{{x}, {op::transpose(x, list(p, 1))}};
         }},
        {"op.reshape", spec({{"shape", L}, {"new_shape", L}}),
         [x0](const P& p) {
             Tensor x = x0(p);
             return TensorDAG{{x}, {op::reshape(x, list(p, 1))}};
         }},
        {"op.concatenate", spec({{"shape", L}, {"count", I}, {"axis", I}}), concatenate},
        {"op.split", spec({{"shape", L}, {"sections", I}, {"axis", I}}),
         [x0](const P& p) {
             Tensor x = x0(p);
             return TensorDAG{{x}, op::split_sections(x, integer(p, 1), integer(p, 2))};
         }},
        {"op.pad", spec({{"shape", L}, {"before", L}, {"after", L}, {"value", F}}),
         [x0](const P& p) {
             Tensor x = x0(p);
             return TensorDAG{{x}, {op::pad(x, list(p, 1), list(p, 2), std::get<double>(p[3]))}};
         }},
        {"op.take", spec({{"shape", L}, {"indices_shape", L}, {"axis", I}}), take},
    };
    for (const char* kind : {"sum", "mean"})
        w.push_back(accumulating(std::string("op.") + kind,
                                 spec({{"shape", L}, {"axis", L}, {"keepdims", I}}),
                                 [k = std::string(kind)](const P& p, std::optional<Type> out) {
                                     return reduction(p, k, out);
                                 }));
    for (const char* kind : {"max", "min", "argmax", "argmin"})
        w.push_back(
            {std::string("op.") + kind, spec({{"shape", L}, {"axis", L}, {"keepdims", I}}),
             [k = std::string(kind)](const P& p) { return reduction(p, k, std::nullopt); }});
    return w;
}

std::vector<WorkloadDefinition> nn_workloads() {
    auto conv_spec = [](std::pair<const char*, ParamKind> last) {
        return spec(conv_geometry({last}));
    };
    auto conv = conv_spec({"groups", I});
    std::vector<WorkloadDefinition> w = {
        accumulating(
            "op.matmul",
            spec({{"M", I}, {"N", I}, {"K", I}, {"transpose_a", I}, {"transpose_b", I}}),
            [](const P& p, std::optional<Type> out) {
                bool ta = integer(p, 3) != 0, tb = integer(p, 4) != 0;
                int64_t m = integer(p, 0), n = integer(p, 1), k = integer(p, 2);
                Tensor a = ta ? input({k, m}, dtype(p), "a") : input({m, k}, dtype(p), "a");
                Tensor b = tb ? input({n, k}, dtype(p), "b") : input({k, n}, dtype(p), "b");
                return TensorDAG{{a, b}, {op::matmul(a, b, ta, tb, out)}};
            }),
        accumulating("op.batch_matmul", spec({{"B", I}, {"M", I}, {"N", I}, {"K", I}}),
                     [](const P& p, std::optional<Type> out) {
                         int64_t b = integer(p, 0), m = integer(p, 1), n = integer(p, 2),
                                 k = integer(p, 3);
                         Tensor x = input({b, m, k}, dtype(p), "a");
                         Tensor y = input({b, k, n}, dtype(p), "b");
                         return TensorDAG{{x, y}, {op::batch_matmul(x, y, false, false, out)}};
                     }),
        accumulating("op.dense",
                     spec({{"M", I}, {"N", I}, {"K", I}, {"bias", I}, {"activation", S}}), dense),
        accumulating("op.conv2d_nchw", conv,
                     [](const P& p, std::optional<Type> out) { return conv2d(p, false, out); }),
        accumulating("op.conv2d_nchw_winograd", conv,
                     [](const P& p, std::optional<Type> out) { return conv2d_winograd(p, out); }),
        accumulating("op.conv2d_nhwc", conv,
                     [](const P& p, std::optional<Type> out) { return conv2d(p, true, out); }),
        accumulating(
            "op.conv2d_nchwc", spec(conv_geometry({{"in_block", I}, {"out_block", I}})),
            [](const P& p, std::optional<Type> out) { return conv2d_blocked(p, out, false); }),
        accumulating(
            "op.conv2d_nchwc_winograd", spec(conv_geometry({{"in_block", I}, {"out_block", I}})),
            [](const P& p, std::optional<Type> out) { return conv2d_blocked(p, out, true); }),
        accumulating("op.depthwise_conv2d_nchw",
                     spec({{"N", I},
                           {"C", I},
                           {"H", I},
                           {"W", I},
                           {"multiplier", I},
                           {"kernel", L},
                           {"stride", L},
                           {"padding", L},
                           {"dilation", L}}),
                     depthwise),
        accumulating("op.conv2d_transpose_nchw", conv_spec({"output_padding", L}),
                     conv2d_transpose),
        {"op.pool2d",
         spec({{"N", I},
               {"C", I},
               {"H", I},
               {"W", I},
               {"kind", S},
               {"window", L},
               {"stride", L},
               {"padding", L},
               {"count_include_pad", I}}),
         pool},
        {"op.global_pool2d", spec({{"N", I}, {"C", I}, {"H", I}, {"W", I}, {"kind", S}}),
         [](const P& p) {
             Tensor x =
                 input({integer(p, 0), integer(p, 1), integer(p, 2), integer(p, 3)}, dtype(p), "x");
             return TensorDAG{{x}, {op::global_pool2d(x, op::parse_pool_kind(text(p, 4)))}};
         }},
        {"op.adaptive_avg_pool2d",
         spec({{"N", I}, {"C", I}, {"H", I}, {"W", I}, {"out_h", I}, {"out_w", I}}),
         [](const P& p) {
             Tensor x =
                 input({integer(p, 0), integer(p, 1), integer(p, 2), integer(p, 3)}, dtype(p), "x");
             return TensorDAG{{x}, {op::adaptive_avg_pool2d(x, integer(p, 4), integer(p, 5))}};
         }},
        {"op.layer_norm", spec({{"shape", L}}), [](const P& p) { return norm(p, "layer_norm"); }},
        {"op.rms_norm", spec({{"shape", L}}), [](const P& p) { return norm(p, "rms_norm"); }},
    };
    for (const char* kind : {"softmax", "log_softmax", "batch_norm"})
        w.push_back({std::string("op.") + kind, spec({{"shape", L}, {"axis", I}}),
                     [k = std::string(kind)](const P& p) { return norm(p, k); }});
    return w;
}

// The quantized operators: their own parameters, then the quantization's, then the result's dtype
// (y_zero_point's).
std::vector<WorkloadDefinition> quantized_workloads() {
    auto with_quant = [](Specs own) {
        own.insert(own.end(), {{"per_channel", I},
                               {"bias", I},
                               {"x_dtype", ParamKind::DType},
                               {"w_dtype", ParamKind::DType}});
        return spec(own);
    };
    return {
        {"op.qlinear_dense", with_quant({{"M", I}, {"N", I}, {"K", I}}),
         [](const P& p) {
             int64_t m = integer(p, 0), n = integer(p, 1), k = integer(p, 2);
             return qlinear(p, 3, {m, k}, {n, k}, n,
                            [](const Tensor& x, const op::QuantParams& xq, const Tensor& w,
                               const op::QuantParams& wq, const op::QuantParams& yq,
                               const Tensor& b) { return op::qlinear_dense(x, xq, w, wq, yq, b); });
         }},
        {"op.qlinear_conv2d_nchw", with_quant(conv_geometry({{"groups", I}})),
         [](const P& p) {
             ConvShapes s = conv_shapes(p, false, "op.qlinear_conv2d_nchw");
             return qlinear(
                 p, 10, s.x, s.w, s.w[0],
                 [&s](const Tensor& x, const op::QuantParams& xq, const Tensor& w,
                      const op::QuantParams& wq, const op::QuantParams& yq, const Tensor& b) {
                     return op::qlinear_conv2d_nchw(x, xq, w, wq, yq, b, s.params);
                 });
         }},
    };
}

}  // namespace

}  // namespace tessel::internal

namespace tessel::op {

std::vector<WorkloadDefinition> workloads() {
    std::vector<WorkloadDefinition> w = tessel::internal::tensor_workloads();
    for (WorkloadDefinition& b : tessel::internal::nn_workloads()) w.push_back(std::move(b));
    for (WorkloadDefinition& b : tessel::internal::quantized_workloads()) w.push_back(std::move(b));
    return w;
}

}  // namespace tessel::op
