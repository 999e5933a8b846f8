// The loop-IR interpreter's matrix units: the tensor-core intrinsics (ir/IR.h, "Tensor-core
// intrinsics"), with PTX's fragment layouts (ir/Fragment.h), and the CPU's dot_product.
//
// Fragments live in "warp"-scope buffers: each simulated thread (lane) holds its elements in
// its own storage of N / 32 elements (exec_allocate). fragment_load/store/fill run per lane. The
// warp-collective mma_sync and ldmatrix gather every lane's operands at a rendezvous
// (warp_rendezvous, LoopInterpreterSPMD.cpp): each lane reads its inputs when it arrives (its
// registers; for ldmatrix the shared-memory row its address names, race-checked as its read),
// warp_collective computes every lane's outputs from all of them, and each lane writes its own
// when it resumes. So what a lane contributes, and where its results go, follow the hardware's
// rules exactly: a layout mistake gives wrong numbers here as on the GPU.
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_set>

#include "LoopInterpreterImpl.h"
#include "PassUtil.h"
#include "tessel/ir/Fragment.h"
#include "tessel/ir/IROperator.h"
#include "tessel/lower/StorageFlatten.h"

namespace tessel::internal {

namespace {

FragmentKind kind_arg(const Call* op, size_t a) {
    FragmentKind k = FragmentKind::C;
    fragment_kind_from_int(as_const_int(op->args[a]).value(), &k);  // checked by Call::make
    return k;
}

// float32 rounded to tf32 (10 mantissa bits, nearest, ties away from zero: cvt.rna.tf32.f32).
double to_tf32(double v) {
    return round_to_tf32(v);
}

// The fragment kinds of mma_sync's A and B: A16/B16 for 16-bit inputs (B16T where the call says
// so: B's buffer indexed [n][k]), A8/B8 for tf32 (B8T for [n][k]).
std::pair<FragmentKind, FragmentKind> mma_kinds(const Call* op) {
    if (op->args.size() > 8 && kind_arg(op, 8) == FragmentKind::B16T)
        return {FragmentKind::A16, FragmentKind::B16T};
    if (op->args.size() > 8 && kind_arg(op, 8) == FragmentKind::B8T)
        return {FragmentKind::A8, FragmentKind::B8T};
    if (op->args[2].type().bits == 16) return {FragmentKind::A16, FragmentKind::B16};
    return {FragmentKind::A8, FragmentKind::B8};
}

// Rebuilds the rows x cols tile of kind k from every lane's registers in[lane][first + e].
std::vector<double> gather(FragmentKind k, const std::vector<std::vector<double>>& in,
                           size_t first) {
    const FragmentShape f = fragment_shape(k);
    std::vector<double> tile(static_cast<size_t>(f.rows * f.cols));
    for (int l = 0; l < kWarpSize; ++l)
        for (int e = 0; e < f.elems_per_lane; ++e) {
            FragmentPos p = fragment_element(k, l, e);
            tile[static_cast<size_t>(p.row * f.cols + p.col)] = in[l][first + e];
        }
    return tile;
}

}  // namespace

// Where exec_wgmma puts what each thread brings to the rendezvous.
enum WgmmaIn : size_t { kBase, kASerial, kAOrigin, kAStride, kBSerial, kBOrigin, kAcc };

// wgmma for a warp group (128 threads; exec_wgmma says what in[t] holds): each warp's 16 x n
// slice, D = A * B + D in float32, after checking that the warps name the group's operands as
// the instruction reads them (warp r: rows 16 r of A's 64-row tile; one B).
std::vector<std::vector<double>> wgmma_collective(const Call* op,
                                                  const std::vector<std::vector<double>>& in) {
    const int64_t n = as_const_int(op->args[7]).value();
    const std::vector<double>& g = in[0];
    const size_t b_at = kAcc + static_cast<size_t>(n / 2) + 256;  // after warp 0's A values
    std::vector<std::vector<double>> out(in.size());
    for (int r = 0; r < 4; ++r) {
        const std::vector<double>& w = in[static_cast<size_t>(r * kWarpSize)];
        for (int l = 1; l < kWarpSize; ++l)
            if (in[static_cast<size_t>(r * kWarpSize + l)][kBase] != w[kBase])
                TESSEL_THROW(RuntimeError)
                    << "wgmma: lanes 0 and " << l << " of warp " << r
                    << " of the warp group name different accumulator registers";
        const double want = g[kAOrigin] + 16.0 * r * g[kAStride];
        if (w[kASerial] != g[kASerial] || w[kBSerial] != g[kBSerial] || w[kAOrigin] != want ||
            w[kAStride] != g[kAStride] || w[kBOrigin] != g[kBOrigin])
            TESSEL_THROW(RuntimeError)
                << "wgmma: warp " << r << " of the warp group names A at element "
                << static_cast<int64_t>(w[kAOrigin]) << " and B at "
                << static_cast<int64_t>(w[kBOrigin]) << ", but the instruction reads the "
                << "group's operands: A's 64-row tile from element "
                << static_cast<int64_t>(g[kAOrigin]) << " (warp r at row 16 r: element "
                << static_cast<int64_t>(want) << ") and B at " << static_cast<int64_t>(g[kBOrigin])
                << " for every warp";
        // d[i][j] of this warp's 16 x n slice.
        std::vector<float> d(static_cast<size_t>(16 * n));
        for (int l = 0; l < kWarpSize; ++l)
            for (int64_t c = 0; c < n / 8; ++c)
                for (int e = 0; e < 4; ++e) {
                    FragmentPos p = fragment_element(FragmentKind::C, l, e);
                    d[static_cast<size_t>(p.row * n + 8 * c + p.col)] = static_cast<float>(
                        in[static_cast<size_t>(r * kWarpSize + l)][kAcc + 4 * c + e]);
                }
        const size_t a_at = kAcc + static_cast<size_t>(n / 2);
        for (int i = 0; i < 16; ++i)
            for (int64_t j = 0; j < n; ++j) {
                float acc = d[static_cast<size_t>(i * n + j)];
                for (int k = 0; k < 16; ++k)
                    acc += static_cast<float>(w[a_at + static_cast<size_t>(i * 16 + k)] *
                                              g[b_at + static_cast<size_t>(k * n + j)]);
                d[static_cast<size_t>(i * n + j)] = acc;
            }
        for (int l = 0; l < kWarpSize; ++l) {
            std::vector<double>& o = out[static_cast<size_t>(r * kWarpSize + l)];
            for (int64_t c = 0; c < n / 8; ++c)
                for (int e = 0; e < 4; ++e) {
                    FragmentPos p = fragment_element(FragmentKind::C, l, e);
                    o.push_back(d[static_cast<size_t>(p.row * n + 8 * c + p.col)]);
                }
        }
    }
    return out;
}

// in[lane] = {D's register base, ...}: see exec_tensor_core.
std::vector<std::vector<double>> warp_collective(const Call* op,
                                                 const std::vector<std::vector<double>>& in) {
    if (op->op == Intrinsic::wgmma) return wgmma_collective(op, in);
    for (int l = 1; l < kWarpSize; ++l)
        if (in[l][0] != in[0][0])
            TESSEL_THROW(RuntimeError)
                << intrinsic_name(op->op) << ": lane 0 names fragment register "
                << static_cast<int64_t>(in[0][0]) << " of its destination but lane " << l
                << " names " << static_cast<int64_t>(in[l][0])
                << " (every lane of a warp must name the same fragment)";
    std::vector<std::vector<double>> out(kWarpSize);
    if (op->op == Intrinsic::ldmatrix) {
        const FragmentKind k = kind_arg(op, 0);
        const bool trans = as_const_int(op->args[1]).value() != 0;
        const int matrices =
            k == FragmentKind::B16 || k == FragmentKind::B16T || k == FragmentKind::B8T ? 2 : 4;
        if (k == FragmentKind::A8 || k == FragmentKind::B8T) {
            // 32-bit elements: lane 8m + r gave row r of matrix m, 4 floats (8 16-bit
            // elements); lane l receives one float of each matrix: row l / 4, column l % 4.
            for (int l = 0; l < kWarpSize; ++l)
                for (int m = 0; m < matrices; ++m) out[l].push_back(in[8 * m + l / 4][1 + l % 4]);
            return out;
        }
        // Lane 8m + r gave row r of 8 x 8 matrix m (in[..][1 + c], c < 8); lane l receives two
        // elements of each matrix: row l / 4, columns 2 (l % 4) + {0, 1}, or transposed.
        for (int l = 0; l < kWarpSize; ++l)
            for (int m = 0; m < matrices; ++m)
                for (int h = 0; h < 2; ++h) {
                    const int r = l / 4, c = 2 * (l % 4) + h;
                    out[l].push_back(trans ? in[8 * m + c][1 + r] : in[8 * m + r][1 + c]);
                }
        return out;
    }
    // mma_sync: D = A * B + C with float32 accumulation (tf32: A and B rounded first).
    const auto [ka, kb] = mma_kinds(op);
    const FragmentShape fa = fragment_shape(ka), fb = fragment_shape(kb);
    std::vector<double> a = gather(ka, in, 1), b = gather(kb, in, 1 + fa.elems_per_lane);
    std::vector<double> c = gather(FragmentKind::C, in, 1 + fa.elems_per_lane + fb.elems_per_lane);
    if (ka == FragmentKind::A8) {
        for (double& x : a) x = to_tf32(x);
        for (double& x : b) x = to_tf32(x);
    }
    const bool b_nk = kb == FragmentKind::B16T || kb == FragmentKind::B8T;
    if (b_nk) {  // gathered [n][k]: as [k][n]
        std::vector<double> t(b.size());
        for (int j = 0; j < fb.rows; ++j)
            for (int x = 0; x < fb.cols; ++x)
                t[static_cast<size_t>(x * fb.rows + j)] = b[static_cast<size_t>(j * fb.cols + x)];
        b = std::move(t);
    }
    const int m = fa.rows, n = b_nk ? fb.rows : fb.cols, kk = fa.cols;
    std::vector<double> d(static_cast<size_t>(m * n));
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            float acc = static_cast<float>(c[static_cast<size_t>(i * n + j)]);
            for (int x = 0; x < kk; ++x)
                acc += static_cast<float>(a[static_cast<size_t>(i * kk + x)] *
                                          b[static_cast<size_t>(x * n + j)]);
            d[static_cast<size_t>(i * n + j)] = acc;
        }
    for (int l = 0; l < kWarpSize; ++l)
        for (int e = 0; e < 4; ++e) {
            FragmentPos p = fragment_element(FragmentKind::C, l, e);
            out[l].push_back(d[static_cast<size_t>(p.row * n + p.col)]);
        }
    return out;
}

