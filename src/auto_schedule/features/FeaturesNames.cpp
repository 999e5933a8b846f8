// The names of the feature columns (auto_schedule/features/Features.h), in column order;
// docs/tuning.md
// ("Features") defines each one.
#include <algorithm>

#include "FeaturesInternal.h"

namespace tessel {

namespace {

std::vector<std::string> make_names() {
    std::vector<std::string> n = {
        "float_mad",     "float_addsub",    "float_mul",        "float_divmod",
        "float_cmp",     "float_math_func", "float_other_func", "int_mad",
        "int_addsub",    "int_mul",         "int_divmod",       "int_cmp",
        "int_math_func", "int_other_func",  "bool_op",          "select_op"};
    for (const char* a : {"vec", "unroll", "parallel"}) {
        std::string p = a;
        for (const char* s : {"_num", "_prod", "_len", "_pos.none", "_pos.inner_spatial",
                              "_pos.middle_spatial", "_pos.outer_spatial", "_pos.inner_reduce",
                              "_pos.middle_reduce", "_pos.outer_reduce", "_pos.mixed"})
            n.push_back(p + s);
    }
    for (const char* s : {"is_gpu", "blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len",
                          "threadIdx_x_len", "threadIdx_y_len", "threadIdx_z_len", "vthread_len"})
        n.push_back(s);
    for (int b = 0; b < kFeatureBuffers; ++b) {
        std::string p = "B" + std::to_string(b) + ".";
        for (const char* s :
             {"acc_type.read", "acc_type.write", "acc_type.read_write", "bytes", "unique_bytes",
              "lines", "unique_lines", "reuse_type.loop_multiple_read",
              "reuse_type.serial_multiple_read_write", "reuse_type.no_reuse", "reuse_dis_iter",
              "reuse_dis_bytes", "reuse_ct", "bytes_d_reuse_ct", "unique_bytes_d_reuse_ct",
              "lines_d_reuse_ct", "unique_lines_d_reuse_ct", "stride"})
            n.push_back(p + s);
    }
    for (int i = 0; i < kIntensityCurvePoints; ++i)
        n.push_back("arith_intensity_curve_" + std::to_string(i));
    for (const char* s : {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod",
                          "outer_prod", "num_loops", "auto_unroll_max_step"})
        n.push_back(s);
    TESSEL_CHECK(n.size() == size_t(kNumFeatures)) << n.size() << " feature names";
    return n;
}

}  // namespace

const std::vector<std::string>& feature_names() {
    static const std::vector<std::string> names = make_names();
    return names;
}

int FeatureMatrix::column(const std::string& name) {
    const std::vector<std::string>& names = feature_names();
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
        TESSEL_THROW(RuntimeError) << "features: no feature named '" << name
                                   << "' (feature_names() lists the " << kNumFeatures << ")";
    return static_cast<int>(it - names.begin());
}

}  // namespace tessel
