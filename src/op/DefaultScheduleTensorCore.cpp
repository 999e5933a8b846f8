// The tensor-core default schedule (op/DefaultScheduleTensorCore.h). On sm_90a, for the products
// that keep the GPU busy with tiles of 128 x 256, 128 or 64 (choose_wgmma_tiles), the kernel is
// tutorial 08's (wgmma, schedule_wgmma below), and so is it for an implicit GEMM whose gathers
// copy 16 bytes at a time, through the shared epilogue below. Otherwise it is tutorial 07's
// (tutorials/07_tensor_core_gemm.py, steps 5 and 6): a block's operand tiles copied into swizzled
// shared memory by cp.async, `stages` of them in flight; each warp's fragments loaded by ldmatrix
// and multiplied by mma.sync (m16n8k16) into a float32 accumulator held in registers. Two ways out:
//  - direct: the output (or its conversion to 16 bits) stores the fragments itself (store_c), when
//    the block tiles divide m and n;
//  - shared epilogue: the fragments are stored into a float32 tile in shared memory, padded like
//    the operand tiles (rows and columns past m and n are computed on zeros and never stored), and
//    the consumer copies it out with guards, applying what it computes (bias, activation,
//    conversion). Any m and n take it.
// Any k: the reduction runs in whole k tiles past its length, where the zero-padded operand tiles
// add nothing (bound inference's zero_padded_reduction; a guard inside an mma is not possible).
#include "op/DefaultScheduleTensorCore.h"

#include <algorithm>
#include <cstdlib>

#include "op/DefaultScheduleGpu.h"
#include "op/LoopNest.h"
#include "op/OpUtil.h"
#include "schedule/ScheduleInternal.h"
#include "tessel/arith/Simplify.h"
#include "tessel/ir/IRMutator.h"
#include "tessel/schedule/TensorIntrin.h"
#include "tessel/te/Operation.h"