// A tile operand: storage, element type, flat origin and row stride (ir/IR.h).
LoopInterpreter::Tile LoopInterpreter::tile_operand(const Call* op, size_t a) {
    const char* name = intrinsic_name(op->op);
    const Load* l0 = op->args[a].as<Load>();
    const Load* l1 = op->args[a + 1].as<Load>();
    if (!l0 || !l1 || !l0->buffer_var.same_as(l1->buffer_var))
        TESSEL_THROW(RuntimeError)
            << name << ": argument " << a
            << " is not a flattened tile operand (two Loads of one buffer)" << loop_context();
    Tile t;
    t.elem = l0->type.element_of();
    t.s = &storage_for(l0->buffer_var.get(), t.elem, name);
    Expr i0 = l0->index, i1 = l1->index;
    BufferSwizzle z0, z1;
    Expr u0 = unswizzled_index(i0, &z0), u1 = unswizzled_index(i1, &z1);
    if (u0.defined() || u1.defined()) {  // each lane swizzles its own addresses
        if (!u0.defined() || !u1.defined() || !(z0 == z1))
            TESSEL_THROW(RuntimeError)
                << name << ": argument " << a << " swizzles the rows of its tile differently"
                << loop_context();
        t.swizzle = z0;
        i0 = u0;
        i1 = u1;
    }
    t.origin = eval_int(i0, "tile origin");
    t.stride = eval_int(i1, "tile row") - t.origin;
    if (t.stride <= 0)
        TESSEL_THROW(RuntimeError) << name << ": tile of " << t.s->name << " has row stride "
                                   << t.stride << loop_context();
    return t;
}

