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
#include "tessel/ir/IRMutator.h"
#include "tessel/ir/IROperator.h"
#include "tessel/ir/IRPrinter.h"
#include "tessel/ir/IRVisitor.h"
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
        case Intrinsic::wgmma: return wgmma(op);
        case Intrinsic::wgmma_fence:
            flush_pre();
            wgmma_fence_accumulators();
            return line("asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");");
        case Intrinsic::wgmma_commit:
            flush_pre();
            return line("asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");");
        case Intrinsic::wgmma_wait:
            flush_pre();
            line("asm volatile(\"wgmma.wait_group.sync.aligned " +
                 std::to_string(*as_const_int(op->args[0])) + ";\\n\" ::: \"memory\");");
            return wgmma_fence_accumulators();
        default: break;
    }
    const FragmentKind k = kind_arg(op, 0);
    const FragmentShape f = fragment_shape(k);
    TileExpr d = tile(op, 1);
    // A store at its tensor's edge: its rows and columns (ir/IR.h).
    const bool edge = op->op == Intrinsic::fragment_store && op->args.size() == 7;
    const std::string rows = edge ? expr(op->args[5]) : "", cols = edge ? expr(op->args[6]) : "";
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
        const bool pairs = !load && paired_store(op, k, d);
        auto reg = [&](int i) { return frag.buf + "[tsl_r + " + std::to_string(i) + "]"; };
        auto value = [&](int i) { return to_memory(from_memory(reg(i), s.elem), d.elem); };
        auto address = [&](const std::string& row, const std::string& col) {
            return mem.buf + "[" + tile_address(mem, "tsl_o + " + row + " * tsl_s + " + col) + "]";
        };
        auto store_pair = [&](const std::string& m, int e) {
            if (d.elem.bits == 32) {
                // Global memory through __stwb: a float2 assignment can come out of NVVM as two
                // 4-byte stores.
                const std::string to = "reinterpret_cast<float2*>(&" + m + ")";
                const std::string v = "make_float2(" + value(e) + ", " + value(e + 1) + ")";
                line(global_tile(op->args[1]) ? "__stwb(" + to + ", " + v + ");"
                                              : "*" + to + " = " + v + ";");
            } else {  // two 16-bit values in one 32-bit store
                line("*reinterpret_cast<unsigned*>(&" + m + ") = (unsigned)" + value(e) +
                     " | ((unsigned)" + value(e + 1) + " << 16);");
            }
        };
        // Every element (`guarded`: those inside the edge tile's rows and columns).
        auto elements = [&](bool guarded) {
            for (int e = 0; e < f.elems_per_lane; e += pairs ? 2 : 1) {
                auto [row, col] = element_expr(k, e);
                const std::string m = address(row, col);
                const std::string inside = "(" + row + ") < tsl_rows && (" + col + ") < tsl_cols";
                if (load) {
                    line(reg(e) + " = " + m + ";");  // the same element type: the bits
                } else if (!pairs) {
                    line((guarded ? "if (" + inside + ") " : "") + m + " = " + value(e) + ";");
                } else if (!guarded) {
                    store_pair(m, e);
                } else {  // the pair, or its first element alone at an odd last column
                    line("if ((" + row + ") < tsl_rows && (" + col + ") + 1 < tsl_cols) {");
                    ++indent_;
                    store_pair(m, e);
                    --indent_;
                    line("} else if (" + inside + ") {");
                    ++indent_;
                    line(m + " = " + value(e) + ";");
                    --indent_;
                    line("}");
                }
            }
        };
        if (!edge) {
            elements(false);
        } else {  // whole tiles (all but the edge's) store without the checks
            line("const int tsl_rows = " + rows + ", tsl_cols = " + cols + ";");
            line("if (tsl_rows >= " + std::to_string(f.rows) +
                 " && tsl_cols >= " + std::to_string(f.cols) + ") {");
            ++indent_;
            elements(false);
            --indent_;
            line("} else {");
            ++indent_;
            elements(true);
            --indent_;
            line("}");
        }
    }
    --indent_;
    line("}");
}

