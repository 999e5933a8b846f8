// Network presets: the distinct layers of whole networks as operator-library workloads with their
// counts, for the tuning daemon (tune each once, weight it by its count).
//
//   for (const PresetLayer& l : network_preset("resnet50")) make_workload(l.workload, l.params);
//   auto blocked = blocked_layers(network_preset("resnet50"), activation_block("NCHW16c"));
#pragma once

#include <string>
#include <vector>

#include "tessel/te/Workload.h"

namespace tessel::op {

/// One distinct layer of a network.
struct PresetLayer {
    std::string workload;   ///< a registered workload name ("op.conv2d_nchw", ...)
    WorkloadParams params;  ///< its parameters
    int count = 1;          ///< how many times the network runs it
    /// The inputs that hold the network's weights (conv2d's and dense's `w`): constant in a
    /// deployed network, so a job may mark them (its "constant_weights", layout rewrite).
    std::vector<std::string> weights = {};
};

/// The names of the presets: "resnet50" (batch 1, 224 x 224, NCHW float32: its distinct conv2d,
/// pooling and dense layers) and "bert_base_layer" (one encoder layer, batch 1, sequence 128).
std::vector<std::string> network_preset_names();

/// The layers of preset `name`; DSLError naming `name` (and listing the presets) if unknown.
std::vector<PresetLayer> network_preset(const std::string& name);

/// The channel block of an activation layout: "NCHW" → 0, "NCHW<b>c" → b (2 ≤ b ≤ 64); DSLError
/// naming the layout otherwise.
int64_t activation_block(const std::string& layout);

/// `layers` with their convolutions on blocked activations (docs/operators.md, "Blocked
/// activations"), as `from_onnx(..., layout="NCHW<block>c")` imports a model: each op.conv2d_nchw
/// of groups 1 whose output channels `block` divides becomes op.conv2d_nchwc, its input in blocks
/// of `block` channels (or of the largest divisor of its channels below that: the RGB input in
/// one block of 3). The other layers are unchanged. With `winograd` (a network whose weights are
/// constant: the filters are then transformed once), the 3 x 3 convolutions of stride, dilation
/// and groups 1 in float32 become op.conv2d_nchwc_winograd instead (op/Conv.h; ResNet-50's on a
/// 2-core Zen 4: 1.2-2.2 x faster than conv2d_nchwc); with block 0 (NCHW activations) they
/// become op.conv2d_nchw_winograd and nothing else changes.
std::vector<PresetLayer> blocked_layers(std::vector<PresetLayer> layers, int64_t block,
                                        bool winograd = false);

}  // namespace tessel::op