LoopInterpreter::Tile LoopInterpreter::flat_operand(const Call* op, size_t a) {
    const Load* l = op->args[a].as<Load>();
    if (!l)
        TESSEL_THROW(RuntimeError) << intrinsic_name(op->op) << ": argument " << a
                                   << " is not a flattened Load" << loop_context();
    Tile t;
    t.elem = l->type.element_of();
    t.s = &storage_for(l->buffer_var.get(), t.elem, intrinsic_name(op->op));
    t.origin = eval_int(l->index, "operand origin");
    return t;
}

void LoopInterpreter::exec_dot_product(const Call* op) {
    const int64_t lanes = as_const_int(op->args[0]).value();
    const int64_t group = as_const_int(op->args[1]).value();
    Tile c = flat_operand(op, 2), a = flat_operand(op, 3), b = tile_operand(op, 4);
    // Bounds-checked element accesses; integers are Scalar.i, floats Scalar.f.
    auto read = [&](const Tile& t, int64_t flat) {
        if (flat < 0 || flat >= t.s->array->size())
            flat_out_of_bounds("load from", *t.s, flat, 0, 1);
        return read_element(*t.s, t.elem, flat);
    };
    for (int64_t j = 0; j < lanes; ++j) {
        const int64_t at = c.origin + j;
        Scalar acc = read(c, at);
        if (c.elem.is_int()) {  // int32 arithmetic that wraps around, as vpdpbusd's
            int64_t sum = acc.i;
            for (int64_t q = 0; q < group; ++q)
                sum += read(a, a.origin + q).i * read(b, b.at(j, q)).i;
            acc.i = static_cast<int32_t>(static_cast<uint32_t>(sum));
        } else {  // exact products (bfloat16 x bfloat16), each added in float32
            float f = static_cast<float>(acc.f);
            for (int64_t q = 0; q < group; ++q)
                f += static_cast<float>(read(a, a.origin + q).f * read(b, b.at(j, q)).f);
            acc.f = f;
        }
        if (at < 0 || at >= c.s->array->size()) flat_out_of_bounds("store to", *c.s, at, 0, 1);
        write_element(*c.s, c.elem, at, acc);
    }
}