// Whether fragment_store writes each lane's elements in pairs (2e, 2e + 1) of one row and two
// adjacent columns, each pair one 8-byte (float32) or 4-byte (16-bit) store: the tile is not
// swizzled, its origin, row stride and the pairs' columns are even, and the buffer is aligned
// to the pair. Half the store instructions, each filling whole 32-byte sectors of a row.
bool CodeGenCUDA::paired_store(const Call* op, FragmentKind k, const TileExpr& d) {
    if (!d.swizzle.empty() || (d.elem.bits != 32 && d.elem.bits != 16)) return false;
    const FragmentShape f = fragment_shape(k);
    if (f.elems_per_lane % 2 != 0) return false;
    for (int e = 0; e < f.elems_per_lane; e += 2)
        for (int lane : {0, 1, 4}) {  // the elements are affine in g = lane / 4, t = lane % 4
            FragmentPos a = fragment_element(k, lane, e), b = fragment_element(k, lane, e + 1);
            if (b.row != a.row || b.col != a.col + 1 || a.col % 2 != 0) return false;
        }
    if (!multiple_of(d.origin_ir, 2) || !multiple_of(d.stride_ir, 2)) return false;
    return aligned_to(op->args[1].as<Load>()->buffer_var.get(), 2 * d.elem.bytes());
}

// Whether a tile operand is in a kernel argument (global memory).
bool CodeGenCUDA::global_tile(const Expr& operand) const {
    auto it = buffers_.find(operand.as<Load>()->buffer_var.get());
    return it != buffers_.end() && it->second.param >= 0;
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
    const bool wide = k == FragmentKind::A8 || k == FragmentKind::B8T;  // 32-bit elements
    if (k != FragmentKind::A16 && k != FragmentKind::B16 && k != FragmentKind::B16x2 &&
        k != FragmentKind::B16T && k != FragmentKind::B16x2T && !wide)
        TESSEL_THROW(CompileError) << "cuda: ldmatrix of a " << fragment_kind_name(k)
                                   << " fragment (A16, B16, A8 or B8T expected)";
    if ((k == FragmentKind::A16 || k == FragmentKind::B16T || wide) && trans)
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
    // destination buffer is indexed [n][k]; a transposed B16x2T (from a k-major tile) is a
    // transposed B16x2.
    if ((k == FragmentKind::B16x2 || k == FragmentKind::B16x2T) && !trans) {
        row = "((tsl_lane & 7) + ((tsl_lane >> 4) * 8))";
        col = "(((tsl_lane >> 3) & 1) * 8)";
    } else if (k != FragmentKind::B16 && k != FragmentKind::B16T && k != FragmentKind::B8T) {
        row = "(tsl_lane & 15)";
        col = wide ? "((tsl_lane >> 4) * 4)" : "((tsl_lane >> 4) * 8)";
    } else if (trans) {
        row = "(tsl_lane & 15)";
        col = "0";
    } else {  // (A8 and B8T: a row is 4 floats, the columns halve)
        row = "(tsl_lane & 7)";
        col = wide ? "(((tsl_lane >> 3) & 1) * 4)" : "(((tsl_lane >> 3) & 1) * 8)";
    }
    // 32-bit shared addressing: the buffer's window offset (loop-invariant) plus bytes; in a
    // swizzled buffer each lane swizzles its own element index.
    line("const unsigned tsl_a = tsl_smem(" + s.buf + ") + (unsigned)(" +
         tile_address(s, "(" + s.origin + ") + " + row + " * (" + s.stride + ") + " + col) +
         ") * (unsigned)sizeof(*" + s.buf + ");");
    const bool x2 = k == FragmentKind::B16 || k == FragmentKind::B16T || k == FragmentKind::B8T;
    std::string fn = x2 ? (trans ? "tsl_ldmatrix_x2_trans" : "tsl_ldmatrix_x2")
                        : (trans ? "tsl_ldmatrix_x4_trans" : "tsl_ldmatrix_x4");
    line(fn + "(" + d.buf + " + " + fragment_base(d, k) + ", tsl_a);");
    --indent_;
    line("}");
}

// The accumulators are written by the asynchronous proxy: an empty asm that "writes" each
// register keeps the compiler from moving their reads above the wait (or writes below a fence).
void CodeGenCUDA::wgmma_fence_accumulators() {
    for (const auto& [name, count] : wgmma_acc_)
        line("_Pragma(\"unroll\") for (int tsl_e = 0; tsl_e < " + std::to_string(count) +
             "; ++tsl_e) asm volatile(\"\" : \"+f\"(" + name + "[tsl_e]) :: \"memory\");");
}

