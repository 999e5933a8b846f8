// oneDNN's matmul primitive for the Python CPU benchmarks (ops_default_cpu): a batch of row-major
// products C = A · B (B transposed: A · Bᵀ, dense's weight), with dense's bias and a GELU (erf)
// after the product where asked, as oneDNN's post-ops: the same computation as tessel's
// op.dense(x, w, bias, activation="gelu"). Plain layouts as the arrays come (no reorder: the
// weights are not packed outside the timing, as tessel packs them inside its call). Loaded
// through ctypes (benchmarks/support/onednn_sgemm.py); built by benchmarks/run.sh for the Python
// benchmarks (target tessel_bench_onednn).
#include <cstdint>
#include <cstdio>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

namespace {

struct Matmul {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    dnnl::matmul primitive;
    dnnl::memory src, weights, bias, dst;
    bool has_bias = false;
};

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

}  // extern "C"