// The lane-local register index of a fragment tile's first element.
int64_t LoopInterpreter::fragment_base(const Call* op, const Tile& t, FragmentKind k) {
    const int64_t base =
        fragment_register_base(k, t.origin / t.stride, t.origin % t.stride, t.stride);
    const FragmentShape f = fragment_shape(k);
    if (base < 0 || base + f.elems_per_lane > t.s->array->size())
        TESSEL_THROW(RuntimeError)
            << intrinsic_name(op->op) << ": element " << t.origin / t.stride << ", "
            << t.origin % t.stride << " of warp buffer " << t.s->name << " (" << t.stride
            << " columns, " << t.s->array->size() << " elements per lane) is not the origin of a "
            << fragment_kind_name(k) << " fragment (" << f.rows << " x " << f.cols << ")"
            << loop_context();
    return base;
}

double LoopInterpreter::tile_read(const Tile& t, int64_t row, int64_t col) {
    return flat_read(t, t.at(row, col));
}

double LoopInterpreter::flat_read(const Tile& t, int64_t flat) {
    if (flat < 0 || flat >= t.s->array->size()) flat_out_of_bounds("load from", *t.s, flat, 0, 1);
    return read_element(*t.s, t.elem, flat).f;
}

void LoopInterpreter::tile_write(const Tile& t, int64_t flat, double v) {
    if (flat < 0 || flat >= t.s->array->size()) flat_out_of_bounds("store to", *t.s, flat, 0, 1);
    Scalar x;
    x.f = v;
    write_element(*t.s, t.elem, flat, x);
}