// Warp 4g + r of a warp group names rows 16 r .. 16 r + 15 of the group's 64-row tile of A (and
// all name the same B): the instruction takes the group's tile, so each warp's origin is rewound
// to that of warp 4g. The warps are threadIdx.y (threadIdx.x the lanes): the rewind substitutes
// 4 * (y / 4) for y, and every warp's own origin is checked to be 16 r rows past it (B: equal).
Expr CodeGenCUDA::wgmma_group_origin(const Call* op, const TileExpr& t, int64_t rows, bool a) {
    auto fail = [&](const std::string& why) {
        TESSEL_THROW(CompileError) << "cuda: wgmma in kernel " << kernel_->name << " (stage "
                                   << kernel_->stage << "): " << why;
    };
    const auto x = as_const_int(kernel_->block[0]), y = as_const_int(kernel_->block[1]);
    if (!x || *x != 32 || !y || *y % 4 != 0)
        fail("a warp group is 4 warps of threadIdx.y (threadIdx.x the 32 lanes): the block is " +
             to_string(kernel_->block[0]) + " x " + to_string(kernel_->block[1]) +
             " threads in x and y, where 32 x a multiple of 4 is needed");
    const Variable* yv = nullptr;
    for (const auto& [v, axis] : thread_axis_) {
        if (axis == 0 && uses_var(t.origin_ir, Var(v)))
            fail("the origin of an operand depends on the lane (threadIdx.x)");
        if (axis == 1 && uses_var(t.origin_ir, Var(v))) yv = v;
    }
    const Expr& o = t.origin_ir;
    if (!yv) {
        if (a)
            fail(
                "every warp names the same tile of A; warp 4g + r of a group must name rows 16 r "
                "of the group's 64-row tile (bind the warps' 16-row slices to threadIdx.y)");
        return o;
    }
    Var yvar(yv);
    const Expr group = simplify(substitute(
        o, yvar,
        Mul::make(FloorDiv::make(yvar, make_const(yvar.type(), 4)), make_const(yvar.type(), 4))));
    for (int64_t r = 0; r < *y; ++r) {
        auto d = as_const_int(simplify(substitute(o - group, yvar, make_const(yvar.type(), r))));
        const int64_t want = a ? 16 * (r % 4) * rows : 0;
        if (!d || *d != want)
            fail(std::string("warp ") + std::to_string(r) + " (threadIdx.y) names " +
                 (a ? "a tile of A " : "a tile of B ") +
                 (d ? std::to_string(*d) : std::string("a varying number of")) +
                 " elements from that of warp " + std::to_string(r - r % 4) +
                 " of its group, where wgmma reads " + std::to_string(want) +
                 (a ? " (16 rows per warp)" : " (one B per group)"));
    }
    (void)op;
    return group;
}

