// The tiles of the GPU default schedule's direct convolution (op/DefaultScheduleGpu.cpp, rule 3;
// docs/operators.md "GPU default schedules"): a block computes kb output channels x ph x pw
// output points of one image, its threads a tk x th x tw grid, each thread pk x pp x pq outputs;
// the input's halo tile and the weight's tile are staged in shared memory bk input channels at a
// time. The sizes come from a small model of the GPU (issue slots, latency hiding, the L2's
// bandwidth, one or more waves over the SMs), evaluated over a fixed list of candidates, so a
// layer of 7 x 7 points and 2,048 channels gets many small blocks and a 56 x 56 layer at batch 8
// large ones.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessel/Target.h"

namespace tessel::op::internal {

/// A convolution as the tile chooser sees it (NCHW and NHWC alike).
struct ConvDims {
    int64_t batch = 1, channels = 1, height = 1, width = 1;  ///< the output's extents
    int64_t in_channels = 1, kh = 1, kw = 1;                 ///< the reduction's extents
    int64_t stride_h = 1, stride_w = 1;                      ///< input points per output point
    bool channels_last = false;                              ///< NHWC (else NCHW)
};

/// One candidate: per axis (channels, height, width) the block's extent and threads.
struct ConvTiles {
    int64_t kb = 1, tk = 1, ph = 1, th = 1, pw = 1, tw = 1;
    int64_t bk = 8;              ///< input channels a shared-memory step
    bool double_buffer = false;  ///< two copies of each shared tile
    double cycles = 0;           ///< the model's estimate (SM clock cycles)
    int64_t threads() const { return tk * th * tw; }
    int64_t per_thread() const { return kb / tk * (ph / th) * (pw / tw); }
    int64_t blocks(const ConvDims& d) const;
    int64_t shared_bytes(const ConvDims& d) const;
};

/// The model's estimate of `t` on `target` for `d`, in SM clock cycles (0 when the tiles break
/// a limit: threads, shared memory, registers).
double conv_tile_cycles(const ConvDims& d, const ConvTiles& t, const Target& target);

/// Every candidate within the limits, the model's fastest first.
std::vector<ConvTiles> conv_tile_candidates(const ConvDims& d, const Target& target);

/// The candidate the model prefers, or nothing when none fits (a convolution too small to tile).
std::optional<ConvTiles> choose_conv_tiles(const ConvDims& d, const Target& target);

/// Makes choose_conv_tiles take the candidate of rank `rank` in the model's order (the last when
/// there are fewer), on the calling thread, until called with nullopt; returns the rank forced
/// before. For the sweep of benchmarks/experiments/conv_tiles_cuda.py, not for users.
std::optional<size_t> force_conv_candidate(std::optional<size_t> rank);

}  // namespace tessel::op::internal