void LoopInterpreter::exec_tensor_core(const Call* op) {
    if (!spmd_)
        TESSEL_THROW(RuntimeError) << intrinsic_name(op->op)
                                   << " outside a thread-bound loop nest (tensor-core intrinsics "
                                      "run in the warps of a GPU kernel)"
                                   << loop_context();
    const int lane = spmd_->index % kWarpSize;
    switch (op->op) {
        case Intrinsic::wgmma:
        case Intrinsic::wgmma_fence:
        case Intrinsic::wgmma_commit:
        case Intrinsic::wgmma_wait: return exec_wgmma(op);
        case Intrinsic::fragment_fill: {
            const FragmentKind k = kind_arg(op, 0);
            Tile d = tile_operand(op, 1);
            const int64_t base = fragment_base(op, d, k);
            const double v = eval_.eval(op->args[3]).lanes[0].f;
            for (int e = 0; e < fragment_shape(k).elems_per_lane; ++e) tile_write(d, base + e, v);
            return;
        }
        case Intrinsic::fragment_load: {
            const FragmentKind k = kind_arg(op, 0);
            Tile d = tile_operand(op, 1), s = tile_operand(op, 3);
            const int64_t base = fragment_base(op, d, k);
            for (int e = 0; e < fragment_shape(k).elems_per_lane; ++e) {
                FragmentPos p = fragment_element(k, lane, e);
                tile_write(d, base + e, tile_read(s, p.row, p.col));
            }
            return;
        }
        case Intrinsic::fragment_store: {
            const FragmentKind k = kind_arg(op, 0);
            Tile d = tile_operand(op, 1), s = tile_operand(op, 3);
            const int64_t base = fragment_base(op, s, k);
            // A tile at its tensor's edge: the rows and columns it has (ir/IR.h).
            const bool edge = op->args.size() == 7;
            const int64_t rows = edge ? eval_int(op->args[5], "fragment_store rows") : 0;
            const int64_t cols = edge ? eval_int(op->args[6], "fragment_store cols") : 0;
            for (int e = 0; e < fragment_shape(k).elems_per_lane; ++e) {
                FragmentPos p = fragment_element(k, lane, e);
                if (!edge || (p.row < rows && p.col < cols))
                    tile_write(d, d.at(p.row, p.col), flat_read(s, base + e));
            }
            return;
        }
        default: break;
    }
    // Warp-collective: read this lane's inputs, meet the warp, write this lane's outputs.
    std::vector<double> in;
    Tile d = tile_operand(op, op->op == Intrinsic::ldmatrix ? 2 : 0);
    FragmentKind dk = op->op == Intrinsic::ldmatrix ? kind_arg(op, 0) : FragmentKind::C;
    const int64_t base = fragment_base(op, d, dk);
    in.push_back(static_cast<double>(base));
    if (op->op == Intrinsic::ldmatrix) {
        Tile s = tile_operand(op, 4);
        const bool trans = as_const_int(op->args[1]).value() != 0;
        const bool wide = dk == FragmentKind::A8 || dk == FragmentKind::B8T;  // 32-bit elements
        if (dk != FragmentKind::A16 && dk != FragmentKind::B16 && dk != FragmentKind::B16x2 &&
            dk != FragmentKind::B16T && dk != FragmentKind::B16x2T && !wide)
            TESSEL_THROW(RuntimeError)
                << "ldmatrix of a " << fragment_kind_name(dk)
                << " fragment (A16, B16, A8 or B8T expected)" << loop_context();
        if (wide && s.elem.bits != 32)
            TESSEL_THROW(RuntimeError)
                << "ldmatrix of a " << fragment_kind_name(dk) << " fragment from a tile of "
                << s.elem.bits << "-bit elements (32 expected)" << loop_context();
        if ((dk == FragmentKind::A16 || dk == FragmentKind::B16T || wide) && trans)
            TESSEL_THROW(RuntimeError) << "ldmatrix: transposed " << fragment_kind_name(dk)
                                       << " loads are not supported" << loop_context();
        // The row this lane's address names (.x4: every lane; .x2: lanes 0..15).
        // An n-major B16x2 (stored [n][k]) takes its matrices along k first; a transposed B16x2T
        // (stored [k][n]) is a transposed B16x2.
        int64_t row = -1, col = 0;
        if ((dk == FragmentKind::B16x2 || dk == FragmentKind::B16x2T) && !trans) {
            row = lane % 8 + 8 * (lane / 16);
            col = 8 * ((lane / 8) % 2);
        } else if (dk != FragmentKind::B16 && dk != FragmentKind::B16T && dk != FragmentKind::B8T) {
            row = lane % 16;
            col = 8 * (lane / 16);
        } else if (lane < 16) {
            row = trans ? lane : lane % 8;
            col = trans ? 0 : 8 * (lane / 8);
        }
        // A row is 16 bytes: 8 16-bit elements, or 4 32-bit ones (the columns halve).
        const int per_row = wide ? 4 : 8;
        if (wide) col /= 2;
        for (int c = 0; c < per_row; ++c) in.push_back(row < 0 ? 0.0 : tile_read(s, row, col + c));
    } else {
        const auto [ka, kb] = mma_kinds(op);
        Tile a = tile_operand(op, 2), b = tile_operand(op, 4), c = tile_operand(op, 6);
        const int64_t ab = fragment_base(op, a, ka), bb = fragment_base(op, b, kb);
        const int64_t cb = fragment_base(op, c, FragmentKind::C);
        for (int e = 0; e < fragment_shape(ka).elems_per_lane; ++e)
            in.push_back(flat_read(a, ab + e));
        for (int e = 0; e < fragment_shape(kb).elems_per_lane; ++e)
            in.push_back(flat_read(b, bb + e));
        for (int e = 0; e < 4; ++e) in.push_back(flat_read(c, cb + e));
    }
    std::vector<double> out = warp_rendezvous(op, std::move(in));
    for (size_t e = 0; e < out.size(); ++e) tile_write(d, base + static_cast<int64_t>(e), out[e]);
}

