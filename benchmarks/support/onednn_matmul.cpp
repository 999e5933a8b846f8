// oneDNN's matmul primitive for the Python CPU benchmarks, loaded through ctypes
// (benchmarks/support/onednn_sgemm.py); built by benchmarks/run.sh for the Python benchmarks
// (target tessel_bench_onednn). Two kinds:
//  - float32 (ops_default_cpu): a batch of row-major products C = A · B (B transposed: A · Bᵀ,
//    dense's weight), with dense's bias and a GELU (erf) after the product where asked, as
//    oneDNN's post-ops: the same computation as tessel's op.dense(x, w, bias, activation="gelu").
//    Plain layouts as the arrays come (no reorder: the weights are not packed outside the timing,
//    as tessel packs them inside its call).
//  - packed (gemm_lowp_cpu): one product of the data types asked (u8 · s8 -> s32, bf16 · bf16 ->
//    f32 or bf16), the weights in the layout oneDNN's implementation prefers (format_tag::any),
//    reordered once from the plain layout before the timing, as an inference engine holds them.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>

namespace {

struct Matmul {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    dnnl::matmul primitive;
    dnnl::memory src, weights, bias, dst;
    bool has_bias = false;
};

// A product whose weights live in the primitive's own layout (`weights`, owned), reordered from
// the caller's plain array by set_weights.
struct PackedMatmul {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    dnnl::matmul primitive;
    dnnl::memory::desc plain_weights;
    dnnl::memory src, weights, dst;
    std::string impl;
};

// oneDNN's data type for numpy's name of it; undef for one the helper does not take.
dnnl::memory::data_type data_type_named(const char* name) {
    using dt = dnnl::memory::data_type;
    const struct {
        const char* name;
        dt type;
    } table[] = {{"uint8", dt::u8},
                 {"int8", dt::s8},
                 {"int32", dt::s32},
                 {"float32", dt::f32},
                 {"bfloat16", dt::bf16}};
    for (const auto& e : table)
        if (std::strcmp(e.name, name) == 0) return e.type;
    return dt::undef;
}

}  // namespace

