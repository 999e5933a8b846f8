// Tensor-core intrinsics (ir/IR.h) as CUDA C with inline PTX (sm_80+): mma.sync.aligned
// m16n8k16 (f16, bf16) and m16n8k8 (tf32) with float32 accumulation, ldmatrix.sync.aligned.m8n8
// (.x4 for A fragments, .x2 and .x2.trans for B), and per-lane fragment loads, stores and fills
// following ir/Fragment.h. A warp buffer is a local array of N / 32 elements per thread
// (allocate), 16-bit fragments packed in pairs into the 32-bit registers the instructions take.
// Fragment register indices are constants once the loops around the intrinsics are unrolled,
// which keeps the arrays in registers.
#include "codegen/cuda/CodeGenCUDAImpl.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/Fragment.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/StorageFlatten.h"

namespace tessel::internal {

namespace {

FragmentKind kind_arg(const Call* op, size_t a) {
    FragmentKind k = FragmentKind::C;
    fragment_kind_from_int(as_const_int(op->args[a]).value(), &k);
    return k;
}

// Row and column of element e of lane (g = lane / 4, t = lane % 4) as C expressions.
std::pair<std::string, std::string> element_expr(FragmentKind k, int e) {
    // fragment_element is affine in g and t: read its offsets from lanes 0, 4 (g + 1), 1 (t + 1).
    FragmentPos p0 = fragment_element(k, 0, e), pg = fragment_element(k, 4, e);
    FragmentPos pt = fragment_element(k, 1, e);
    auto term = [](int base, int dg, int dt) {
        std::string s = std::to_string(base);
        if (dg) s += " + " + std::to_string(dg) + " * tsl_g";
        if (dt) s += " + " + std::to_string(dt) + " * tsl_t";
        return "(" + s + ")";
    };
    return {term(p0.row, pg.row - p0.row, pt.row - p0.row),
            term(p0.col, pg.col - p0.col, pt.col - p0.col)};
}

}  // namespace

// A tile operand's buffer, origin and row stride (ir/IR.h).
CodeGenCUDA::TileExpr CodeGenCUDA::tile(const Call* op, size_t a) {
    const Load* l0 = op->args[a].as<Load>();
    const Load* l1 = op->args[a + 1].as<Load>();
    if (!l0 || !l1 || !l0->buffer_var.same_as(l1->buffer_var))
        TESSEL_THROW(CompileError) << "cuda: " << intrinsic_name(op->op) << ": argument " << a
                                   << " is not a flattened tile operand";
    TileExpr t;
    t.buf = name_of(l0->buffer_var.get());
    t.elem = l0->type.element_of();
    Expr i0 = l0->index, i1 = l1->index;
    BufferSwizzle z0, z1;
    Expr y0, y1;  // whole phase cycles outside the swizzle
    Expr u0 = unswizzled_index(i0, &z0, &y0), u1 = unswizzled_index(i1, &z1, &y1);
    if (u0.defined() || u1.defined()) {  // a swizzled buffer (ir/IR.h): each lane swizzles
        if (!u0.defined() || !u1.defined() || !(z0 == z1))
            TESSEL_THROW(CompileError) << "cuda: " << intrinsic_name(op->op) << ": argument " << a
                                       << " swizzles the rows of its tile differently";
        i0 = u0;
        i1 = u1;
        t.wide_swizzle = i0.type().bits > 32;  // 32-bit address arithmetic where it fits
        const char* u = t.wide_swizzle ? "ull" : "u";
        for (int64_t v : {z0.vector, z0.span, z0.phases}) t.swizzle += ", " + std::to_string(v) + u;
    }
    t.origin_ir = i0;
    t.stride_ir = simplify(i1 - i0);
    t.origin = index_expr(i0);
    t.stride = index_expr(t.stride_ir);
    // swizzle(x) + y (the simplifier moved whole phase cycles y out, x >= 0 proven): each lane's
    // address keeps y outside its swizzle, so unrolled tiles share one swizzled base and a
    // pipelined loop's stage offset stays out of it (the rest is loop-invariant).
    // A tile whose origin is all whole cycles but a constant (the simplifier leaves such a swizzle
    // whole, as swizzle(constant) would fold away) is split here the same way.
    if (!t.swizzle.empty() && is_zero(y0)) {
        Expr rest;
        Expr whole = split_whole_cycles(u0, z0, &rest);
        if (auto c = as_const_int(simplify(rest)); whole.defined() && c) {
            const int64_t cycle = z0.span * z0.phases;
            const int64_t inside =
                ((*c % cycle) + cycle) % cycle;  // the origin's offset in its cycle
            y0 = simplify(whole + make_const(whole.type(), *c - inside));
        }
    }
    if (!t.swizzle.empty() && !is_zero(y0)) {
        t.origin = index_expr(simplify(u0 - y0));
        t.swizzle_add = " + " + index_expr(y0);
    }
    return t;
}

std::string CodeGenCUDA::tile_address(const TileExpr& t, const std::string& offset) {
    if (t.swizzle.empty()) return offset;
    return std::string("(tsl_swizzle(") + (t.wide_swizzle ? "(long long)(" : "(int)(") + offset +
           ")" + t.swizzle + ")" + t.swizzle_add + ")";
}

// The lane-local register index of the fragment a warp tile names (ir/Fragment.h).
std::string CodeGenCUDA::fragment_base(const TileExpr& t, FragmentKind k) {
    const FragmentShape f = fragment_shape(k);
    const Expr& o = t.origin_ir;
    const Expr& s = t.stride_ir;
    Type it = o.type();
    auto c = [&](int64_t v) { return make_const(it, v); };
    if (k == FragmentKind::B16T) {  // a half of the B16x2T grid's tile (ir/Fragment.h)
        Expr row = FloorDiv::make(o, s);
        Expr b16 = (FloorDiv::make(row, c(16)) * FloorDiv::make(s, c(16)) +
                    FloorDiv::make(FloorMod::make(o, s), c(16))) *
                       c(8) +
                   FloorMod::make(FloorDiv::make(row, c(8)), c(2)) * c(4);
        return index_expr(simplify(b16));
    }
    Expr base = (FloorDiv::make(FloorDiv::make(o, s), c(f.rows)) * FloorDiv::make(s, c(f.cols)) +
                 FloorDiv::make(FloorMod::make(o, s), c(f.cols))) *
                c(f.elems_per_lane);
    return index_expr(simplify(base));
}

void CodeGenCUDA::tensor_core(const Call* op) {
    switch (op->op) {
        case Intrinsic::mma_sync: return mma_sync(op);
        case Intrinsic::ldmatrix: return ldmatrix(op);
        default: break;
    }
    const FragmentKind k = kind_arg(op, 0);
    const FragmentShape f = fragment_shape(k);
    TileExpr d = tile(op, 1);
    flush_pre();
    line("{");
    ++indent_;
    if (op->op == Intrinsic::fragment_fill) {
        std::string v = expr(op->args[3]);
        line("const int tsl_r = " + fragment_base(d, k) + ";");
        line("for (int e = 0; e < " + std::to_string(f.elems_per_lane) + "; ++e) " + d.buf +
             "[tsl_r + e] = " + to_memory(v, d.elem) + ";");
    } else {
        TileExpr s = tile(op, 3);
        const bool load = op->op == Intrinsic::fragment_load;
        const TileExpr& frag = load ? d : s;
        const TileExpr& mem = load ? s : d;
        line(
            "const int tsl_lane = (int)tsl_laneid(), tsl_g = tsl_lane >> 2, tsl_t = tsl_lane & 3;");
        line("const int tsl_r = " + fragment_base(frag, k) + ";");
        line("const long long tsl_o = " + mem.origin + ", tsl_s = " + mem.stride + ";");
        for (int e = 0; e < f.elems_per_lane; ++e) {
            auto [row, col] = element_expr(k, e);
            std::string m =
                mem.buf + "[" + tile_address(mem, "tsl_o + " + row + " * tsl_s + " + col) + "]";
            std::string r = frag.buf + "[tsl_r + " + std::to_string(e) + "]";
            if (load) {
                line(r + " = " + m + ";");  // the same element type: the bits
            } else {
                line(m + " = " + to_memory(from_memory(r, s.elem), d.elem) + ";");
            }
        }
    }
    --indent_;
    line("}");
}

void CodeGenCUDA::mma_sync(const Call* op) {
    TileExpr d = tile(op, 0), a = tile(op, 2), b = tile(op, 4), c = tile(op, 6);
    const bool tf32 = a.elem.bits == 32;
    const FragmentKind ka = tf32 ? FragmentKind::A8 : FragmentKind::A16;
    const FragmentKind kb = op->args.size() > 8 ? kind_arg(op, 8)
                            : tf32              ? FragmentKind::B8
                                                : FragmentKind::B16;
    std::string fn = tf32 ? "tsl_mma_tf32" : a.elem.is_bfloat() ? "tsl_mma_bf16" : "tsl_mma_f16";
    flush_pre();
    line(fn + "(" + d.buf + " + " + fragment_base(d, FragmentKind::C) + ", " + a.buf + " + " +
         fragment_base(a, ka) + ", " + b.buf + " + " + fragment_base(b, kb) + ", " + c.buf + " + " +
         fragment_base(c, FragmentKind::C) + ");");
}

void CodeGenCUDA::ldmatrix(const Call* op) {
    const FragmentKind k = kind_arg(op, 0);
    const bool trans = as_const_int(op->args[1]).value() != 0;
    if (k != FragmentKind::A16 && k != FragmentKind::B16 && k != FragmentKind::B16x2 &&
        k != FragmentKind::B16T && k != FragmentKind::B16x2T)
        TESSEL_THROW(CompileError)
            << "cuda: ldmatrix of a " << fragment_kind_name(k) << " fragment (A16 or B16 expected)";
    if ((k == FragmentKind::A16 || k == FragmentKind::B16T || k == FragmentKind::B16x2T) && trans)
        TESSEL_THROW(CompileError) << "cuda: transposed ldmatrix of " << fragment_kind_name(k)
                                   << " fragments is not supported";
    TileExpr d = tile(op, 2), s = tile(op, 4);
    flush_pre();
    line("{");
    ++indent_;
    line("const int tsl_lane = (int)tsl_laneid();");
    // The row this lane's address names (the interpreter's ldmatrix follows the same rule).
    std::string row, col;
    // B16T and B16x2T load the same registers as B16 and B16x2 from an n-major tile: only the
    // destination buffer is indexed [n][k].
    if ((k == FragmentKind::B16x2 && !trans) || k == FragmentKind::B16x2T) {
        row = "((tsl_lane & 7) + ((tsl_lane >> 4) * 8))";
        col = "(((tsl_lane >> 3) & 1) * 8)";
    } else if (k != FragmentKind::B16 && k != FragmentKind::B16T) {
        row = "(tsl_lane & 15)";
        col = "((tsl_lane >> 4) * 8)";
    } else if (trans) {
        row = "(tsl_lane & 15)";
        col = "0";
    } else {
        row = "(tsl_lane & 7)";
        col = "(((tsl_lane >> 3) & 1) * 8)";
    }
    // 32-bit shared addressing: the buffer's window offset (loop-invariant) plus bytes; in a
    // swizzled buffer each lane swizzles its own element index.
    line("const unsigned tsl_a = tsl_smem(" + s.buf + ") + (unsigned)(" +
         tile_address(s, "(" + s.origin + ") + " + row + " * (" + s.stride + ") + " + col) +
         ") * (unsigned)sizeof(*" + s.buf + ");");
    const bool x2 = k == FragmentKind::B16 || k == FragmentKind::B16T;
    std::string fn = x2 ? (trans ? "tsl_ldmatrix_x2_trans" : "tsl_ldmatrix_x2")
                        : (trans ? "tsl_ldmatrix_x4_trans" : "tsl_ldmatrix_x4");
    line(fn + "(" + d.buf + " + " + fragment_base(d, k) + ", tsl_a);");
    --indent_;
    line("}");
}

const char* cuda_tensor_core_prelude() {
    return R"CUDA(// Tensor cores (sm_80+): fragments of 16-bit values are unsigned short arrays.
// Not volatile: the lane number is a pure value, so repeated reads fold into one.
__device__ __forceinline__ unsigned tsl_laneid() {
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}
__device__ __forceinline__ unsigned tsl_smem(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}
#if __CUDA_ARCH__ >= 800
#define TSL_MMA_16(NAME, TY)                                                                  \
    __device__ __forceinline__ void NAME(float* d, const unsigned short* a,                   \
                                         const unsigned short* b, const float* c) {           \
        const unsigned* A = reinterpret_cast<const unsigned*>(a);                             \
        const unsigned* B = reinterpret_cast<const unsigned*>(b);                             \
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 "              \
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"   \
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                         \
                     : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]),      \
                       "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));                           \
    }
TSL_MMA_16(tsl_mma_f16, "f16")
TSL_MMA_16(tsl_mma_bf16, "bf16")
__device__ __forceinline__ unsigned tsl_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ void tsl_mma_tf32(float* d, const float* a, const float* b,
                                             const float* c) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(tsl_tf32(a[0])), "r"(tsl_tf32(a[1])), "r"(tsl_tf32(a[2])),
                   "r"(tsl_tf32(a[3])), "r"(tsl_tf32(b[0])), "r"(tsl_tf32(b[1])), "f"(c[0]),
                   "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
#endif
__device__ __forceinline__ void tsl_ldmatrix_x4(unsigned short* d, unsigned a) {
    unsigned* D = reinterpret_cast<unsigned*>(d);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3])
                 : "r"(a));
}
__device__ __forceinline__ void tsl_ldmatrix_x4_trans(unsigned short* d, unsigned a) {
    unsigned* D = reinterpret_cast<unsigned*>(d);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3])
                 : "r"(a));
}
__device__ __forceinline__ void tsl_ldmatrix_x2(unsigned short* d, unsigned a) {
    unsigned* D = reinterpret_cast<unsigned*>(d);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(D[0]), "=r"(D[1])
                 : "r"(a));
}
__device__ __forceinline__ void tsl_ldmatrix_x2_trans(unsigned short* d, unsigned a) {
    unsigned* D = reinterpret_cast<unsigned*>(d);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(D[0]), "=r"(D[1])
                 : "r"(a));
}

)CUDA";
}

}  // namespace tessel::internal
