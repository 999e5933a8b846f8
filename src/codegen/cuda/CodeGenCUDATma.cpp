// Hopper's mbarriers and TMA bulk tensor copies in CUDA C (ir/IR.h): inline PTX, with the tensor
// maps the copies read as __grid_constant__ parameters the launch plan describes
// (runtime/CudaLaunchPlan.h, CudaTensorMap).
#include "codegen/cuda/CodeGenCUDAImpl.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRVisitor.h"

namespace tessel::internal {

namespace {

int64_t const_arg(const Call* op, size_t i) {
    return as_const_int(op->args[i]).value();
}

}  // namespace

CodeGenCUDA::TmaMap CodeGenCUDA::tma_map_of(const Call* op, size_t at) const {
    TmaMap m;
    m.src = op->args[2].as<Variable>();
    m.swizzle = static_cast<int>(const_arg(op, at));
    const int64_t rank = const_arg(op, at + 1);
    for (int64_t t = 0; t < rank; ++t) m.box.push_back(const_arg(op, at + 2 + t));
    return m;
}

const CodeGenCUDA::TmaMap& CodeGenCUDA::find_tma_map(const Call* op, size_t at) const {
    const TmaMap want = tma_map_of(op, at);
    for (const TmaMap& m : tma_maps_)
        if (m.src == want.src && m.box == want.box && m.swizzle == want.swizzle) return m;
    TESSEL_THROW(InternalError) << intrinsic_name(op->op) << " without its tensor map";
}

// Every distinct (tensor, box, swizzle) a tma_load reads or a tma_store writes gets a tensor map
// parameter; the tensors need 16-byte aligned addresses (CudaCode::arg_alignment).
void CodeGenCUDA::collect_tma_maps(const Stmt& body) {
    post_order_visit(body, [&](const IRNode* n) {
        if (n->node_type != IRNodeType::Call) return;
        const Call* op = static_cast<const Call*>(n);
        if (op->op != Intrinsic::tma_load && op->op != Intrinsic::tma_store) return;
        TmaMap m = tma_map_of(op, op->op == Intrinsic::tma_load ? 5 : 3);
        for (const TmaMap& seen : tma_maps_)
            if (seen.src == m.src && seen.box == m.box && seen.swizzle == m.swizzle) return;
        auto p = global_param_.find(m.src);
        if (p == global_param_.end() || p->second >= static_cast<int>(f_.args.size()))
            TESSEL_THROW(CompileError)
                << "cuda: kernel " << kernel_->name << ": " << intrinsic_name(op->op)
                << (op->op == Intrinsic::tma_load ? " from " : " into ") << m.src->name
                << ", which is not an argument of '" << f_.name
                << "' (TMA copies the kernel's argument tensors)";
        arg_alignment_[p->second] = std::max<int64_t>(arg_alignment_[p->second], 16);
        m.name = "tsl_tmap_" + std::to_string(tma_maps_.size());
        tma_maps_.push_back(m);
    });
}

// The launch plan's description of map `m`: the argument's shape innermost first, its byte
// strides (compact row-major unless the buffer has strides), the box and the swizzle.
CudaTensorMap CodeGenCUDA::tensor_map(const TmaMap& m) const {
    const int param = global_param_.at(m.src);
    const Buffer& b = f_.args[param];
    const size_t rank = b->shape.size();
    if (rank != m.box.size())
        TESSEL_THROW(CompileError) << "cuda: tma_load of rank " << m.box.size() << " from "
                                   << b.name() << ", which has " << rank << " dimensions";
    CudaTensorMap out;
    out.buffer = param;
    out.dtype = b.dtype().str();
    out.box = m.box;
    out.swizzle_bytes = m.swizzle;
    const std::string what = "the shape of TMA tensor " + b.name();
    Expr stride = make_const(Int(64), b.dtype().bytes());
    for (size_t t = 0; t < rank; ++t) {
        const size_t d = rank - 1 - t;
        Expr extent = tessel::cast(Int(64), b->shape[d]);
        if (t > 0) {
            Expr s = b->strides.empty() ? stride
                                        : tessel::cast(Int(64), b->strides[d]) *
                                              make_const(Int(64), b.dtype().bytes());
            out.strides.push_back(to_launch_expr(simplify(s), shape_vars_, what));
        }
        out.dims.push_back(to_launch_expr(simplify(extent), shape_vars_, what));
        stride = stride * extent;
    }
    return out;
}

std::string CodeGenCUDA::shared_address(const Expr& buffer, const Expr& index) {
    const Variable* v = buffer.as<Variable>();
    const std::string b = name_of(v);
    return "(unsigned)__cvta_generic_to_shared(" + b + ") + (unsigned)(" + index_expr(index) +
           ") * (unsigned)sizeof(*" + b + ")";
}

void CodeGenCUDA::tma(const Call* op) {
    if (op->op == Intrinsic::tma_load) return tma_load(op);
    if (op->op == Intrinsic::tma_store) return tma_store(op);
    if (op->op == Intrinsic::tma_store_wait) {
        flush_pre();
        return line(
            "asm volatile(\"cp.async.bulk.commit_group;\\n"
            "cp.async.bulk.wait_group.read 0;\\n\" ::: \"memory\");");
    }
    const std::string bar = shared_address(op->args[0], op->args[1]);
    if (op->op == Intrinsic::mbarrier_arrive) {
        flush_pre();
        return line("asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" :: \"r\"(" + bar +
                    ") : \"memory\");");
    }
    const std::string n = index_expr(op->args[2]);
    flush_pre();
    if (op->op == Intrinsic::mbarrier_init) {
        line("asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" :: \"r\"(" + bar +
             "), \"r\"((unsigned)(" + n + ")) : \"memory\");");
        // The barrier's init visible to the asynchronous proxy (TMA completes on it).
        line(
            "asm volatile(\"fence.mbarrier_init.release.cluster;\\n"
            "fence.proxy.async.shared::cta;\\n\" ::: \"memory\");");
    } else if (op->op == Intrinsic::mbarrier_expect_tx) {
        line(
            "asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" :: "
            "\"r\"(" +
            bar + "), \"r\"((unsigned)(" + n + ")) : \"memory\");");
    } else {
        line("tsl_mbarrier_wait(" + bar + ", (unsigned)(" + n + "));");
    }
}

// A tma_load's or tma_store's shared buffer (its first argument) aligned for TMA, and its box's
// coordinates (after the swizzle at `at`, the rank and the box) as asm operands from %first on:
// "{%3, %4}", and their inputs.
std::pair<std::string, std::string> CodeGenCUDA::tma_coords(const Call* op, size_t at, int first) {
    for (SharedArray& s : shared_)
        if (s.name == name_of(op->args[0].as<Variable>()))
            s.align = std::max<int64_t>(s.align, 1024);
    const int64_t rank = const_arg(op, at + 1);
    std::string operands = "{", inputs;
    for (int64_t t = 0; t < rank; ++t) {
        operands += (t ? ", %" : "%") + std::to_string(first + t);
        inputs += ", \"r\"((int)(" + index_expr(op->args[at + 2 + rank + t]) + "))";
    }
    return {operands + "}", inputs};
}

// cp.async.bulk.tensor (sm_90): the destination and the barrier as 32-bit shared addresses, the
// tensor map by its generic address (a __grid_constant__ parameter), the box's coordinates
// innermost first.
void CodeGenCUDA::tma_load(const Call* op) {
    const TmaMap& map = find_tma_map(op, 5);
    const std::string to = shared_address(op->args[0], op->args[1]);
    const std::string bar = shared_address(op->args[3], op->args[4]);
    const auto [coords, inputs] = tma_coords(op, 5, 3);
    flush_pre();
    line("asm volatile(\"cp.async.bulk.tensor." + std::to_string(const_arg(op, 6)) +
         "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, " + coords +
         "], [%2];\\n\" :: \"r\"(" + to + "), \"l\"((unsigned long long)&" + map.name +
         "), \"r\"(" + bar + ")" + inputs + " : \"memory\");");
}

// cp.async.bulk.tensor from shared memory (sm_90): the box at a 32-bit shared address into the
// tensor map's tensor at the coordinates (innermost first), completing in the thread's bulk
// group (tma_store_wait).
void CodeGenCUDA::tma_store(const Call* op) {
    const TmaMap& map = find_tma_map(op, 3);
    const std::string from = shared_address(op->args[0], op->args[1]);
    const auto [coords, inputs] = tma_coords(op, 3, 2);
    flush_pre();
    line("asm volatile(\"cp.async.bulk.tensor." + std::to_string(const_arg(op, 4)) +
         "d.global.shared::cta.tile.bulk_group [%0, " + coords + "], [%1];\\n\" :: \"l\"(" +
         "(unsigned long long)&" + map.name + "), \"r\"(" + from + ")" + inputs +
         " : \"memory\");");
}

}  // namespace tessel::internal

namespace tessel::internal {

const char* cuda_tma_prelude() {
    return R"CUDA(// TMA (sm_90): a tensor map parameter (CUtensorMap's 128 bytes) and the mbarrier wait.
struct __align__(64) tsl_tensor_map { unsigned long long v[16]; };
__device__ __forceinline__ void tsl_mbarrier_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
)CUDA";
}

}  // namespace tessel::internal