void LoopInterpreter::exec_wgmma(const Call* op) {
    WgmmaBlockState& ws = *spmd_->wgmma;
    switch (op->op) {
        case Intrinsic::wgmma_fence: wgmma_fenced_ = true; return;
        case Intrinsic::wgmma_commit:
            wgmma_committed_.push_back(std::move(wgmma_open_));
            wgmma_open_ = {};
            return;
        case Intrinsic::wgmma_wait: return exec_wgmma_wait(as_const_int(op->args[0]).value());
        default: break;
    }
    const std::string who = thread_label(spmd_);
    if (!wgmma_fenced_)
        TESSEL_THROW(RuntimeError)
            << "wgmma by " << who
            << ": the thread wrote registers of a warp buffer since its last wgmma_fence (the "
               "accumulators the asynchronous proxy reads need a wgmma.fence after they are "
               "written)"
            << loop_context();
    Tile d = tile_operand(op, 0), a = tile_operand(op, 2), b = tile_operand(op, 4);
    const int64_t n = as_const_int(op->args[7]).value();
    const bool mn = as_const_int(op->args[8]).value() != 0;
    int64_t panel = 0;
    if (mn && n > b.stride) {
        const Load* l = op->args[6].as<Load>();
        BufferSwizzle z;
        Expr u = unswizzled_index(l->index, &z);
        panel = eval_int(u.defined() ? u : l->index, "wgmma panel") - b.origin;
    }
    const int64_t base = fragment_base(op, d, FragmentKind::C);
    if (base + n / 2 > d.s->array->size())
        TESSEL_THROW(RuntimeError)
            << "wgmma: the accumulator's " << n / 2 << " registers from register " << base
            << " run past warp buffer " << d.s->name << " (" << d.s->array->size() << " per lane)"
            << loop_context();
    const int lane = spmd_->index % kWarpSize;
    std::vector<double> in = {static_cast<double>(base),        static_cast<double>(a.s->serial),
                              static_cast<double>(a.origin),    static_cast<double>(a.stride),
                              static_cast<double>(b.s->serial), static_cast<double>(b.origin)};
    for (int64_t e = 0; e < n / 2; ++e) in.push_back(d.s->array->get(base + e));
    // A shared operand element as the asynchronous proxy reads it.
    auto read = [&](const Tile& t, int64_t row, int64_t col) {
        const int64_t flat = t.at(row, col);
        if (flat < 0 || flat >= t.s->array->size())
            flat_out_of_bounds("load from", *t.s, flat, 0, 1);
        const uint64_t key = element_key(t.s->serial, flat);
        if (t.s->shared) {
            track_shared(*t.s, flat, false);
            if (!in_flight().empty()) check_in_flight(*t.s, flat, false);
            if (!spmd_->tma->elements.empty()) check_tma_access(*t.s, flat, false);
            if (auto it = ws.unfenced.find(key); it != ws.unfenced.end())
                TESSEL_THROW(RuntimeError)
                    << "wgmma by " << who << " reads shared memory " << t.s->name << " element "
                    << flat << ", which " << thread_label(it->second)
                    << " wrote with an ordinary store (or cp.async) and did not make visible to "
                       "the asynchronous proxy (fence_proxy_async before the barrier)"
                    << loop_context();
            ws.pending_reads[key] = spmd_;
            wgmma_open_.smem.push_back(key);
        }
        return t.s->array->get(flat);
    };
    if (lane == 0) {
        for (int i = 0; i < 16; ++i)
            for (int k = 0; k < 16; ++k) in.push_back(read(a, i, k));
        if ((spmd_->index / kWarpSize) % 4 == 0)
            for (int k = 0; k < 16; ++k)
                for (int64_t j = 0; j < n; ++j)
                    in.push_back(mn ? read(b, k, (j / b.stride) * panel + j % b.stride)
                                    : read(b, j, k));
    }
    std::vector<double> out = warp_rendezvous(op, std::move(in));
    for (int64_t e = 0; e < n / 2; ++e) {
        d.s->array->set(base + e, out[static_cast<size_t>(e)]);
        const uint64_t key = element_key(d.s->serial, base + e);
        wgmma_pending_regs_[key] = d.s;
        wgmma_open_.regs.push_back(key);
    }
}