// wgmma.mma_async (sm_90a): both operands from shared memory through matrix descriptors (start
// address, leading and stride byte offsets, swizzle mode; ir/IR.h gives the layouts), the
// accumulator the warp's n / 8 C fragments, consecutive registers from the tile's base.
void CodeGenCUDA::wgmma(const Call* op) {
    TileExpr d = tile(op, 0), a = tile(op, 2), b = tile(op, 4);
    const int64_t n = *as_const_int(op->args[7]);
    const bool mn = *as_const_int(op->args[8]) != 0;
    const int64_t e = a.elem.bytes();
    auto fail = [&](const std::string& why) {
        TESSEL_THROW(CompileError) << "cuda: wgmma in kernel " << kernel_->name << ": " << why;
    };
    auto row_width = [&](const TileExpr& t, const char* what) {
        auto w = as_const_int(t.stride_ir);
        if (t.swizzle.empty() || !w || (*w * e != 32 && *w * e != 64 && *w * e != 128))
            fail(std::string(what) +
                 " is not a swizzled shared tile with rows of 32, 64 or 128 "
                 "bytes");
        return *w;
    };
    const int64_t wa = row_width(a, "A"), wb = row_width(b, "B");
    int64_t panel = 0;
    if (mn && n > wb) {
        const Load* l = op->args[6].as<Load>();
        BufferSwizzle z;
        Expr u = l ? unswizzled_index(l->index, &z) : Expr();
        auto p = u.defined() ? as_const_int(simplify(u - b.origin_ir)) : std::nullopt;
        if (!p || *p <= 0) fail("B's next panel is not a constant distance from its origin");
        panel = *p;
    }
    auto lane_buffer = [&](const Call* c, size_t arg) {
        return c->args[arg].as<Load>()->buffer_var.get();
    };
    auto align_shared = [&](const std::string& name) {
        for (SharedArray& s : shared_)
            if (s.name == name) s.align = std::max<int64_t>(s.align, 1024);
    };
    align_shared(a.buf);
    align_shared(b.buf);
    const Variable* dv = lane_buffer(op, 0);
    if (!lane_count_.count(dv)) fail("the accumulator is not a warp buffer of this kernel");
    bool seen = false;
    for (const auto& acc : wgmma_acc_) seen = seen || acc.first == d.buf;
    if (!seen) wgmma_acc_.push_back({d.buf, lane_count_.at(dv)});
    // Descriptor fields in bytes; the swizzle mode from the row width (128 B: 1, 64 B: 2, 32 B: 3).
    auto mode = [&](int64_t w) { return w * e == 128 ? 1 : w * e == 64 ? 2 : 3; };
    // The descriptors' start fields in 16-byte units from the buffer's base: the helper adds
    // them to the base descriptor, which is loop-invariant (one add per descriptor in the k loop;
    // the base from __cvta_generic_to_shared, which the compiler hoists, unlike an asm).
    auto units = [&](const TileExpr& t, int64_t rows, bool is_a) {
        const Expr o = wgmma_group_origin(op, t, rows, is_a);
        return index_expr(
            simplify(FloorDiv::make(o * make_const(o.type(), e), make_const(o.type(), 16))));
    };
    const std::string ua = units(a, wa, true), ub = units(b, wb, false);
    const int64_t lbo_b = mn ? (panel > 0 ? panel * e : 16 * wb * e) : 16;
    flush_pre();
    line("{");
    ++indent_;
    line("const unsigned long long tsl_da = tsl_wgmma_desc((unsigned)__cvta_generic_to_shared(" +
         a.buf + "), (unsigned)(" + ua + "), 16u, " + std::to_string(8 * wa * e) + "u, " +
         std::to_string(mode(wa)) + "u);");
    line("const unsigned long long tsl_db = tsl_wgmma_desc((unsigned)__cvta_generic_to_shared(" +
         b.buf + "), (unsigned)(" + ub + "), " + std::to_string(lbo_b) + "u, " +
         std::to_string(8 * wb * e) + "u, " + std::to_string(mode(wb)) + "u);");
    line("float* const tsl_d = " + d.buf + " + " + fragment_base(d, FragmentKind::C) + ";");
    const int64_t regs = n / 2;
    std::string asm_text = "{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(regs + 2) +
                           ", 0;\\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
                           "k16.f32." + (a.elem.is_bfloat() ? "bf16.bf16" : "f16.f16") + " {";
    for (int64_t r = 0; r < regs; ++r) asm_text += (r ? ", %" : "%") + std::to_string(r);
    asm_text += "}, %" + std::to_string(regs) + ", %" + std::to_string(regs + 1) +
                ", p, 1, 1, 0, " + (mn ? "1" : "0") + ";\\n}\\n";
    std::string outs;
    for (int64_t r = 0; r < regs; ++r)
        outs += (r ? ", " : "") + std::string("\"+f\"(tsl_d[") + std::to_string(r) + "])";
    line("asm volatile(\"" + asm_text + "\" : " + outs +
         " : \"l\"(tsl_da), \"l\"(tsl_db), \"r\"(1));");
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
// A wgmma matrix descriptor (sm_90a): start address, leading and stride byte offsets (16-byte
// units, 14 bits each) and the swizzle mode in bits 62-63. The start is the buffer's shared
// address `base` plus `units` 16-byte units: a shared address is below 256 KB, so the sum stays
// in its 14 bits and the base part (with the leading offset above it) is loop-invariant.
__device__ __forceinline__ unsigned long long tsl_wgmma_desc(unsigned base, unsigned units,
                                                             unsigned lbo, unsigned sbo,
                                                             unsigned mode) {
    const unsigned lo = (((base & 0x3FFFFu) >> 4) | (((lbo >> 4) & 0x3FFFu) << 16)) + units;
    const unsigned hi = ((sbo >> 4) & 0x3FFFu) | (mode << 30);
    return ((unsigned long long)hi << 32) | lo;
}
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
// float32 fragments (tf32's A8, B8T): each lane's 32-bit register is one float.
__device__ __forceinline__ void tsl_ldmatrix_x4(float* d, unsigned a) {
    tsl_ldmatrix_x4(reinterpret_cast<unsigned short*>(d), a);
}
__device__ __forceinline__ void tsl_ldmatrix_x2(float* d, unsigned a) {
    tsl_ldmatrix_x2(reinterpret_cast<unsigned short*>(d), a);
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
