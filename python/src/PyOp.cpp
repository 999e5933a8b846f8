// The operator library as `tessel.op` (python/tessel/op.py re-exports this submodule): every
// operator of include/tessel/op/ with keyword arguments, default_schedule, and the network
// presets. Only conversions here; the checks are the C++ operators' (DSLError → TypeError).
#include <array>
#include <memory>

#include "PyCommon.h"
#include "op/DefaultScheduleGpu.h"
#include "op/GpuConvTiles.h"
#include "tessel/driver/DefaultSchedule.h"
#include "tessel/op/Conv.h"
#include "tessel/op/Elementwise.h"
#include "tessel/op/Matmul.h"
#include "tessel/op/Networks.h"
#include "tessel/op/Norm.h"
#include "tessel/op/Pool.h"
#include "tessel/op/Quantize.h"
#include "tessel/op/Reduce.h"
#include "tessel/op/Transform.h"
#include "tessel/schedule/Schedule.h"

namespace tessel::python {

namespace {

using namespace pybind11::literals;

// An int or a sequence of ints as a vector.
std::vector<int64_t> to_ints(py::handle v, const char* what) {
    if (v.is_none()) return {};
    if (py::isinstance<py::int_>(v)) return {v.cast<int64_t>()};
    try {
        return v.cast<std::vector<int64_t>>();
    } catch (const py::cast_error&) {
        TESSEL_THROW(DSLError) << "tessel.op: parameter '" << what
                               << "' must be an int or a sequence of ints";
    }
}

// An int or a sequence of 1 or N ints (N = 4 also takes 2: (vertical, horizontal)) as N ints.
template <size_t N>
std::array<int64_t, N> to_array(py::handle v, const char* what) {
    std::vector<int64_t> l = to_ints(v, what);
    if (l.size() != 1 && l.size() != N && !(N == 4 && l.size() == 2))
        TESSEL_THROW(DSLError) << "tessel.op: parameter '" << what << "' has " << l.size()
                               << " entries; expected 1" << (N == 4 ? ", 2" : "") << " or " << N;
    std::array<int64_t, N> a{};
    for (size_t i = 0; i < N; ++i) a[i] = l.size() == N ? l[i] : l[i % l.size()];
    return a;
}

op::Conv2DParams conv_params(py::handle stride, py::handle padding, py::handle dilation,
                             int64_t groups, py::handle out_dtype) {
    op::Conv2DParams p{to_array<2>(stride, "stride"), to_array<4>(padding, "padding"),
                       to_array<2>(dilation, "dilation"), groups};
    if (!out_dtype.is_none()) p.out_dtype = to_type(out_dtype);
    return p;
}

Tensor opt_tensor(const std::optional<Tensor>& t) {
    return t ? *t : Tensor();
}

// out_dtype=None (the operator's default) or a dtype ("float32", ts dtype objects).
std::optional<Type> opt_dtype(py::handle dtype) {
    if (dtype.is_none()) return std::nullopt;
    return to_type(dtype);
}

std::optional<Target> opt_target(py::handle target) {
    if (target.is_none()) return std::nullopt;
    return to_target(target);
}

py::object param_to_python(const WorkloadParam& p) {
    if (auto* i = std::get_if<int64_t>(&p)) return py::int_(*i);
    if (auto* d = std::get_if<double>(&p)) return py::float_(*d);
    if (auto* s = std::get_if<std::string>(&p)) return py::str(*s);
    if (auto* t = std::get_if<Type>(&p)) return py::str(t->str());
    return py::cast(std::get<std::vector<int64_t>>(p));
}

void def_elementwise(py::module_& m) {
    using UnaryFn = Tensor (*)(const Tensor&, const std::string&);
    const std::pair<const char*, UnaryFn> unary[] = {
        {"relu", &op::relu},        {"gelu", &op::gelu}, {"silu", &op::silu},
        {"sigmoid", &op::sigmoid},  {"tanh", &op::tanh}, {"exp", &op::exp},
        {"log", &op::log},          {"sqrt", &op::sqrt}, {"abs", &op::abs},
        {"negative", &op::negative}};
    for (auto [name, fn] : unary) m.def(name, fn, "x"_a, "name"_a = name);
    using BinaryFn = Tensor (*)(const Tensor&, const Tensor&, const std::string&);
    const std::pair<const char*, BinaryFn> binary[] = {
        {"add", &op::add},       {"subtract", &op::subtract}, {"multiply", &op::multiply},
        {"divide", &op::divide}, {"maximum", &op::maximum},   {"minimum", &op::minimum},
        {"power", &op::power}};
    for (auto [name, fn] : binary) m.def(name, fn, "a"_a, "b"_a, "name"_a = name);
    m.def(
        "cast",
        [](const Tensor& x, py::handle dtype, const std::string& name) {
            return op::cast(x, to_type(dtype), name);
        },
        "x"_a, "dtype"_a, "name"_a = "cast");
    m.def("clip", &op::clip, "x"_a, "lo"_a, "hi"_a, "name"_a = "clip");
    m.def("where", &op::where, "cond"_a, "a"_a, "b"_a, "name"_a = "where");
}

void def_matmul(py::module_& m) {
    for (auto [name, fn] :
         {std::pair{"matmul", &op::matmul}, std::pair{"batch_matmul", &op::batch_matmul}})
        m.def(
            name,
            [fn](const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                 py::object out_dtype, const std::string& name, py::object target,
                 bool allow_tf32) {
                return fn(a, b, transpose_a, transpose_b, opt_dtype(out_dtype), name,
                          opt_target(target), allow_tf32);
            },
            "a"_a, "b"_a, "transpose_a"_a = false, "transpose_b"_a = false,
            "out_dtype"_a = py::none(), "name"_a = name, "target"_a = py::none(), py::kw_only(),
            "allow_tf32"_a = false);
    m.def(
        "dense",
        [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias,
           const std::string& activation, py::object out_dtype, const std::string& name,
           py::object target, bool allow_tf32) {
            return op::dense(x, w, opt_tensor(bias), op::parse_activation(activation),
                             opt_dtype(out_dtype), name, opt_target(target), allow_tf32);
        },
        "x"_a, "weight"_a, "bias"_a = py::none(), "activation"_a = "none",
        "out_dtype"_a = py::none(), "name"_a = "dense", "target"_a = py::none(), py::kw_only(),
        "allow_tf32"_a = false);
}

void def_conv(py::module_& m) {
    for (auto [name, fn] :
         {std::pair{"conv2d_nchw", &op::conv2d_nchw}, std::pair{"conv2d_nhwc", &op::conv2d_nhwc},
          std::pair{"conv2d_nchwc", &op::conv2d_nchwc},
          std::pair{"conv2d_nchwc_winograd", &op::conv2d_nchwc_winograd},
          std::pair{"conv2d_nchw_winograd", &op::conv2d_nchw_winograd}})
        m.def(
            name,
            [fn](const Tensor& x, const Tensor& w, py::object stride, py::object padding,
                 py::object dilation, int64_t groups, py::object out_dtype,
                 const std::string& name) {
                return fn(x, w, conv_params(stride, padding, dilation, groups, out_dtype), name);
            },
            "x"_a, "w"_a, "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1, "groups"_a = 1,
            "out_dtype"_a = py::none(), "name"_a = name);
    m.def("nchw_to_nchwc", &op::nchw_to_nchwc, "x"_a, "block"_a, "name"_a = "nchw_to_nchwc");
    m.def("nchwc_to_nchw", &op::nchwc_to_nchw, "x"_a, "name"_a = "nchwc_to_nchw");
    m.def("conv2d_weight_to_nchwc", &op::conv2d_weight_to_nchwc, "w"_a, "cb"_a, "kb"_a,
          "name"_a = "conv2d_weight_to_nchwc");
    m.def(
        "depthwise_conv2d_nchw",
        [](const Tensor& x, const Tensor& w, py::object stride, py::object padding,
           py::object dilation, py::object out_dtype, const std::string& name) {
            return op::depthwise_conv2d_nchw(
                x, w, conv_params(stride, padding, dilation, 1, out_dtype), name);
        },
        "x"_a, "w"_a, "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1, "out_dtype"_a = py::none(),
        "name"_a = "depthwise_conv2d_nchw");
    m.def(
        "conv2d_transpose_nchw",
        [](const Tensor& x, const Tensor& w, py::object stride, py::object padding,
           py::object dilation, py::object output_padding, py::object out_dtype,
           const std::string& name) {
            return op::conv2d_transpose_nchw(x, w,
                                             conv_params(stride, padding, dilation, 1, out_dtype),
                                             to_array<2>(output_padding, "output_padding"), name);
        },
        "x"_a, "w"_a, "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1, "output_padding"_a = 0,
        "out_dtype"_a = py::none(), "name"_a = "conv2d_transpose_nchw");
}

// Quantized operators (op/Quantize.h): the tensors as ONNX's QLinear operators name them, the
// convolution's geometry as conv2d_nchw's.
void def_quantize(py::module_& m) {
    m.def("requantize", &op::requantize, "x"_a, "scale"_a, "zero_point"_a, "axis"_a = 1,
          "name"_a = "requantize");
    m.def(
        "qlinear_matmul",
        [](const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point, const Tensor& b,
           const Tensor& b_scale, const Tensor& b_zero_point, const Tensor& y_scale,
           const Tensor& y_zero_point, const std::string& name) {
            return op::qlinear_matmul(a, {a_scale, a_zero_point}, b, {b_scale, b_zero_point},
                                      {y_scale, y_zero_point}, name);
        },
        "a"_a, "a_scale"_a, "a_zero_point"_a, "b"_a, "b_scale"_a, "b_zero_point"_a, "y_scale"_a,
        "y_zero_point"_a, "name"_a = "qlinear_matmul");
    m.def(
        "qlinear_dense",
        [](const Tensor& x, const Tensor& x_scale, const Tensor& x_zero_point, const Tensor& w,
           const Tensor& w_scale, const Tensor& w_zero_point, const Tensor& y_scale,
           const Tensor& y_zero_point, std::optional<Tensor> B, const std::string& name) {
            return op::qlinear_dense(x, {x_scale, x_zero_point}, w, {w_scale, w_zero_point},
                                     {y_scale, y_zero_point}, opt_tensor(B), name);
        },
        "x"_a, "x_scale"_a, "x_zero_point"_a, "w"_a, "w_scale"_a, "w_zero_point"_a, "y_scale"_a,
        "y_zero_point"_a, "B"_a = py::none(), "name"_a = "qlinear_dense");
    m.def(
        "qlinear_conv2d_nchw",
        [](const Tensor& x, const Tensor& x_scale, const Tensor& x_zero_point, const Tensor& w,
           const Tensor& w_scale, const Tensor& w_zero_point, const Tensor& y_scale,
           const Tensor& y_zero_point, std::optional<Tensor> B, py::object stride,
           py::object padding, py::object dilation, int64_t groups, const std::string& name) {
            return op::qlinear_conv2d_nchw(
                x, {x_scale, x_zero_point}, w, {w_scale, w_zero_point}, {y_scale, y_zero_point},
                opt_tensor(B), conv_params(stride, padding, dilation, groups, py::none()), name);
        },
        "x"_a, "x_scale"_a, "x_zero_point"_a, "w"_a, "w_scale"_a, "w_zero_point"_a, "y_scale"_a,
        "y_zero_point"_a, "B"_a = py::none(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
        "groups"_a = 1, "name"_a = "qlinear_conv2d_nchw");
}

void def_pool(py::module_& m) {
    m.def(
        "pool2d",
        [](const Tensor& x, const std::string& kind, py::object window, py::object stride,
           py::object padding, bool count_include_pad, const std::string& name) {
            return op::pool2d(x, op::parse_pool_kind(kind), to_array<2>(window, "window"),
                              to_array<2>(stride.is_none() ? window : stride, "stride"),
                              to_array<4>(padding, "padding"), count_include_pad, name);
        },
        "x"_a, "kind"_a, "window"_a, "stride"_a = py::none(), "padding"_a = 0,
        "count_include_pad"_a = true, "name"_a = "");
    m.def(
        "global_pool2d",
        [](const Tensor& x, const std::string& kind, const std::string& name) {
            return op::global_pool2d(x, op::parse_pool_kind(kind), name);
        },
        "x"_a, "kind"_a = "avg", "name"_a = "");
    m.def(
        "adaptive_avg_pool2d",
        [](const Tensor& x, py::object size, const std::string& name) {
            auto s = to_array<2>(size, "output_size");
            return op::adaptive_avg_pool2d(x, s[0], s[1], name);
        },
        "x"_a, "output_size"_a, "name"_a = "adaptive_avg_pool2d");
}

void def_norm(py::module_& m) {
    m.def("softmax", &op::softmax, "x"_a, "axis"_a = -1, "name"_a = "softmax");
    m.def("log_softmax", &op::log_softmax, "x"_a, "axis"_a = -1, "name"_a = "log_softmax");
    m.def(
        "layer_norm",
        [](const Tensor& x, std::optional<Tensor> gamma, std::optional<Tensor> beta, double eps,
           const std::string& name) {
            return op::layer_norm(x, opt_tensor(gamma), opt_tensor(beta), eps, name);
        },
        "x"_a, "gamma"_a = py::none(), "beta"_a = py::none(), "eps"_a = 1e-5,
        "name"_a = "layer_norm");
    m.def(
        "rms_norm",
        [](const Tensor& x, std::optional<Tensor> gamma, double eps, const std::string& name) {
            return op::rms_norm(x, opt_tensor(gamma), eps, name);
        },
        "x"_a, "gamma"_a = py::none(), "eps"_a = 1e-6, "name"_a = "rms_norm");
    m.def("batch_norm", &op::batch_norm, "x"_a, "gamma"_a, "beta"_a, "mean"_a, "var"_a,
          "eps"_a = 1e-5, "axis"_a = 1, "name"_a = "batch_norm");
}

void def_reduce(py::module_& m) {
    for (auto [name, fn] : {std::pair{"sum", &op::sum}, std::pair{"mean", &op::mean}})
        m.def(
            name,
            [fn](const Tensor& x, py::object axis, bool keepdims, py::object out_dtype,
                 const std::string& name) {
                return fn(x, to_ints(axis, "axis"), keepdims, opt_dtype(out_dtype), name);
            },
            "x"_a, "axis"_a = py::none(), "keepdims"_a = false, "out_dtype"_a = py::none(),
            "name"_a = name);
    for (auto [name, fn] : {std::pair{"max", &op::max}, std::pair{"min", &op::min}})
        m.def(
            name,
            [fn](const Tensor& x, py::object axis, bool keepdims, const std::string& name) {
                return fn(x, to_ints(axis, "axis"), keepdims, name);
            },
            "x"_a, "axis"_a = py::none(), "keepdims"_a = false, "name"_a = name);
    m.def("argmax", &op::argmax, "x"_a, "axis"_a, "keepdims"_a = false, "name"_a = "argmax");
    m.def("argmin", &op::argmin, "x"_a, "axis"_a, "keepdims"_a = false, "name"_a = "argmin");
}

void def_transform(py::module_& m) {
    m.def(
        "transpose",
        [](const Tensor& x, py::object axes, const std::string& name) {
            return op::transpose(x, to_ints(axes, "axes"), name);
        },
        "x"_a, "axes"_a = py::none(), "name"_a = "transpose");
    m.def(
        "reshape",
        [](const Tensor& x, py::object shape, const std::string& name) {
            return op::reshape(x, to_ints(shape, "shape"), name);
        },
        "x"_a, "shape"_a, "name"_a = "reshape");
    m.def("concatenate", &op::concatenate, "xs"_a, "axis"_a = 0, "name"_a = "concatenate");
    m.def(
        "split",
        [](const Tensor& x, py::object parts, int64_t axis, const std::string& name) {
            if (py::isinstance<py::int_>(parts))
                return op::split_sections(x, parts.cast<int64_t>(), axis, name);
            return op::split(x, to_ints(parts, "indices_or_sections"), axis, name);
        },
        "x"_a, "indices_or_sections"_a, "axis"_a = 0, "name"_a = "split");
    m.def(
        "pad",
        [](const Tensor& x, py::object before, py::object after, double value,
           const std::string& name) {
            return op::pad(x, to_ints(before, "before"), to_ints(after, "after"), value, name);
        },
        "x"_a, "before"_a, "after"_a = py::none(), "value"_a = 0.0, "name"_a = "pad");
    m.def("take", &op::take, "x"_a, "indices"_a, "axis"_a = 0, "name"_a = "take");
}

}  // namespace

void init_op(py::module_& parent) {
    py::module_ m = parent.def_submodule("op", "The operator library (docs/operators.md).");
    def_elementwise(m);
    def_matmul(m);
    def_conv(m);
    def_quantize(m);
    def_pool(m);
    def_norm(m);
    def_reduce(m);
    def_transform(m);
    m.def(
        "default_schedule",
        [](py::object outputs, py::object target) {
            std::vector<Tensor> outs = py::isinstance<Tensor>(outputs)
                                           ? std::vector<Tensor>{outputs.cast<Tensor>()}
                                           : outputs.cast<std::vector<Tensor>>();
            return std::make_shared<Schedule>(op::default_schedule(outs, to_target(target)));
        },
        "outputs"_a, "target"_a = "llvm", "A default schedule of the outputs' DAG for `target`.");
    // Private: the tile sweep of benchmarks/experiments/matmul_tiles_cuda.py forces the GPU
    // default's float32 matmul tile (rows, row threads, row vthreads, cols, col threads, col
    // vthreads, bk), or None for the model's; returns the tile forced before.
    m.def(
        "_force_gpu_matmul_tile",
        [](std::optional<std::array<int64_t, 7>> t) -> py::object {
            std::optional<op::internal::GpuMatmulTile> tile;
            if (t) {
                const auto& v = *t;
                for (int64_t x : v)
                    if (x < 1) throw py::value_error("a tile's sizes must be positive");
                tile = op::internal::GpuMatmulTile{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
            }
            std::optional<op::internal::GpuMatmulTile> before =
                op::internal::force_gpu_matmul_tile(tile);
            if (!before) return py::none();
            const auto& b = *before;
            return py::make_tuple(b.rows, b.row_threads, b.row_vthreads, b.cols, b.col_threads,
                                  b.col_vthreads, b.bk);
        },
        "tile"_a);
    // Private: benchmarks/experiments/matmul_split_k_cuda.py's sweep: the GPU default's split-K
    // part length for every float32 product (0: no split), or None for the model's; returns the
    // length forced before.
    m.def(
        "_force_split_k_length",
        [](std::optional<int64_t> length) {
            if (length && *length < 0)
                throw py::value_error("a split-K part length must be 0 (no split) or positive");
            return op::internal::force_split_k_length(length);
        },
        "length"_a);
    // Private: the conv tile sweep of benchmarks/experiments/conv_tiles_cuda.py: the GPU default
    // takes the candidate of this rank in the model's order (None: the model's first); and the
    // candidates of a convolution, in that order, as (kb, tk, ph, th, pw, tw, bk, double buffer,
    // modelled cycles).
    m.def(
        "_force_gpu_conv_candidate",
        [](std::optional<size_t> rank) { return op::internal::force_conv_candidate(rank); },
        "rank"_a);
    m.def(
        "_gpu_conv_candidates",
        [](std::array<int64_t, 9> v, bool channels_last, py::object target) {
            op::internal::ConvDims d{v[0], v[1], v[2], v[3], v[4],
                                     v[5], v[6], v[7], v[8], channels_last};
            py::list out;
            for (const op::internal::ConvTiles& t :
                 op::internal::conv_tile_candidates(d, to_target(target)))
                out.append(py::make_tuple(t.kb, t.tk, t.ph, t.th, t.pw, t.tw, t.bk, t.double_buffer,
                                          t.cycles));
            return out;
        },
        "dims"_a, "channels_last"_a, "target"_a);
    // Private: benchmarks/experiments/conv_kernels_cuda.py: the GPU default's conv2d kernel,
    // "implicit_gemm" or "direct" (None: the default's choice); returns the one forced before.
    m.def(
        "_force_gpu_conv_kernel",
        [](std::optional<std::string> name) -> py::object {
            using K = op::internal::GpuConvKernel;
            std::optional<K> kernel;
            if (name && *name == "implicit_gemm")
                kernel = K::ImplicitGemm;
            else if (name && *name == "direct")
                kernel = K::Direct;
            else if (name)
                throw py::value_error("the kernel is 'implicit_gemm' or 'direct', not '" + *name +
                                      "'");
            std::optional<K> before = op::internal::force_gpu_conv_kernel(kernel);
            if (!before) return py::none();
            return py::str(*before == K::ImplicitGemm ? "implicit_gemm" : "direct");
        },
        "kernel"_a);
    m.def("network_preset_names", &op::network_preset_names);
    m.def(
        "network_preset",
        [](const std::string& name) {
            py::list layers;
            for (const op::PresetLayer& l : op::network_preset(name)) {
                py::list params;
                for (const WorkloadParam& p : l.params) params.append(param_to_python(p));
                layers.append(py::make_tuple(l.workload, params, l.count));
            }
            return layers;
        },
        "name"_a, "The distinct layers of a network: [(workload, params, count), ...].");
}

}  // namespace tessel::python
