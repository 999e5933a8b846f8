// The search-space suite (WorkloadSuite.h): the operator library's workloads at two sizes.
#include "tessel/auto_schedule/space/WorkloadSuite.h"

#include "tessel/Error.h"

namespace tessel {

namespace {

using P = WorkloadParams;
using V = std::vector<int64_t>;

SuiteWorkload conv(const char* label, const char* workload, V nchwk, int64_t kernel,
                   int64_t stride) {
    int64_t pad = kernel / 2;
    return {label, workload,
            P{nchwk[0], nchwk[1], nchwk[2], nchwk[3], nchwk[4], V{kernel, kernel},
              V{stride, stride}, V{pad, pad, pad, pad}, V{1, 1}, int64_t(1), Float(32)}};
}

std::vector<SuiteWorkload> suite(bool full) {
    auto pick = [full](int64_t small, int64_t big) { return full ? big : small; };
    int64_t n = pick(64, 1024), c = pick(8, 64), hw = pick(10, 56), k = pick(16, 64);
    V rows = {pick(16, 4096), pick(40, 1024)}, few_rows = {pick(4, 64), pick(300, 16384)};
    return {
        {"matmul", "op.matmul", P{n, n, n, int64_t(0), int64_t(0), Float(32)}},
        {"matmul_odd", "op.matmul",
         P{pick(48, 1000), pick(35, 777), pick(27, 1536), int64_t(0), int64_t(0), Float(32)}},
        {"batch_matmul", "op.batch_matmul",
         P{pick(3, 16), pick(16, 128), pick(24, 128), pick(20, 64), Float(32)}},
        {"dense_bias_relu", "op.dense",
         P{pick(16, 128), pick(32, 3072), pick(24, 768), int64_t(1), std::string("relu"),
           Float(32)}},
        conv("conv2d_3x3", "op.conv2d_nchw", {1, c, hw, hw, k}, 3, 1),
        conv("conv2d_3x3_stride2", "op.conv2d_nchw", {1, c, hw, hw, k}, 3, 2),
        conv("conv2d_nhwc", "op.conv2d_nhwc", {1, c, hw, hw, k}, 3, 1),
        conv("conv2d_1x1", "op.conv2d_nchw", {1, c, hw, hw, k}, 1, 1),
        {"depthwise_conv2d", "op.depthwise_conv2d_nchw",
         P{int64_t(1), c, hw, hw, int64_t(1), V{3, 3}, V{1, 1}, V{1, 1, 1, 1}, V{1, 1}, Float(32)}},
        {"max_pool", "op.pool2d",
         P{int64_t(1), c, hw, hw, std::string("max"), V{3, 3}, V{2, 2}, V{1, 1, 1, 1}, int64_t(1),
           Float(32)}},
        {"global_avg_pool", "op.global_pool2d",
         P{int64_t(1), pick(16, 2048), pick(7, 7), pick(7, 7), std::string("avg"), Float(32)}},
        {"softmax", "op.softmax", P{rows, int64_t(1), Float(32)}},
        {"layer_norm", "op.layer_norm", P{rows, Float(32)}},
        {"row_sum", "op.sum", P{few_rows, V{1}, int64_t(0), Float(32)}},
        {"argmax", "op.argmax", P{few_rows, V{1}, int64_t(0), Float(32)}},
        {"transpose", "op.transpose",
         P{V{pick(6, 64), pick(10, 128), pick(12, 256)}, V{2, 0, 1}, Float(32)}},
        {"elementwise_broadcast", "elementwise_broadcast",
         P{pick(24, 2048), pick(40, 2048), Float(32)}},
    };
}

}  // namespace

std::vector<SuiteWorkload> search_suite(const std::string& size) {
    if (size != "small" && size != "full")
        TESSEL_THROW(DSLError) << "search_suite: unknown size '" << size
                               << "' (one of: small, full)";
    return suite(size == "full");
}

}  // namespace tessel
