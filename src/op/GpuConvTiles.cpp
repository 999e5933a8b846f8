// The convolution tile chooser (op/GpuConvTiles.h). Why a model and not one tile: ResNet-50's
// layers alone run from 112 x 112 points and 64 channels to 7 x 7 points and 2,048 channels, and
// a batch multiplies the points. One 64-channel x 8 x 8 tile gave a 7 x 7 layer at batch 1 eight
// blocks for 132 SMs; the tuned schedules of those layers (tuning_logs/cuda-sm_90) use 50 to 250
// threads a block, 2 to 8 outputs a thread and enough blocks for one or two waves. The model
// below prefers exactly that where the work is small and larger per-thread tiles (fewer shared
// loads per multiply-add) where the blocks fill the GPU anyway.
#include "op/GpuConvTiles.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "op/OpUtil.h"

namespace tessel::op::internal {

namespace {

constexpr double kIssuePerClock = 4;         // warp instructions an SM issues a clock
constexpr double kSharedLoadsPerClock = 1;   // a warp's 32-bit loads from shared memory
constexpr double kL2BytesPerClock = 3000;    // L2 to the SMs, all together (~5 TB/s at 1.7 GHz)
constexpr double kLatencyWork = 24;          // resident warps x independent FMAs that hide latency
constexpr double kDramBytesPerClock = 2400;  // HBM3e, ~4.2 TB/s at 1.75 GHz
constexpr int64_t kMaxWarpsPerSm = 64;
constexpr int64_t kMaxBlocksPerSm = 32;
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kSharedPerSm = 228 * 1024;
constexpr int64_t kBaseRegisters = 28;  // addresses, loop counters, the copy's temporaries
constexpr int64_t kMaxPerThread = 32;

int64_t next_pow2(int64_t v) {
    int64_t p = 1;
    while (p < v) p *= 2;
    return p;
}

int64_t step_channels(const ConvDims& d, const ConvTiles& t) {
    return std::min(t.bk, d.in_channels);
}

// Floats of one shared-memory step: the input's halo tile and the weight's tile.
int64_t step_floats(const ConvDims& d, const ConvTiles& t) {
    const int64_t bk = step_channels(d, t);
    const int64_t in_h = (t.ph - 1) * d.stride_h + d.kh, in_w = (t.pw - 1) * d.stride_w + d.kw;
    return bk * in_h * in_w + t.kb * bk * d.kh * d.kw;
}

// How one warp's accesses spread: the worst shared-memory bank's distinct words for a weight and
// an input load (1: conflict-free or a broadcast), and the 32-byte sectors of an output store.
struct WarpAccess {
    double weight_conflicts = 1, input_conflicts = 1, store_sectors = 4;
};

// Distinct words in the fullest of the 32 banks.
double bank_conflicts(std::vector<int64_t> words) {
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    int64_t per_bank[32] = {};
    for (int64_t a : words) ++per_bank[a % 32];
    return double(*std::max_element(per_bank, per_bank + 32));
}

// The warp's first 32 threads: threadIdx.x is the innermost axis with more than one thread (the
// width, or the channels when channels_last), as the default schedule binds them; each thread
// at the first of its points, the first reduction point.
WarpAccess warp_access(const ConvDims& d, const ConvTiles& t) {
    const int64_t pk = t.kb / t.tk, pp = t.ph / t.th, pq = t.pw / t.tw;
    const int64_t bk = step_channels(d, t);
    const int64_t in_w = (t.pw - 1) * d.stride_w + d.kw;
    // Thread axes innermost first: (extent, which) with 0 = channels, 1 = height, 2 = width.
    std::vector<std::pair<int64_t, int>> axes;
    if (d.channels_last)
        axes = {{t.tk, 0}, {t.tw, 2}, {t.th, 1}};
    else
        axes = {{t.tw, 2}, {t.th, 1}, {t.tk, 0}};
    std::vector<int64_t> weight, input, sectors;
    for (int64_t id = 0; id < std::min<int64_t>(32, t.threads()); ++id) {
        int64_t rest = id, at[3] = {0, 0, 0};
        for (auto [extent, which] : axes) {
            if (extent <= 1) continue;
            at[which] = rest % extent;
            rest /= extent;
        }
        const int64_t k = at[0] * pk, h = at[1] * pp, x = at[2] * pq;
        const int64_t ih = h * d.stride_h, iw = x * d.stride_w;
        if (d.channels_last) {
            weight.push_back(k);                     // [kh][kw][bk][kb]
            input.push_back((ih * in_w + iw) * bk);  // [in_h][in_w][bk]
            sectors.push_back(((h * d.width + x) * d.channels + k) * 4 / 32);
        } else {
            weight.push_back(k * bk * d.kh * d.kw);  // [kb][bk][kh][kw]
            input.push_back(ih * in_w + iw);         // [bk][in_h][in_w]
            sectors.push_back(((k * d.height + h) * d.width + x) * 4 / 32);
        }
    }
    WarpAccess w;
    w.weight_conflicts = bank_conflicts(weight);
    w.input_conflicts = bank_conflicts(input);
    std::sort(sectors.begin(), sectors.end());
    w.store_sectors = double(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
    return w;
}

}  // namespace

int64_t ConvTiles::blocks(const ConvDims& d) const {
    return d.batch * ceil_div(d.channels, kb) * ceil_div(d.height, ph) * ceil_div(d.width, pw);
}

int64_t ConvTiles::shared_bytes(const ConvDims& d) const {
    return step_floats(d, *this) * 4 * (double_buffer ? 2 : 1);
}

double conv_tile_cycles(const ConvDims& d, const ConvTiles& t, const Target& target) {
    const int64_t threads = t.threads(), o = t.per_thread();
    const int64_t pk = t.kb / t.tk, pp = t.ph / t.th, pq = t.pw / t.tw;
    const int64_t registers = kBaseRegisters + o + pk + pp * pq;
    const int64_t shared = t.shared_bytes(d);
    if (threads < 32 || threads > target.max_threads_per_block() || o > kMaxPerThread ||
        shared > target.max_shared_memory_per_block() || threads * registers > kRegistersPerSm)
        return 0;
    const int64_t warps = ceil_div(threads, 32);
    const int64_t steps = ceil_div(d.in_channels, t.bk);
    const double copied = double(steps) * double(step_floats(d, t));
    const WarpAccess w = warp_access(d, t);
    // Per warp and reduction point: o multiply-adds (4 warp instructions a clock) and the shared
    // loads, each as many clocks as its worst bank's distinct words; per shared-memory step the
    // copy (a load, a store and address arithmetic per element) and two barriers.
    const double point = double(o) / kIssuePerClock +
                         (double(pk) * w.weight_conflicts + double(pp * pq) * w.input_conflicts) /
                             kSharedLoadsPerClock;
    const double per_warp = double(d.in_channels * d.kh * d.kw) * point +
                            3 * copied / double(threads) / kIssuePerClock + 40 * double(steps);
    const int64_t resident =
        std::max<int64_t>(1, std::min({kMaxBlocksPerSm, kMaxWarpsPerSm / warps,
                                       kSharedPerSm / std::max<int64_t>(shared, 1),
                                       kRegistersPerSm / (threads * registers)}));
    const int64_t blocks = t.blocks(d);
    const int64_t sms = std::max(1, target.sm_count());
    const int64_t per_sm = ceil_div(blocks, sms);
    const double hidden = std::min(
        1.0, double(std::min(per_sm, resident) * warps * std::min<int64_t>(o, 4)) / kLatencyWork);
    const double compute = double(per_sm) * double(warps) * per_warp / hidden;
    const double l2 = double(blocks) * copied * 4 / kL2BytesPerClock;
    // The output's stores: 32-byte sectors a warp's store touches, against the 4 of a dense one.
    const double output = double(d.batch * d.channels * d.height * d.width) * 4;
    const double dram = output * w.store_sectors / 4 / kDramBytesPerClock;
    return std::max({compute, l2, dram});
}

std::vector<ConvTiles> conv_tile_candidates(const ConvDims& d, const Target& target) {
    static const int64_t kPer[] = {1, 2, 4, 8};
    static const int64_t kThreadsK[] = {1, 2, 4, 8, 16, 32};
    static const int64_t kThreadsSpatial[] = {1, 2, 4, 7, 8, 14, 16, 28, 32};
    const int64_t max_kb = next_pow2(d.channels);
    std::vector<ConvTiles> out;
    ConvTiles t;
    t.bk = d.kh * d.kw == 1 ? 16 : 8;
    for (int64_t pk : kPer)
        for (int64_t tk : kThreadsK)
            for (int64_t pp : kPer)
                for (int64_t th : kThreadsSpatial)
                    for (int64_t pq : kPer)
                        for (int64_t tw : kThreadsSpatial) {
                            t.kb = pk * tk, t.tk = tk, t.ph = pp * th, t.th = th;
                            t.pw = pq * tw, t.tw = tw;
                            if (t.kb > max_kb || t.ph > d.height || t.pw > d.width) continue;
                            // Two copies of the weight tile while they stay small.
                            t.double_buffer =
                                t.kb * std::min(t.bk, d.in_channels) * d.kh * d.kw * 4 <= 12 * 1024;
                            t.cycles = conv_tile_cycles(d, t, target);
                            if (t.cycles > 0) out.push_back(t);
                        }
    // Near-ties (within 0.1 %): the larger per-thread tile first.
    std::stable_sort(out.begin(), out.end(), [](const ConvTiles& a, const ConvTiles& b) {
        if (std::abs(a.cycles - b.cycles) > 0.001 * std::min(a.cycles, b.cycles))
            return a.cycles < b.cycles;
        return a.per_thread() > b.per_thread();
    });
    return out;
}

namespace {
thread_local std::optional<size_t> forced_conv_rank;
}  // namespace

std::optional<ConvTiles> choose_conv_tiles(const ConvDims& d, const Target& target) {
    std::vector<ConvTiles> all = conv_tile_candidates(d, target);
    if (all.empty()) return std::nullopt;
    return all[std::min(forced_conv_rank.value_or(0), all.size() - 1)];
}

std::optional<size_t> force_conv_candidate(std::optional<size_t> rank) {
    std::swap(rank, forced_conv_rank);
    return rank;
}

}  // namespace tessel::op::internal