extern "C" {

/// A matmul of `batch` products (m x k) · (k x n), B given as [batch][n][k] when `transpose_b`;
/// with a bias of n values and a GELU after it when asked. Null (and a message) on failure.
void* tessel_bench_matmul_create(int64_t batch, int64_t m, int64_t n, int64_t k, int transpose_b,
                                 int bias, int gelu) {
    try {
        using dt = dnnl::memory::data_type;
        using tag = dnnl::memory::format_tag;
        auto* mm = new Matmul;
        dnnl::memory::desc src({batch, m, k}, dt::f32, tag::abc);
        dnnl::memory::desc weights({batch, k, n}, dt::f32, transpose_b ? tag::acb : tag::abc);
        dnnl::memory::desc dst({batch, m, n}, dt::f32, tag::abc);
        dnnl::memory::desc bias_md({1, 1, n}, dt::f32, tag::abc);
        dnnl::primitive_attr attr;
        if (gelu) {
            dnnl::post_ops ops;
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
            attr.set_post_ops(ops);
        }
        dnnl::matmul::desc desc = bias ? dnnl::matmul::desc(src, weights, bias_md, dst)
                                       : dnnl::matmul::desc(src, weights, dst);
        dnnl::matmul::primitive_desc pd(desc, attr, mm->engine);
        mm->primitive = dnnl::matmul(pd);
        mm->src = dnnl::memory(src, mm->engine, nullptr);
        mm->weights = dnnl::memory(weights, mm->engine, nullptr);
        mm->dst = dnnl::memory(dst, mm->engine, nullptr);
        mm->has_bias = bias != 0;
        if (bias) mm->bias = dnnl::memory(bias_md, mm->engine, nullptr);
        return mm;
    } catch (const dnnl::error& e) {
        std::fprintf(stderr, "oneDNN matmul: %s\n", e.what());
        return nullptr;
    }
}

/// Runs it on the arrays (bias ignored without one); 0 on success.
int tessel_bench_matmul_run(void* handle, const float* a, const float* b, const float* bias,
                            float* c) {
    auto* mm = static_cast<Matmul*>(handle);
    try {
        mm->src.set_data_handle(const_cast<float*>(a));
        mm->weights.set_data_handle(const_cast<float*>(b));
        mm->dst.set_data_handle(c);
        std::unordered_map<int, dnnl::memory> args = {
            {DNNL_ARG_SRC, mm->src}, {DNNL_ARG_WEIGHTS, mm->weights}, {DNNL_ARG_DST, mm->dst}};
        if (mm->has_bias) {
            mm->bias.set_data_handle(const_cast<float*>(bias));
            args[DNNL_ARG_BIAS] = mm->bias;
        }
        mm->primitive.execute(mm->stream, args);
        mm->stream.wait();
        return 0;
    } catch (const dnnl::error& e) {
        std::fprintf(stderr, "oneDNN matmul: %s\n", e.what());
        return 1;
    }
}

void tessel_bench_matmul_destroy(void* handle) {
    delete static_cast<Matmul*>(handle);
}

/// A matmul (m x k) · (k x n) -> (m x n) of the data types named as numpy names them: src
/// "uint8" with weights "int8" and dst "int32", or src and weights "bfloat16" with dst "float32"
/// or "bfloat16". The weights come as [k][n], or [n][k] when `transpose_b`, and are reordered into
/// the layout the implementation asks for (format_tag::any) by tessel_bench_packed_set_weights.
/// Null (and a message) on failure, e.g. a combination oneDNN does not implement on this CPU.
void* tessel_bench_packed_create(int64_t m, int64_t n, int64_t k, const char* src_type,
                                 const char* weights_type, const char* dst_type, int transpose_b) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const dt src_dt = data_type_named(src_type), weights_dt = data_type_named(weights_type),
             dst_dt = data_type_named(dst_type);
    if (src_dt == dt::undef || weights_dt == dt::undef || dst_dt == dt::undef) {
        std::fprintf(stderr, "oneDNN matmul: data types %s, %s, %s not taken\n", src_type,
                     weights_type, dst_type);
        return nullptr;
    }
    try {
        auto* mm = new PackedMatmul;
        dnnl::memory::desc src({m, k}, src_dt, tag::ab);
        dnnl::memory::desc weights({k, n}, weights_dt, tag::any);
        dnnl::memory::desc dst({m, n}, dst_dt, tag::ab);
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), mm->engine);
        mm->primitive = dnnl::matmul(pd);
        mm->impl = pd.impl_info_str();
        mm->plain_weights = dnnl::memory::desc({k, n}, weights_dt, transpose_b ? tag::ba : tag::ab);
        mm->src = dnnl::memory(src, mm->engine, nullptr);
        mm->weights = dnnl::memory(pd.weights_desc(), mm->engine);  // allocated by oneDNN
        mm->dst = dnnl::memory(dst, mm->engine, nullptr);
        return mm;
    } catch (const dnnl::error& e) {
        std::fprintf(stderr, "oneDNN matmul: %s\n", e.what());
        return nullptr;
    }
}

/// The name of the implementation oneDNN chose, as its verbose output prints it (e.g.
/// "brg:avx512_core_vnni").
const char* tessel_bench_packed_impl(void* handle) {
    return static_cast<PackedMatmul*>(handle)->impl.c_str();
}

/// Reorders the plain weights `b` into the primitive's layout (a reorder primitive, run once:
/// outside any timing); 0 on success.
int tessel_bench_packed_set_weights(void* handle, const void* b) {
    auto* mm = static_cast<PackedMatmul*>(handle);
    try {
        dnnl::memory plain(mm->plain_weights, mm->engine, const_cast<void*>(b));
        dnnl::reorder(plain, mm->weights).execute(mm->stream, plain, mm->weights);
        mm->stream.wait();
        return 0;
    } catch (const dnnl::error& e) {
        std::fprintf(stderr, "oneDNN reorder: %s\n", e.what());
        return 1;
    }
}

/// c = a · the weights last set; 0 on success.
int tessel_bench_packed_run(void* handle, const void* a, void* c) {
    auto* mm = static_cast<PackedMatmul*>(handle);
    try {
        mm->src.set_data_handle(const_cast<void*>(a));
        mm->dst.set_data_handle(c);
        mm->primitive.execute(
            mm->stream,
            {{DNNL_ARG_SRC, mm->src}, {DNNL_ARG_WEIGHTS, mm->weights}, {DNNL_ARG_DST, mm->dst}});
        mm->stream.wait();
        return 0;
    } catch (const dnnl::error& e) {
        std::fprintf(stderr, "oneDNN matmul: %s\n", e.what());
        return 1;
    }
}

void tessel_bench_packed_destroy(void* handle) {
    delete static_cast<PackedMatmul*>(handle);
}

/// oneDNN's verbose level from now on (ONEDNN_VERBOSE's, which the library reads once); then
/// flushes stdout, where the verbose lines go, so that they are out before the caller's next line.
void tessel_bench_set_verbose(int level) {
    dnnl::set_verbose(level);
    std::fflush(stdout);
}

}  // extern "C"