void LoopInterpreter::exec_wgmma_wait(int64_t n) {
    WgmmaBlockState& ws = *spmd_->wgmma;
    // A group still in flight after the wait (wait(1)) may accumulate into the same registers
    // or read the same shared elements as a retired one: those stay pending.
    // (Registers and shared elements apart: a warp buffer's serial comes from the thread's
    // allocations, a shared buffer's from the block's, so their keys may coincide.)
    std::unordered_set<uint64_t> later_regs, later_smem;
    auto keep = [&](const WgmmaGroup& g) {
        later_regs.insert(g.regs.begin(), g.regs.end());
        later_smem.insert(g.smem.begin(), g.smem.end());
    };
    keep(wgmma_open_);
    const int64_t committed = static_cast<int64_t>(wgmma_committed_.size());
    for (int64_t i = std::max<int64_t>(committed - n, 0); i < committed; ++i)
        keep(wgmma_committed_[static_cast<size_t>(i)]);
    while (static_cast<int64_t>(wgmma_committed_.size()) > n) {
        const WgmmaGroup& g = wgmma_committed_.front();
        for (uint64_t key : g.regs)
            if (!later_regs.count(key)) wgmma_pending_regs_.erase(key);
        for (uint64_t key : g.smem)
            if (auto it = ws.pending_reads.find(key);
                !later_smem.count(key) && it != ws.pending_reads.end() && it->second == spmd_)
                ws.pending_reads.erase(it);
        wgmma_committed_.erase(wgmma_committed_.begin());
    }
}

void LoopInterpreter::check_wgmma_access(InterpStorage& s, int64_t flat, bool write) {
    const uint64_t key = element_key(s.serial, flat);
    if (s.warp) {
        if (!wgmma_pending_regs_.empty() && wgmma_pending_regs_.count(key))
            TESSEL_THROW(RuntimeError)
                << (write ? "write to " : "read of ") << "register " << flat << " of warp buffer "
                << s.name << " by " << thread_label(spmd_)
                << ", the accumulator of a wgmma not waited for (a wgmma_wait is missing)"
                << loop_context();
        if (write) wgmma_fenced_ = false;
        return;
    }
    if (!s.shared || !write) return;
    WgmmaBlockState& ws = *spmd_->wgmma;
    if (auto it = ws.store_reads.find(key); it != ws.store_reads.end())
        TESSEL_THROW(RuntimeError)
            << "write to shared memory " << s.name << " element " << flat << " by "
            << thread_label(spmd_) << ", which a tma_store of " << thread_label(it->second)
            << " still reads (a tma_store_wait is missing before the overwrite)" << loop_context();
    if (auto it = ws.pending_reads.find(key); it != ws.pending_reads.end())
        TESSEL_THROW(RuntimeError)
            << "write to shared memory " << s.name << " element " << flat << " by "
            << thread_label(spmd_) << ", which a wgmma of " << thread_label(it->second)
            << " still reads (a wgmma_wait is missing before the overwrite)" << loop_context();
    ws.unfenced[key] = spmd_;
    unfenced_mine_.push_back(key);
}

}  // namespace tessel::internal
