// Network presets (op/Networks.h): the distinct layers of ResNet-50 and of a BERT-base encoder
// layer as operator-library workloads with their counts.
#include "tessel/op/Networks.h"

#include <algorithm>

#include "tessel/Error.h"

namespace tessel::op {

namespace {

using P = WorkloadParams;
using V = std::vector<int64_t>;

// A batch-1 NCHW float32 conv2d of ResNet-50: C → K channels on an H x H input.
PresetLayer conv(int64_t c, int64_t h, int64_t k, int64_t kernel, int64_t stride, int count) {
    const int64_t pad = kernel / 2;
    return {"op.conv2d_nchw",
            P{int64_t(1), c, h, h, k, V{kernel, kernel}, V{stride, stride}, V{pad, pad, pad, pad},
              V{1, 1}, int64_t(1), Float(32)},
            count,
            {"w"}};
}

// torchvision's ResNet-50 (v1.5: the stride of a bottleneck is in its 3x3 conv).
std::vector<PresetLayer> resnet50() {
    return {
        conv(3, 224, 64, 7, 2, 1),
        {"op.pool2d",
         P{int64_t(1), int64_t(64), int64_t(112), int64_t(112), std::string("max"), V{3, 3},
           V{2, 2}, V{1, 1, 1, 1}, int64_t(1), Float(32)},
         1},
        // 56 x 56: 3 bottlenecks (64, 256); the projection 1x1 64 → 256 is the expand's shape
        conv(64, 56, 64, 1, 1, 1),
        conv(64, 56, 64, 3, 1, 3),
        conv(64, 56, 256, 1, 1, 4),
        conv(256, 56, 64, 1, 1, 2),
        // 28 x 28: 4 bottlenecks (128, 512)
        conv(256, 56, 128, 1, 1, 1),
        conv(128, 56, 128, 3, 2, 1),
        conv(128, 28, 512, 1, 1, 4),
        conv(256, 56, 512, 1, 2, 1),
        conv(512, 28, 128, 1, 1, 3),
        conv(128, 28, 128, 3, 1, 3),
        // 14 x 14: 6 bottlenecks (256, 1024)
        conv(512, 28, 256, 1, 1, 1),
        conv(256, 28, 256, 3, 2, 1),
        conv(256, 14, 1024, 1, 1, 6),
        conv(512, 28, 1024, 1, 2, 1),
        conv(1024, 14, 256, 1, 1, 5),
        conv(256, 14, 256, 3, 1, 5),
        // 7 x 7: 3 bottlenecks (512, 2048)
        conv(1024, 14, 512, 1, 1, 1),
        conv(512, 14, 512, 3, 2, 1),
        conv(512, 7, 2048, 1, 1, 3),
        conv(1024, 14, 2048, 1, 2, 1),
        conv(2048, 7, 512, 1, 1, 2),
        conv(512, 7, 512, 3, 1, 2),
        {"op.global_pool2d",
         P{int64_t(1), int64_t(2048), int64_t(7), int64_t(7), std::string("avg"), Float(32)}, 1},
        {"op.dense",
         P{int64_t(1), int64_t(1000), int64_t(2048), int64_t(1), std::string("none"), Float(32)},
         1,
         {"w"}},
    };
}

// One BERT-base encoder layer: batch 1, sequence 128, hidden 768, 12 heads of 64, FFN 3072.
std::vector<PresetLayer> bert_base_layer() {
    auto dense = [](int64_t n, int64_t k, const char* act, int count) {
        return PresetLayer{"op.dense",
                           P{int64_t(128), n, k, int64_t(1), std::string(act), Float(32)},
                           count,
                           {"w"}};
    };
    return {
        dense(768, 768, "none", 4),  // Q, K, V and the output projection
        {"op.batch_matmul", P{int64_t(12), int64_t(128), int64_t(128), int64_t(64), Float(32)}, 1},
        {"op.softmax", P{V{12, 128, 128}, int64_t(-1), Float(32)}, 1},
        {"op.batch_matmul", P{int64_t(12), int64_t(128), int64_t(64), int64_t(128), Float(32)}, 1},
        dense(3072, 768, "gelu", 1),
        dense(768, 3072, "none", 1),
        {"op.binary", P{V{128, 768}, V{128, 768}, std::string("add"), Float(32)}, 2},
        {"op.layer_norm", P{V{128, 768}, Float(32)}, 2},
    };
}

// The largest divisor of c up to `block`: an input's channel block (the RGB input: one of 3).
int64_t input_block(int64_t c, int64_t block) {
    int64_t d = std::min(c, block);
    while (c % d != 0) --d;
    return d;
}

// Whether an op.conv2d_nchw layer's parameters (N, C, H, W, K, kernel, stride, padding, dilation,
// groups, dtype) take Winograd's F(2 x 2, 3 x 3): a 3 x 3 window, stride, dilation and groups 1,
// float32 without another output dtype.
bool winograd_conv(const WorkloadParams& p) {
    using Pair = std::vector<int64_t>;
    const Pair one{1, 1};
    return p.size() == 11 && std::get<Pair>(p[5]) == Pair{3, 3} && std::get<Pair>(p[6]) == one &&
           std::get<Pair>(p[8]) == one && std::get<int64_t>(p[9]) == 1 &&
           std::holds_alternative<Type>(p[10]) && std::get<Type>(p[10]) == Float(32);
}

}  // namespace

int64_t activation_block(const std::string& layout) {
    if (layout == "NCHW") return 0;
    const std::string digits =
        layout.size() > 5 && layout.rfind("NCHW", 0) == 0 && layout.back() == 'c'
            ? layout.substr(4, layout.size() - 5)
            : "";
    const bool number = !digits.empty() && digits.size() <= 2 &&
                        digits.find_first_not_of("0123456789") == std::string::npos;
    const int64_t block = number ? std::stoll(digits) : 0;
    if (block < 2 || block > 64)
        TESSEL_THROW(DSLError) << "layout '" << layout
                               << "' is neither 'NCHW' nor 'NCHW<b>c' with a block b of 2 to 64 "
                                  "channels (e.g. 'NCHW16c', AVX-512's float32 lanes)";
    return block;
}

std::vector<PresetLayer> blocked_layers(std::vector<PresetLayer> layers, int64_t block,
                                        bool winograd) {
    if (block == 0) {
        if (winograd)
            for (PresetLayer& l : layers)
                if (l.workload == "op.conv2d_nchw" && winograd_conv(l.params))
                    l.workload = "op.conv2d_nchw_winograd";
        return layers;
    }
    for (PresetLayer& l : layers) {
        if (l.workload != "op.conv2d_nchw") continue;
        const int64_t c = std::get<int64_t>(l.params[1]), k = std::get<int64_t>(l.params[4]),
                      groups = std::get<int64_t>(l.params[9]);
        if (groups != 1 || k % block != 0) continue;
        const bool by_winograd = winograd && winograd_conv(l.params);
        // The geometry (N ... dilation), the blocks in place of groups, then the dtype(s).
        WorkloadParams params(l.params.begin(), l.params.begin() + 9);
        params.emplace_back(input_block(c, block));
        params.emplace_back(block);
        params.insert(params.end(), l.params.begin() + 10, l.params.end());
        l.workload = by_winograd ? "op.conv2d_nchwc_winograd" : "op.conv2d_nchwc";
        l.params = std::move(params);
    }
    return layers;
}

std::vector<std::string> network_preset_names() {
    return {"bert_base_layer", "resnet50"};
}

std::vector<PresetLayer> network_preset(const std::string& name) {
    if (name == "resnet50") return resnet50();
    if (name == "bert_base_layer") return bert_base_layer();
    TESSEL_THROW(DSLError) << "network_preset: parameter 'name' is '" << name
                           << "'; the presets are bert_base_layer, resnet50";
}

}  // namespace tessel::op