namespace tessel::op::internal {

namespace {

// The candidate tiles, largest first: tutorial 07's step 6 tile (192 KB of shared tiles, sm_90),
// step 5's with k tiles of 32, and smaller ones for products whose large tiles leave SMs idle;
// the last two (warps of 16 x 32 and 16 x 16) only for a short k (kSmallTilesK), where split-K
// cannot fill the GPU and a block's few k tiles leave its time to latency.
constexpr TensorCoreTiles kCandidates[] = {
    {128, 256, 64, 64, 64, 4, false}, {128, 128, 32, 64, 64, 4, false},
    {64, 128, 32, 32, 64, 4, false},  {128, 64, 32, 64, 32, 4, false},
    {64, 64, 32, 32, 32, 4, false},   {32, 64, 32, 16, 32, 4, false},
    {32, 32, 32, 16, 16, 4, false},
};
constexpr int64_t kSmallTilesK = 1024;
// The wgmma default's tile widths (128 rows) and their speed relative to the widest's, per SM
// (choose_wgmma_tiles). H100/H200: at 3000 x 1000 x 1000 fp16, 384 tiles of 64 columns in 3
// rounds ran at 0.49 x cuBLAS where 192 of 128 in 96 blocks ran at 0.61.
constexpr std::pair<int64_t, double> kWgmmaWidths[] = {{256, 1.0}, {128, 0.9}, {64, 0.6}};
// The least share of the SMs' time (choose_wgmma_tiles) at which wgmma serves a product, else
// mma.sync's smaller tiles do (1536 x 1000 x 776: 0.65 x cuBLAS on 192 tiles of 128 x 64 in two
// rounds, a share of 0.43, against mma.sync's 0.49).
constexpr double kWgmmaMinUse = 0.4;
// The fewest k tiles a wgmma kernel with a shared epilogue keeps in flight: its float32 tile
// leaves 128 x 256 tiles room for 2 (they are not taken), 128 x 128 for 5.
constexpr int64_t kWgmmaMinStages = 3;
// The shortest part of the wgmma kernel's split-K (choose_wgmma_split), longest first: 16 k
// tiles, else 8, else 4. A short part spends its time filling the pipeline (H100, 64 x 4096 x
// 4096: 128 blocks of 64 x 256 in 8 parts of 512, 0.57 x cuBLAS; of 64 x 128 in 4 parts of
// 1024, 0.72; 128 x 2048 x 4096: 0.55 -> 0.79).
constexpr int64_t kWgmmaSplitMinLengths[] = {1024, 512, 256};
// An implicit GEMM's split-K (split_k_length): at most 48 parts, each at least 256 long (parts
// of 128 and of 512 were within the noise over ResNet-50's layers at batch 1 and 8, H200; 256 had
// the highest lowest layer).
constexpr int64_t kSplitExactMaxParts = 48, kSplitExactMinLength = 256;

// Whether index `e` is `v` itself, or split-K's `part * length + v` (part the product's leading
// axis `lead`).
bool is_index(const Expr& e, const Var& v, const std::vector<Expr>& lead) {
    if (e.same_as(v)) return true;
    const auto* add = e.as<Add>();
    if (!add) return false;
    if (const auto* z = add->b.as<IntImm>(); z && z->value == 0) return is_index(add->a, v, lead);
    if (lead.size() != 1) return false;
    const Expr& other = add->b.same_as(v) ? add->a : add->a.same_as(v) ? add->b : Expr();
    const auto* mul = other.defined() ? other.as<Mul>() : nullptr;
    return mul && mul->a.same_as(lead[0]) && mul->b.as<IntImm>();
}

// Whether read r is X[lead..., x, y] (a batch index 0 broadcasts; a read without the lead dims,
// as split-K's operands are, reads the whole tensor in every batch).
bool reads_exactly(const TensorRead* r, const std::vector<Expr>& lead, const Var& x, const Var& y) {
    const size_t n = r->indices.size();
    if (n < 2 || !is_index(r->indices[n - 2], x, lead) || !is_index(r->indices[n - 1], y, lead))
        return false;
    if (n == 2) return true;
    if (n != lead.size() + 2) return false;
    for (size_t d = 0; d < lead.size(); ++d) {
        const auto* c = r->indices[d].as<IntImm>();
        if (!r->indices[d].same_as(lead[d]) && !(c && c->value == 0)) return false;
    }
    return true;
}

// Whether consumer q only converts G's value (q[...] = cast(G[...]) at the same point): then q
// can store G's fragments itself.
bool only_converts(const Operation& q, const Operation& g) {
    const ComputeOpNode* c = as_compute(q);
    if (!c || c->body.size() != 1 || !c->reduce_axis.empty()) return false;
    Expr e = c->body[0];
    if (const auto* cast = e.as<Cast>()) e = cast->value;
    const auto* r = e.as<TensorRead>();
    if (!r || !r->tensor.op().same_as(g) || r->indices.size() != c->axis.size()) return false;
    for (size_t d = 0; d < c->axis.size(); ++d)
        if (!r->indices[d].same_as(c->axis[d].var())) return false;
    return true;
}

const IterAnnotation kWarpAxes[] = {IterAnnotation::ThreadX, IterAnnotation::ThreadY,
                                    IterAnnotation::ThreadZ};

// Loop "f" of `n` spread over a block's threads: [o (outer), z (warps_z: threadIdx.z), y (warps_y:
// threadIdx.y), x (32 lanes: threadIdx.x)].
void spread_over_block(LoopNest& n, int64_t warps_y, int64_t warps_z) {
    n.split("f", 32, "f", "x");
    n.split("f", warps_y, "f", "y");
    n.split("f", warps_z, "o", "z");
    n.bind("x", kWarpAxes[0]);
    n.bind("y", kWarpAxes[1]);
    n.bind("z", kWarpAxes[2]);
}

// A copy of a 2-D tile (with leading loops of extent 1) by the block's threads (`transposed`:
// along its first axis, the tile stored transposed), `vector` elements an access (a tile's row, bk
// >= 16, holds whole vectors; the last one of a padded copy's row may run past the operand's row,
// lane by lane guarded): the rows split by the vector first (so that an access is one aligned piece
// of a row), then everything fused and spread over [outer (unrolled), warps m (threadIdx.z), warps
// n (threadIdx.y), lanes (threadIdx.x)].
void copy_by_block(Schedule& s, int st, int64_t vector, int64_t warps_y, int64_t warps_z,
                   bool bound_outer, bool transposed = false) {
    const size_t nd = s.stage(st).leaf.size();
    std::vector<std::string> dims;
    for (size_t d = 0; d < nd; ++d) dims.push_back("d" + std::to_string(d));
    LoopNest n(s, st, dims);
    if (transposed) {  // a tile stored transposed: its columns' loop outer, its rows' inner
        std::swap(dims[nd - 1], dims[nd - 2]);
        n.reorder(dims);
    }
    if (vector > 1) n.split(dims.back(), vector, dims.back(), "vec");
    n.fuse(dims, "f");
    spread_over_block(n, warps_y, warps_z);
    if (!bound_outer) n.unroll("o");
    if (vector > 1) n.vectorize("vec");
}

// The elements (of `bytes` bytes) a copy of rows of `row` elements moves per access: 16 bytes
// where every row starts 16-byte aligned, else narrower.
int64_t row_vector(int64_t row, int64_t bytes) {
    for (int64_t v = 16 / bytes; v >= 2; v /= 2)
        if (row % v == 0) return v;
    return 1;
}

}  // namespace

std::optional<TensorCoreTiles> choose_tensor_core_tiles(int64_t batch, int64_t m, int64_t n,
                                                        int64_t k, bool direct_store,
                                                        const Target& target, int64_t elem_bytes,
                                                        bool lean) {
    if (m < 16 || n < 16 || k < 16) return std::nullopt;
    const int64_t sms = std::max(1, target.sm_count());
    const int64_t shared =
        std::max(target.max_shared_memory_per_block_optin(), target.max_shared_memory_per_block());
    std::optional<TensorCoreTiles> best;
    for (const TensorCoreTiles& c : kCandidates) {
        TensorCoreTiles t = c;
        if (t.bm < 64 && k > kSmallTilesK) break;
        if (lean && (t.bm >= 2 * m || t.bn >= 2 * n) &&
            &c != &kCandidates[std::size(kCandidates) - 1])
            continue;
        t.elem_bytes = elem_bytes;
        if (elem_bytes == 4) t.bk = std::max<int64_t>(16, t.bk / 2);
        // The k tile that pads k least (the larger where they tie).
        for (int64_t bk = t.bk / 2; bk >= 16; bk /= 2)
            if (ceil_div(k, bk) * bk < ceil_div(k, t.bk) * t.bk) t.bk = bk;
        t.shared_epilogue = !direct_store || m % t.bm != 0 || n % t.bn != 0;
        if (t.shared_bytes() > shared) continue;
        best = t;
        if (batch * ceil_div(m, t.bm) * ceil_div(n, t.bn) >= sms) break;
    }
    if (!best && lean)
        return choose_tensor_core_tiles(batch, m, n, k, direct_store, target, elem_bytes, false);
    return best;
}

namespace {

// The wgmma tiles of `bn` columns for an m x n x k product in `parts` k parts of `length` (1 and
// k: no split), and the share of the SMs' time they keep computing the output: the tiles (of
// every part) over the rounds of a persistent kernel (a last round part full leaves SMs idle),
// times the output's share of the tiles' area, times the width's own efficiency (kWgmmaWidths).
// Nothing where they cannot serve: shared memory, or edges the copies cannot take. TMA reads
// zeros past every edge (`tma_rows`); cp.async copies need whole k tiles in parts that divide k,
// and whole tiles of m and n unless `gathered` (an implicit GEMM's gathers, whose copies are
// guarded at every edge). With a shared epilogue (`epilogue`) the float32 tile takes its share
// of shared memory, leaving room for at least kWgmmaMinStages k tiles.
std::optional<std::pair<TensorCoreTiles, double>> wgmma_tiles(int64_t m, int64_t n, int64_t k,
                                                              int64_t length, int64_t parts,
                                                              int64_t bn, double efficiency,
                                                              bool tma_rows, bool gathered,
                                                              bool epilogue, const Target& target) {
    const int64_t sms = std::max(1, target.sm_count());
    const int64_t shared =
        std::max(target.max_shared_memory_per_block_optin(), target.max_shared_memory_per_block());
    TensorCoreTiles t{m <= 64 ? 64 : 128, bn, 64, 16, bn, 1, epilogue};
    // (A tile wider than n would be clipped to it, narrower than the instruction's n.)
    if (bn > n) return std::nullopt;
    const int64_t fit =
        (shared - 2048 - t.epilogue_bytes()) / (t.shared_bytes() - t.epilogue_bytes());
    // As many k tiles in flight as shared memory holds (up to 8, and the part's): a narrow
    // tile's step along k is short, and the copies' latency needs more of them ahead.
    t.stages = std::max<int64_t>(2, std::min<int64_t>({fit, 8, ceil_div(length, t.bk)}));
    const bool whole_k = length % t.bk == 0 && k % length == 0;
    const bool whole_mn = m % t.bm == 0 && n % bn == 0;
    if ((!tma_rows && !(whole_k && (whole_mn || gathered))) ||
        fit < (epilogue ? kWgmmaMinStages : 1))
        return std::nullopt;
    const int64_t rows = ceil_div(m, t.bm), cols = ceil_div(n, bn), tiles = rows * cols * parts;
    return std::pair{t, static_cast<double>(tiles) / (ceil_div(tiles, sms) * sms) *
                            static_cast<double>(m * n) / (rows * t.bm * cols * bn) * efficiency};
}

}  // namespace

std::optional<TensorCoreTiles> choose_wgmma_tiles(int64_t batch, int64_t m, int64_t n, int64_t k,
                                                  bool direct_store, bool tma_rows,
                                                  const Target& target, bool epilogue) {
    if (target.arch() != "sm_90a" || (!direct_store && !epilogue) || k < 64) return std::nullopt;
    std::optional<std::pair<TensorCoreTiles, double>> best;
    for (const auto& [bn, efficiency] : kWgmmaWidths)
        if (auto t = wgmma_tiles(m, n, k, k, batch, bn, efficiency, tma_rows, epilogue, epilogue,
                                 target);
            t && (!best || t->second > best->second))
            best = t;
    if (!best || best->second < kWgmmaMinUse) return std::nullopt;
    return best->first;
}

std::optional<TensorCoreTiles> choose_wgmma_row(int64_t batch, int64_t m, int64_t n, int64_t k,
                                                bool direct_store, bool tma_rows,
                                                const Target& target) {
    if (target.arch() != "sm_90a" || batch != 1 || m > 128 || !direct_store || !tma_rows || k < 64)
        return std::nullopt;
    const int64_t sms = std::max(1, target.sm_count());
    std::optional<TensorCoreTiles> best;
    double best_use = 0;
    for (const auto& width : kWgmmaWidths) {
        auto t = wgmma_tiles(m, n, k, k, 1, width.first, 1.0, tma_rows, false, false, target);
        if (!t) continue;
        const int64_t tiles = ceil_div(n, width.first);
        const double use = static_cast<double>(tiles) / (ceil_div(tiles, sms) * sms);
        if (use > best_use) {
            best = t->first;
            best_use = use;
        }
    }
    if (best_use < kWgmmaMinUse) return std::nullopt;
    return best;
}

std::optional<WgmmaSplit> choose_wgmma_split(int64_t batch, int64_t m, int64_t n, int64_t k,
                                             bool tma_rows, const Target& target) {
    // Only a few rows, which one block's tile holds (above, mma.sync's smaller tiles have filled
    // the SMs without a split).
    if (target.arch() != "sm_90a" || batch != 1 || !tma_rows || m > 128) return std::nullopt;
    const int64_t sms = std::max(1, target.sm_count());
    // The longest parts at which some width keeps the SMs busy enough.
    for (const int64_t min_length : kWgmmaSplitMinLengths) {
        std::optional<std::pair<TensorCoreTiles, double>> best;
        int64_t best_length = 0;
        for (const auto& [bn, efficiency] : kWgmmaWidths) {
            const int64_t tiles = ceil_div(n, bn);
            if (tiles * 2 > sms) continue;
            // As many parts as one round of the SMs holds (at most 16), each whole k tiles of 64.
            const int64_t want = std::min<int64_t>(16, sms / tiles);
            const int64_t length =
                std::max<int64_t>(min_length, ceil_div(ceil_div(k, want), 64) * 64);
            const int64_t parts = ceil_div(k, length);
            if (parts < 2) continue;
            if (auto t = wgmma_tiles(m, n, k, length, parts, bn, efficiency, tma_rows, false, false,
                                     target);
                t && (!best || t->second > best->second)) {
                best = t;
                best_length = length;
            }
        }
        if (best && best->second >= kWgmmaMinUse) return WgmmaSplit{best->first, best_length};
    }
    return std::nullopt;
}

namespace {

// Split-K for an implicit GEMM on wgmma (its gathers `gathered` into guarded cp.async copies,
// an exact k) whose tiles are less than a wave: as mma.sync's exact split (split_k_length), parts
// that divide k, whole k tiles of 64 and at least kSplitExactMinLength long, about two waves of
// blocks in all; the parts' partial sums store their fragments directly (stopping at the edges),
// the summing kernel applies the conv. The width that keeps the SMs computing the most.
std::optional<WgmmaSplit> choose_wgmma_exact_split(int64_t m, int64_t n, int64_t k,
                                                   const Target& target) {
    if (target.arch() != "sm_90a" || k % 64 != 0) return std::nullopt;
    const int64_t sms = std::max(1, target.sm_count());
    std::optional<std::pair<TensorCoreTiles, double>> best;
    int64_t best_length = 0;
    for (const auto& [bn, efficiency] : kWgmmaWidths) {
        const int64_t tiles = ceil_div(m, m <= 64 ? 64 : 128) * ceil_div(n, bn);
        if (tiles >= sms) continue;
        for (int64_t parts = std::min<int64_t>(kSplitExactMaxParts, ceil_div(2 * sms, tiles));
             parts >= 2; --parts) {
            const int64_t length = k / parts;
            if (k % parts != 0 || length % 64 != 0 || length < kSplitExactMinLength) continue;
            if (auto t =
                    wgmma_tiles(m, n, k, length, parts, bn, efficiency, false, true, false, target);
                t && (!best || t->second > best->second)) {
                best = t;
                best_length = length;
            }
            break;
        }
    }
    if (!best || best->second < kWgmmaMinUse) return std::nullopt;
    return WgmmaSplit{best->first, best_length};
}

}  // namespace

int64_t persistent_blocks(int64_t tiles, const Target& target) {
    const int64_t sms = std::max(1, target.sm_count());
    return ceil_div(tiles, ceil_div(tiles, sms));
}

namespace {

// Whether a product's body is sum(round_tf32(A[..]) * round_tf32(B[..])).
bool rounded_to_tf32(const Expr& body) {
    const auto* r = body.as<Reduce>();
    const auto* mul = r && r->source.size() == 1 ? r->source[0].as<Mul>() : nullptr;
    auto rounded = [](const Expr& e) {
        const auto* c = e.as<Call>();
        return c && c->op == Intrinsic::round_tf32 && c->args[0].as<TensorRead>();
    };
    return mul && rounded(mul->a) && rounded(mul->b);
}

// A product the tensor cores compute: its mma intrinsic, its two reads (A, B) and its extents.
struct GemmMatch {
    const char* mma = nullptr;
    std::vector<MatchedRead> reads;
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool tf32 = false;
    /// Per operand: the run of consecutive addresses along its rows (an implicit GEMM's gather:
    /// the channels of an NHWC input), 0 for a placeholder (its whole row).
    int64_t run[2] = {0, 0};
    /// An operand is a gather inlined into its tiles, which reads real elements past k: the
    /// reduction cannot run past k (no padded k tiles, split-K parts that divide k).
    bool k_exact = false;
    /// B (read [n][k]) is a gather whose consecutive addresses run along n (an HWIO weight):
    /// its shared tile is stored k-major, copied along n, its fragments loaded by ldmatrix .trans.
    bool b_kmajor = false;
    int64_t elem_bytes() const { return tf32 ? 4 : 2; }
};

// Whether `op` is an implicit GEMM's gather (Schedule::reindex): a copy of one tensor read.
bool is_gather(const Operation& op) {
    const ComputeOpNode* c = as_compute(op);
    return c && c->reduce_axis.empty() && c->body.size() == 1 && c->body[0].as<TensorRead>();
}

// The elements (8, 4, 2 or 1) of a 2-D gather's rows (its columns: `along` 0) that lie at
// consecutive addresses of its tensor from an address that many elements aligned, at every
// point along them and for the first few: 8 for an NHWC input's channels (C % 8 == 0) or an OHWI
// weight's rows, 1 for an HWIO weight's rows (they step by the output channels; its columns run)
// or an NCHW input's.
int64_t contiguous_run(const Operation& gather, int along = 1) {
    const ComputeOpNode* c = as_compute(gather);
    const int across = 1 - along;
    const auto* read = c->body[0].as<TensorRead>();
    std::vector<int64_t> shape;
    for (const Expr& e : read->tensor.shape()) shape.push_back(as_const_int(e).value_or(-1));
    const int64_t rows = as_const_int(c->axis[across].dom().extent).value_or(1);
    const int64_t cols = as_const_int(c->axis[along].dom().extent).value_or(1);
    auto address = [&](int64_t i, int64_t j) -> std::optional<int64_t> {
        VarMap at;
        at[c->axis[across].var().get()] = make_const(c->axis[across].var().type(), i);
        at[c->axis[along].var().get()] = make_const(c->axis[along].var().type(), j);
        int64_t a = 0;
        for (size_t d = 0; d < read->indices.size(); ++d) {
            std::optional<int64_t> x = as_const_int(simplify(substitute(read->indices[d], at)));
            if (!x || shape[d] < 0) return std::nullopt;
            a = a * shape[d] + *x;
        }
        return a;
    };
    for (int64_t v = 8; v > 1; v /= 2) {
        bool ok = cols % v == 0;
        for (int64_t i = 0; ok && i < std::min<int64_t>(rows, 4); ++i)
            for (int64_t j = 0; ok && j < std::min<int64_t>(cols, 512); j += v) {
                const std::optional<int64_t> first = address(i, j);
                ok = first && *first % v == 0;
                for (int64_t l = 1; ok && l < v; ++l) ok = address(i, j + l) == *first + l;
            }
        if (ok) return v;
    }
    return 1;
}

// C[lead.., i, j] = sum_k A[.., i, k] * B[.., k, j] (or B[.., j, k]) of two float16 or bfloat16
// placeholders accumulated in float32 (or float32 ones rounded to tf32); the k index may be
// split-K's `part * length + k`, and `split` (split-K's partial sums) admits its bound `part *
// length + k < k's extent`. `gathers` admits an implicit GEMM's gathers as operands.
std::optional<GemmMatch> match_gemm(const Operation& op, bool split = false, bool gathers = false) {
    const ComputeOpNode* c = as_compute(op);
    if (!c || (c->axis.size() != 2 && c->axis.size() != 3) || c->reduce_axis.size() != 1 ||
        c->body.size() != 1 || c->body[0].type() != Float(32))
        return std::nullopt;
    const std::vector<Tensor> inputs = op_inputs(op);
    auto operand = [&](const Tensor& t) {
        return as_placeholder(t.op()) || (gathers && is_gather(t.op()));
    };
    if (inputs.size() != 2 || !operand(inputs[0]) || !operand(inputs[1]) ||
        inputs[0].dtype() != inputs[1].dtype())
        return std::nullopt;
    const Type in = inputs[0].dtype();
    // float32 only as tf32: both operands' reads rounded (op::matmul's allow_tf32); a plain
    // float32 product stays float32 on the CUDA cores.
    const bool tf32 = in == Float(32) && rounded_to_tf32(c->body[0]);
    if (in != Float(16) && in != BFloat(16) && !tf32) return std::nullopt;
    const size_t d = c->axis.size();
    std::vector<Expr> lead;
    for (size_t ax = 0; ax + 2 < d; ++ax) lead.push_back(c->axis[ax].var());
    const Var &iv = c->axis[d - 2].var(), &jv = c->axis[d - 1].var(), &kv = c->reduce_axis[0].var();
    GemmMatch g;
    // B read k-major (B[k, j]) or n-major (B[j, k]: dense's weight, attention's K).
    for (bool b_nk : {false, true}) {
        const char* name = tf32 ? (b_nk ? "mma_m16n8k8_tf32_bt" : "mma_m16n8k8_tf32")
                           : in == Float(16)
                               ? (b_nk ? "mma_m16n8k16_f16_bt" : "mma_m16n8k16_f16")
                               : (b_nk ? "mma_m16n8k16_bf16_bt" : "mma_m16n8k16_bf16");
        g.reads.clear();
        std::vector<Expr> bounds;
        if (match_tensor_intrin(*find_tensor_intrin(name), c->body[0], Float(32), &g.reads,
                                split ? &bounds : nullptr)
                .empty() &&
            g.reads.size() == 2 && reads_exactly(g.reads[0].stage, lead, iv, kv) &&
            (b_nk ? reads_exactly(g.reads[1].stage, lead, jv, kv)
                  : reads_exactly(g.reads[1].stage, lead, kv, jv))) {
            g.mma = name;
            break;
        }
    }
    if (!g.mma) return std::nullopt;
    g.tf32 = tf32;
    auto extent = [](const IterVar& v) { return as_const_int(v.dom().extent).value_or(0); };
    g.batch = d == 3 ? extent(c->axis[0]) : 1;
    g.m = extent(c->axis[d - 2]);
    g.n = extent(c->axis[d - 1]);
    g.k = extent(c->reduce_axis[0]);
    if (g.batch <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return std::nullopt;
    return g;
}

// Whether split-K's sum goes in the wgmma kernel (TensorCorePlan::sum_in_kernel): a 2-D product
// whose sum, or the sum's one consumer, reads the partial sums `partials` as reverse_compute_at
// needs (its own axes, the parts summed), unless TESSEL_CUDA_SPLIT_K_KERNELS=2 asks for a second
// kernel.
bool sum_in_kernel(const Schedule& s, const TensorCorePlan& p, const Operation& partials) {
    const char* env = std::getenv("TESSEL_CUDA_SPLIT_K_KERNELS");
    if (env && std::string(env) == "2") return false;
    if (op_output(partials, 0).shape().size() != 3) return false;
    const Operation x = p.sum_consumer.defined() ? p.sum_consumer : p.split_sum;
    return tessel::internal::reverse_reads(s.stages(), s.stage_of(x), s.stage_of(partials))
        .error.empty();
}

// Split-K: the length of the parts a 2-D product's reduction is split into where its tiles
// leave more than half the multiprocessors idle: about one wave of blocks in all, each part a
// multiple of 64 long (whole k tiles of any block: a part's mma cannot pad into the next part's
// elements) and at least 256; the last part may run past k (its bound dropped where the operands
// read zero past k). An exact k (k_exact: an implicit GEMM's inlined gathers) is split where its
// tiles are less than a wave, into parts that divide it (at least 256 long), about two waves of
// blocks in all (a 7 x 7 layer's 49 pixels and 4,608-long window: 18 parts). 0 for no split.
int64_t split_k_length(const GemmMatch& g, const TensorCoreTiles& t, const Target& target) {
    const int64_t sms = std::max(1, target.sm_count());
    const int64_t blocks = ceil_div(g.m, t.bm) * ceil_div(g.n, t.bn);
    if (g.k_exact) {  // (an implicit GEMM: less than a wave, about two waves of parts)
        if (g.batch != 1 || blocks >= sms) return 0;
        for (int64_t n = std::min<int64_t>(kSplitExactMaxParts, ceil_div(2 * sms, blocks)); n >= 2;
             --n)
            if (g.k % n == 0 && (g.k / n) % 64 == 0 && g.k / n >= kSplitExactMinLength)
                return g.k / n;
        return 0;
    }
    if (g.batch != 1 || blocks * 2 > sms) return 0;
    const int64_t parts = std::min<int64_t>(16, ceil_div(sms, blocks));
    const int64_t length = std::max<int64_t>(256, ceil_div(ceil_div(g.k, parts), 64) * 64);
    return ceil_div(g.k, length) >= 2 ? length : 0;
}

// The plan of product `dag_op` (matched as `g`) whose element-wise consumer is `qop` (undefined
// for none); `direct`: the consumer (or the product itself) can store the fragments.
std::optional<TensorCorePlan> plan_product(Schedule& s, const Operation& dag_op,
                                           std::optional<GemmMatch> g, Operation qop, bool direct,
                                           const Target& target) {
    std::optional<TensorCoreTiles> tiles = choose_tensor_core_tiles(
        g->batch, g->m, g->n, g->k, direct, target, g->elem_bytes(), g->k_exact);
    if (!tiles) return std::nullopt;

    TensorCorePlan p;
    Operation op = dag_op;
    const bool b_nk = find_tensor_intrin(g->mma)->trans;
    std::optional<TensorCoreTiles> w;
    // TMA fetches rows of kernel arguments that are a multiple of 16 bytes (A's and a [n][k] B's
    // of k elements, a [k][n] B's of n).
    const bool tma = as_placeholder(g->reads[0].stage->tensor.op()) &&
                     as_placeholder(g->reads[1].stage->tensor.op());
    const bool tma_rows = tma && g->k % 8 == 0 && (b_nk || g->n % 8 == 0);
    // The shared epilogue: the product's fragments stored into a float32 tile in shared memory,
    // which the consumer (or the output, a copy of it) copies out with guards.
    auto shared_epilogue = [&](int st) {
        if (qop.defined()) {  // the product's tile in shared memory, the consumer the epilogue
            s.set_scope(st, StorageScope::Shared);
            p.acc = s.stage(s.cache_write(st, "warp")).op;
            p.store = op;
            p.epilogue = qop;
        } else {  // an output: a shared copy of it stores the fragments, the output copies it out
            const int gs = s.cache_write(st, "shared");
            p.store = s.stage(gs).op;
            p.acc = s.stage(s.cache_write(gs, "warp")).op;
            p.epilogue = op;
        }
        // Its rows padded (TensorCoreTiles::kEpilogueRowPad): stride % 32 == 8 floats.
        const int tile = s.stage_of(p.store);
        s.storage_align(tile, static_cast<int>(op_output(p.store, 0).shape().size()) - 2, 32,
                        TensorCoreTiles::kEpilogueRowPad);
    };
    // Split-K: the parts' partial sums [part, i, j] (rfactor) become the tensor-core product, a
    // batch of parts (matched again, an implicit GEMM's gathers admitted, with what was learned
    // of the operands), and the product sums them.
    auto split_k = [&](int64_t length) {
        const int st = s.stage_of(op);
        s.split(st, 2, length);  // [i, j, part, k]
        op = s.stage(s.rfactor(st, 2, 0)).op;
        std::optional<GemmMatch> parts = match_gemm(op, true, true);
        TESSEL_CHECK(parts) << "split-K: the partial sums of " << dag_op->name
                            << " are not a tensor-core product";
        std::copy(std::begin(g->run), std::end(g->run), std::begin(parts->run));
        parts->k_exact = g->k_exact;
        parts->b_kmajor = g->b_kmajor;
        p.split_sum = dag_op;
        p.sum_consumer = qop;
        qop = Operation();
        return parts;
    };
    // An implicit GEMM whose gathers cp.async copies 16 bytes at a time from where they lie (an
    // NHWC input of channels in eights; an OHWI weight, or an HWIO one along its output
    // channels) and whose k is whole wgmma k tiles: the wgmma kernel with a shared epilogue.
    const bool gathered =
        g->k_exact && g->k % 64 == 0 && g->run[0] % 8 == 0 && (g->b_kmajor || g->run[1] % 8 == 0);
    if (!g->tf32)
        w = choose_wgmma_tiles(g->batch, g->m, g->n, g->k, direct, tma_rows, target, gathered);
    // Split-K on wgmma where mma.sync would split too (a short k fills the SMs with mma.sync's
    // smaller tiles instead: 64 x 3072 x 768 ran at 1.53 x cuBLAS unsplit on mma.sync, 1.14 x in
    // three wgmma parts, H200).
    std::optional<WgmmaSplit> ws;
    if (!w && !g->tf32 && !g->k_exact && split_k_length(*g, *tiles, target) > 0)
        ws = choose_wgmma_split(g->batch, g->m, g->n, g->k, tma_rows, target);
    if (!w && gathered && g->batch == 1) ws = choose_wgmma_exact_split(g->m, g->n, g->k, target);
    // One row of tiles that mma.sync would compute unsplit: wgmma streams B faster (128 x 4096 x
    // 4096: 0.81 x cuBLAS in 64 tiles of 128 x 64 against mma.sync's 0.44; 96 x 4096 x 4096: 0.61
    // against 0.32; H100).
    if (!w && !ws && !g->tf32 && !g->k_exact && split_k_length(*g, *tiles, target) == 0)
        w = choose_wgmma_row(g->batch, g->m, g->n, g->k, direct, tma_rows, target);
    if (ws) {  // the wgmma product computes the parts' partial sums
        g = split_k(ws->length);
        w = ws->tiles;
        p.sum_in_kernel = !w->shared_epilogue && sum_in_kernel(s, p, op);
    }
    if (w) {
        // Tutorial 08: the operands' shared tiles feed wgmma directly (no fragment stages).
        p.tiles = *w;
        p.mma = g->mma;
        p.wgmma = wgmma_intrin_name(w->bn, op_inputs(dag_op).at(0).dtype(), b_nk);
        p.tma = tma;
        p.b_kmajor = g->b_kmajor;
        // (a batch is split-K's parts: their tiles are the kernel's too)
        p.blocks =
            persistent_blocks(g->batch * ceil_div(g->m, w->bm) * ceil_div(g->n, w->bn), target);
        p.a_shared =
            s.stage(s.cache_read(s.stage_of(g->reads[0].stage->tensor), "shared", {s.stage_of(op)}))
                .op;
        p.b_shared =
            s.stage(s.cache_read(s.stage_of(g->reads[1].stage->tensor), "shared", {s.stage_of(op)}))
                .op;
        const int st = s.stage_of(op);
        if (w->shared_epilogue) {
            shared_epilogue(st);
        } else if (qop.defined()) {
            s.set_scope(st, StorageScope::Warp);
            p.acc = s.stage(st).op;
            p.store = qop;
        } else {
            p.acc = s.stage(s.cache_write(st, "warp")).op;
            p.store = op;
        }
        return p;
    }
    if (int64_t length = split_k_length(*g, *tiles, target); length > 0) {
        // The product itself sums the parts (one thread an output, in its consumer).
        g = split_k(length);
        tiles = choose_tensor_core_tiles(g->batch, g->m, g->n, g->k, true, target, g->elem_bytes(),
                                         g->k_exact);
        TESSEL_CHECK(tiles) << "split-K: no tiles for the partial sums of " << dag_op->name;
    }
    p.tiles = *tiles;
    p.mma = g->mma;
    p.b_nk = find_tensor_intrin(g->mma)->trans;
    p.tf32 = g->tf32;
    const std::vector<MatchedRead>& reads = g->reads;
    // An operand whose rows have an odd length cannot be copied by cp.async (4 to 16 bytes from
    // an aligned address; 2-byte copies through registers starve the mma at long k): it is
    // copied whole into a global buffer whose rows are padded to 16 bytes (a kernel of its own,
    // one pass over the operand, part of the call), and its tiles copy from there.
    // (cp.async copies a float32 element, 4 bytes, wherever it lies.)
    // So is an inlined gather whose runs of consecutive addresses are odd (an NHWC input of 3
    // channels), and any gather when k is not a multiple of 16 (its reads past k are real
    // elements; a stored copy's are zero).
    auto source = [&](const Tensor& t, int64_t run, bool kmajor, bool& padded) {
        const int64_t row = run > 0 ? run : as_const_int(t.shape().back()).value_or(1);
        const bool pads_k = is_gather(t.op()) && g->k % 16 != 0;
        if (!pads_k && (p.tf32 || kmajor || row_vector(row, 2) >= 2)) return t.op();
        const int copy = s.cache_read(s.stage_of(t), "global", {s.stage_of(op)});
        s.storage_align(copy, static_cast<int>(t.shape().size()) - 2, 8, 0);
        padded = true;
        return s.stage(copy).op;
    };
    p.b_kmajor = g->b_kmajor && g->k % 16 == 0;
    const Operation a_from = source(reads[0].stage->tensor, g->run[0], false, p.a_padded);
    const Operation b_from = source(reads[1].stage->tensor, g->run[1], p.b_kmajor, p.b_padded);
    int st = s.stage_of(op);
    const int as = s.cache_read(s.stage_of(a_from), "shared", {st});
    st = s.stage_of(op);
    const int af = s.cache_read(as, "warp", {st});
    p.a_shared = s.stage(as).op;
    p.a_frag = s.stage(af).op;
    st = s.stage_of(op);
    const int bs = s.cache_read(s.stage_of(b_from), "shared", {st});
    st = s.stage_of(op);
    const int bf = s.cache_read(bs, "warp", {st});
    p.b_shared = s.stage(bs).op;
    p.b_frag = s.stage(bf).op;
    st = s.stage_of(op);
    if (!tiles->shared_epilogue) {
        if (qop.defined()) {  // the conversion stores the fragments; the product is the accumulator
            s.set_scope(st, StorageScope::Warp);
            p.acc = s.stage(st).op;
            p.store = qop;
        } else {
            p.acc = s.stage(s.cache_write(st, "warp")).op;
            p.store = op;
        }
        return p;
    }
    shared_epilogue(st);
    return p;
}

// conv2d (groups of 1) as an implicit GEMM on the tensor cores: Schedule::reindex makes it a
// product of two gathers (im2col, never stored: inlined into the shared tiles' copies), which
// plan_product plans as any other; the conv, now a copy out of the product (or its element-wise
// consumer, the conv inlined), is the shared epilogue, its loops grouped as the product's axes.
// A gather whose rows hold odd runs of consecutive addresses, and every gather when k is not a
// multiple of 16, is stored first, its rows padded to 16 bytes (plan_product's `source`).
std::optional<TensorCorePlan> plan_implicit_gemm(Schedule& s, const Operation& conv, Operation qop,
                                                 const Target& target) {
    std::optional<ImplicitGemmLayout> layout = implicit_gemm_layout(conv);
    const std::vector<Tensor> inputs = op_inputs(conv);
    if (!layout || inputs.size() != 2) return std::nullopt;
    // NCHW too as pixels x output channels (A the input's gather: the mma's A is the body's first
    // read), its epilogue storing along the pixels' blocks.
    const bool nhwc = layout->consumer_order.front() == 0;
    if (!nhwc) *layout = {{0, 2, 3, 1, 4, 5, 6}, {3, 1, 3}, {0, 2, 3, 1}, {3, 1}};
    const Schedule saved = s;
    const int product_stage = s.reindex(s.stage_of(conv), layout->order, layout->groups);
    const Operation product = s.stage(product_stage).op;
    const std::vector<Tensor> gathers = op_inputs(product);
    std::optional<GemmMatch> g = match_gemm(product, false, true);
    if (!g || g->tf32 || gathers.size() != 2) {
        s = saved;
        return std::nullopt;
    }
    // The runs of consecutive addresses along the gathers' rows (their last axis is the
    // reduction, window x channels): an NHWC input's channels ([pixels, k]), an OIHW or OHWI
    // weight's whole rows ([channels, k]). An HWIO weight's rows step by its channels, and an
    // NCHW input's by its pixels: no runs (1), stored first (one pass over the tensor, part of
    // the call).
    g->run[0] = contiguous_run(gathers[0].op());
    g->run[1] = contiguous_run(gathers[1].op());
    // An HWIO weight ([channels, k], read [n][k]): its columns run; a k-major shared tile.
    if (g->run[1] == 1 && find_tensor_intrin(g->mma)->trans &&
        contiguous_run(gathers[1].op(), 0) == 8)
        g->b_kmajor = true;
    g->k_exact = true;
    if (qop.defined())
        s.compute_inline(product_stage + 1);  // the conv, a copy out of the product
    else
        qop = conv;  // (the copy out of the product: the stage the conv's tensor names)
    std::optional<TensorCorePlan> p = plan_product(s, product, g, qop, false, target);
    if (!p) {
        s = saved;
        return std::nullopt;
    }
    for (const Tensor& t : gathers) s.compute_inline(s.stage_of(t));
    if (p->epilogue.defined() && !p->split_sum.defined()) {  // (split-K: the partials' copy)
        p->consumer_order = layout->consumer_order;
        p->consumer_groups = layout->consumer_groups;
        p->epilogue_vector = nhwc;
    }
    return p;
}

}  // namespace

std::optional<TensorCorePlan> plan_tensor_core(Schedule& s, const DAGAnalysis& a, int i, int q,
                                               const Target& target) {
    if (!target.is_gpu() || target.compute_capability() < 80) return std::nullopt;
    const Operation& op = a.ops()[static_cast<size_t>(i)];
    const Operation qop = q >= 0 ? a.ops()[static_cast<size_t>(q)] : Operation();
    if (std::optional<GemmMatch> g = match_gemm(op))
        return plan_product(s, op, g, qop, !qop.defined() || only_converts(qop, op), target);
    return plan_implicit_gemm(s, op, qop, target);
}

namespace {

// The shared epilogue (p.epilogue): [batch, block rows, block columns, the tile's copy out of
// shared memory over the block's 32 x warps_y x warps_z threads], the fragments' store into the
// shared tile (`store`) computed at its block columns.
void schedule_epilogue(Schedule& s, const TensorCorePlan& p, int store, bool batched,
                       int64_t warps_y, int64_t warps_z) {
    const TensorCoreTiles& t = p.tiles;
    const int e = s.stage_of(p.epilogue);
    if (!p.consumer_order.empty()) group_loops(s, e, {{}, {}, p.consumer_order, p.consumer_groups});
    const int64_t cols = as_const_int(op_output(p.epilogue, 0).shape().back()).value_or(1);
    LoopNest n(
        s, e,
        batched ? std::vector<std::string>{"b", "i", "j"} : std::vector<std::string>{"i", "j"});
    n.split("i", t.bm, "bi", "i");
    n.split("j", t.bn, "bj", "j");
    const int64_t vector = !p.epilogue_vector ? 1 : cols % 4 == 0 ? 4 : cols % 2 == 0 ? 2 : 1;
    if (vector > 1) n.split("j", vector, "j", "vec");
    std::vector<std::string> order = {"bi", "bj", "i", "j"};
    if (vector > 1) order.push_back("vec");
    if (batched) order.insert(order.begin(), "b");
    n.reorder(order);
    n.fuse({"i", "j"}, "f");
    spread_over_block(n, warps_y, warps_z);
    n.unroll("o");
    if (vector > 1) n.vectorize("vec");
    if (batched) n.bind("b", IterAnnotation::BlockZ);
    n.bind("bi", IterAnnotation::BlockY);
    n.bind("bj", IterAnnotation::BlockX);
    s.compute_at(store, e, n.pos("bj"));
}

// Split-K's sum in the wgmma kernel (TensorCorePlan::sum_in_kernel): the sum's consumer (or the
// sum, an output) computed after each tile of partial sums by the last block to finish the tile's
// parts (reverse_compute_at at the tile loop `at` of the partial sums' stage `store`), its tile
// of bm x bn as vectors of 4 along the columns (where the columns allow), the block's threads
// (32 lanes x 4 warps x the warp groups) on consecutive vectors, the sum over the parts per
// vector inside it. 64 x 4096 x 4096 on an H100: the second kernel took 4.2 us of the 16.2 us
// product (docs/perf/tensor-cores.md, "64 x 4096 x 4096: the second kernel").
void schedule_split_sum(Schedule& s, const TensorCorePlan& p, int store, int at) {
    const TensorCoreTiles& t = p.tiles;
    const bool consumer = p.sum_consumer.defined();
    const int x = s.stage_of(consumer ? p.sum_consumer : p.split_sum);
    s.reverse_compute_at(x, store, at);
    const int64_t n = as_const_int(op_output(p.split_sum, 0).shape().back()).value_or(1);
    const int64_t vector = n % 4 == 0 ? 4 : 1;
    LoopNest l(
        s, x,
        consumer ? std::vector<std::string>{"i", "j"} : std::vector<std::string>{"i", "j", "r"});
    l.split("j", vector, "jv", "j4");
    l.fuse({"i", "jv"}, "f");
    l.split("f", 32, "f", "fx");
    l.split("f", 4, "f", "fy");
    l.split("f", t.bm / 64, "fr", "fz");
    std::vector<std::string> order = {"fz", "fy", "fx", "fr", "j4"};
    if (!consumer) order.insert(order.end() - 1, "r");
    l.reorder(order);
    l.bind("fz", IterAnnotation::ThreadZ);
    l.bind("fy", IterAnnotation::ThreadY);
    l.bind("fx", IterAnnotation::ThreadX);
    if (vector > 1) l.vectorize("j4");
    if (!consumer) return;
    const int sum = s.stage_of(p.split_sum);
    s.set_scope(sum, StorageScope::Local);
    s.compute_at(sum, x, l.pos("fr"));
    LoopNest r(s, sum, {"i", "j", "r"});
    r.reorder({"i", "r", "j"});
    if (vector > 1) r.vectorize("j");
}

// Tutorial 08's kernel (tutorials/08_hopper_gemm.py, step 2 with blocks numbered `group` block
// rows first): warp groups of 64 rows (threadIdx.z), their 4 warps of 16 rows (threadIdx.y),
// each warp's 16 x bn slice one wgmma per 16 of k; A's and B's tiles k tiles of 64 deep,
// swizzled (B in column panels of 64), fetched 4 tiles ahead by TMA when both are kernel
// arguments, else by cp.async. With TMA the kernel is persistent (step 4): as many blocks as
// SMs (the most that divide the tiles), each computing its tiles in turn, the pipeline running
// on from one to the next.
void schedule_wgmma(Schedule& s, const TensorCorePlan& p) {
    const TensorCoreTiles& t = p.tiles;
    const int store = s.stage_of(p.store);
    // Split-K's partial sums (p.split_sum) are [part, i, j]: the parts are tiles of their own.
    const std::vector<Expr> shape = op_output(p.store, 0).shape();
    const bool parts = shape.size() == 3;
    const int64_t rows = as_const_int(shape[shape.size() - 2]).value_or(t.bm);
    int64_t group = 8;
    while (ceil_div(rows, t.bm) % group != 0) group /= 2;
    // A shared epilogue: its blocks of bm x bn, 32 x 4 x (bm / 64) threads copying the tile out.
    if (p.epilogue.defined()) schedule_epilogue(s, p, store, false, 4, t.bm / 64);
    // Names of loops, after split-K's part where there is one.
    auto axes = [&](std::vector<std::string> names) {
        if (parts) names.insert(names.begin(), "p");
        return names;
    };
    LoopNest o(s, store, axes({"i", "j"}));
    o.split("i", 16, "i", "i16");
    o.split("i", 4, "i", "w");
    o.split("i", t.bm / 64, "bi", "g");
    o.split("bi", group, "bg", "bi");
    o.split("j", 8, "j", "j8");
    o.split("j", t.bn / 8, "bj", "fj");
    o.reorder(axes({"bg", "bj", "bi", "g", "w", "fj", "i16", "j8"}));
    // (A shared epilogue's blocks are the epilogue's: inside them the tile loops run once.)
    if (!p.epilogue.defined()) {
        if (p.tma) {  // persistent (tutorial 08's step 4): blocks of several tiles, one an SM
            o.fuse(axes({"bg", "bj", "bi"}), "t");
            o.split("t", p.blocks, "tt", "b");
            o.reorder({"b", "tt", "g", "w", "fj", "i16", "j8"});
        } else {  // a block a tile (of a split-K part)
            o.bind("bg", IterAnnotation::BlockY);
            o.fuse({"bj", "bi"}, "b");
            if (parts) o.bind("p", IterAnnotation::BlockZ);
        }
        o.bind("b", IterAnnotation::BlockX);
    }
    if (p.sum_in_kernel) schedule_split_sum(s, p, store, o.pos(p.tma ? "tt" : "b"));
    o.bind("g", IterAnnotation::ThreadZ);
    o.bind("w", IterAnnotation::ThreadY);
    o.unroll("fj");
    s.tensorize(store, o.pos("i16"), "store_c");
    const int acc = s.stage_of(p.acc);
    s.compute_at(acc, store, o.pos("w"));
    LoopNest f(s, acc, axes({"i", "j", "k"}));
    f.split("k", 16, "k", "kk");
    f.split("k", t.bk / 16, "ko", "ki");
    f.reorder(axes({"ko", "ki", "i", "j", "kk"}));
    f.unroll("ki");
    s.tensorize(acc, f.pos("i"), p.wgmma);
    for (const Operation& tile : {p.a_shared, p.b_shared}) {
        const int st = s.stage_of(tile);
        s.compute_at(st, acc, f.pos("ko"));
        const bool b_nk = p.wgmma.ends_with("_bt");  // B[j, k]: rows of k, like A's
        const bool b = tile.same_as(p.b_shared);
        // (A batched product's tiles lead with its batch, one matrix: dims before the tile's.)
        const int lead = static_cast<int>(op_output(tile, 0).shape().size()) - 2;
        std::vector<int> order;
        for (int d = 0; d < lead; ++d) order.push_back(d);
        if (b && !b_nk) {  // B[k, j] in column panels: [bn / 64][bk][64]
            s.storage_split(st, lead + 1, 64);
            order.insert(order.end(), {lead + 1, lead, lead + 2});
            s.storage_reorder(st, order);
        } else if (b && p.b_kmajor) {  // B[j, k] whose addresses run along j: the same panels
            s.storage_split(st, lead, 64);
            order.insert(order.end(), {lead, lead + 2, lead + 1});
            s.storage_reorder(st, order);
        }
        s.storage_swizzle(st);
        if (p.tma)
            s.tma(st);
        else
            copy_by_block(s, st, 8, 4, t.bm / 64, false, b && p.b_kmajor);
        s.pipeline(st, t.stages);
    }
}

}  // namespace

void schedule_tensor_core(Schedule& s, const TensorCorePlan& p) {
    if (!p.wgmma.empty()) return schedule_wgmma(s, p);
    const TensorCoreTiles& t = p.tiles;
    const int store = s.stage_of(p.store);
    const bool batched = s.stage(store).leaf.size() == 3;
    if (p.epilogue.defined()) schedule_epilogue(s, p, store, batched, t.bn / t.wn, t.bm / t.wm);
    // The fragments' store: [batch, blocks m, n, warps m (threadIdx.z), n (threadIdx.y),
    // fragments m, n, 16 x 8 store_c]; inside the epilogue the block loops run once.
    LoopNest o(
        s, store,
        batched ? std::vector<std::string>{"b", "i", "j"} : std::vector<std::string>{"i", "j"});
    o.split("i", 16, "i", "i16");
    o.split("i", t.wm / 16, "i", "fi");
    o.split("i", t.bm / t.wm, "bi", "wi");
    o.split("j", 8, "j", "j8");
    o.split("j", t.wn / 8, "j", "fj");
    o.split("j", t.bn / t.wn, "bj", "wj");
    std::vector<std::string> order = {"bi", "bj", "wi", "wj", "fi", "fj", "i16", "j8"};
    if (batched) order.insert(order.begin(), "b");
    o.reorder(order);
    if (!p.epilogue.defined()) {
        if (batched) o.bind("b", IterAnnotation::BlockZ);
        o.bind("bi", IterAnnotation::BlockY);
        o.bind("bj", IterAnnotation::BlockX);
    }
    o.bind("wi", IterAnnotation::ThreadZ);
    o.bind("wj", IterAnnotation::ThreadY);
    o.unroll("fi");
    o.unroll("fj");
    s.tensorize(store, o.pos("i16"), "store_c");
    // The accumulator at the warp: [batch, k tiles, k fragments, fragments m, n, mma].
    const int acc = s.stage_of(p.acc);
    s.compute_at(acc, store, o.pos("wj"));
    LoopNest f(s, acc,
               batched ? std::vector<std::string>{"b", "i", "j", "k"}
                       : std::vector<std::string>{"i", "j", "k"});
    f.split("i", 16, "fi", "i");
    f.split("j", 8, "fj", "j");
    const int64_t kk = p.tf32 ? 8 : 16;  // one mma's k
    f.split("k", kk, "k", "kk");
    f.split("k", t.bk / kk, "ko", "ki");
    order = {"ko", "ki", "fi", "fj", "i", "j", "kk"};
    if (batched) order.insert(order.begin(), "b");
    f.reorder(order);
    f.unroll("ki");
    f.unroll("fi");
    f.unroll("fj");
    s.tensorize(acc, f.pos("i"), p.mma);
    // The fragments at the k fragment loop: A's 16 x 16 by ldmatrix, B's 16 x 16 (two fragments)
    // by ldmatrix .trans (B k-major) or plain ldmatrix into a buffer indexed [n][k].
    const int af = s.stage_of(p.a_frag), bf = s.stage_of(p.b_frag);
    s.compute_at(af, acc, f.pos("ki"));
    s.compute_at(bf, acc, f.pos("ki"));
    // (Fragments without the batch dims: split-K's parts read one matrix.)
    const bool a_batched = s.stage(af).leaf.size() == 3, b_batched = s.stage(bf).leaf.size() == 3;
    LoopNest fa(
        s, af,
        a_batched ? std::vector<std::string>{"b", "i", "k"} : std::vector<std::string>{"i", "k"});
    fa.split("i", 16, "fa", "i");
    fa.unroll("fa");
    s.tensorize(af, fa.pos("i"), p.tf32 ? "ldmatrix_a8" : "ldmatrix_a");
    // B's fragments: along n in tiles of `width` (an intrinsic's columns), from a [n][k] tile
    // (ldmatrix without .trans into B16x2T, or into tf32's B8T) or a k-major one
    // (ldmatrix .trans, or tf32's plain loads into B8).
    const int64_t width = p.tf32 ? 8 : 16;
    const char* load_b = p.b_nk ? (p.tf32       ? "ldmatrix_b8t"
                                   : p.b_kmajor ? "ldmatrix_bt_trans_x4"
                                                : "ldmatrix_bt_x4")
                                : (p.tf32 ? "load_b8" : "ldmatrix_b_trans_x4");
    std::vector<std::string> b_dims =
        p.b_nk ? std::vector<std::string>{"j", "k"} : std::vector<std::string>{"k", "j"};
    if (b_batched) b_dims.insert(b_dims.begin(), "b");
    LoopNest fb(s, bf, b_dims);
    fb.split("j", width, "fb", "j");
    if (!p.b_nk) {
        order = {"fb", "k", "j"};
        if (b_batched) order.insert(order.begin(), "b");
        fb.reorder(order);
    }
    fb.unroll("fb");
    s.tensorize(bf, fb.pos(p.b_nk ? "j" : "k"), load_b);
    // The shared tiles at the k tile loop: swizzled, copied by cp.async `stages` deep.
    // The elements a copy moves per access: 8 (16 bytes) from a padded copy.
    const int64_t bytes = p.tf32 ? 4 : 2;
    // (A k-major B tile copies along n: its first axis.)
    auto vector = [&](const Operation& tile, bool padded, bool kmajor) {
        const std::vector<Expr> shape = op_output(tile, 0).shape();
        return padded ? 8
                      : row_vector(as_const_int(kmajor ? shape.front() : shape.back()).value_or(1),
                                   bytes);
    };
    const int64_t a_vector = vector(p.a_shared, p.a_padded, false),
                  b_vector = vector(p.b_shared, p.b_padded, p.b_kmajor);
    for (const Operation& tile : {p.a_shared, p.b_shared}) {
        const int st = s.stage_of(tile);
        s.compute_at(st, acc, f.pos("ko"));
        const bool kmajor = tile.same_as(p.b_shared) && p.b_kmajor;
        if (kmajor) s.storage_reorder(st, {1, 0});
        s.storage_swizzle(st);
        copy_by_block(s, st, tile.same_as(p.a_shared) ? a_vector : b_vector, t.bn / t.wn,
                      t.bm / t.wm, false, kmajor);
        // cp.async copies 4, 8 or 16 bytes: 2-byte copies are double-buffered through registers
        // instead.
        if (std::min(a_vector, b_vector) * bytes >= 4)
            s.pipeline(st, t.stages);
        else
            s.double_buffer(st);
    }
}

}  // namespace tessel::op::internal
