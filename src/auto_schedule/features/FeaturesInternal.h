// Feature extraction's internals (auto_schedule/features/Features.h), in three phases:
//  1. collect_feature_program (FeaturesProgram.cpp): one walk of the IR records every loop, buffer,
//     allocation and store statement with the loops around it;
//  2. analyse_accesses (FeaturesAccess.cpp): per store and buffer, the elements touched at each
//     loop level, then per loop the bytes every store under it touches;
//  3. the columns: computation and annotations (FeaturesCompute.cpp), buffer accesses and the
//     intensity curve (FeaturesAccess.cpp), allocation and outer loops (Features.cpp).
// Column offsets are below; FeaturesNames.cpp names every column in the same order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/auto_schedule/features/Features.h"
#include "tessel/ir/IR.h"

namespace tessel::internal {

// The first column of each group (docs/tuning.md lists them).
constexpr int kColCompute = 0;        // 16 operation counts
constexpr int kColAnnotations = 16;   // vectorize, unroll, parallel: 11 each
constexpr int kAnnotationWidth = 11;  // num, prod, len, 8 positions
constexpr int kColGpu = 49;           // is_gpu, 6 launch extents, vthread
constexpr int kColBuffers = 57;       // 5 buffers × 18
constexpr int kBufferWidth = 18;      //
constexpr int kColIntensity = 147;    // 10 curve samples
constexpr int kColAllocation = 157;   // 4
constexpr int kColOuter = 161;        // outer_prod, num_loops, auto_unroll_max_step
static_assert(kColOuter + 3 == kNumFeatures);
static_assert(kColBuffers + kFeatureBuffers * kBufferWidth == kColIntensity);

/// One loop of the program.
struct FeatureLoop {
    const Variable* var = nullptr;
    int64_t min = 0;
    int64_t extent = 1;  ///< 1 when not a constant
    ForKind kind = ForKind::Serial;
    const std::string* thread_tag = nullptr;
    // Filled by analyse_accesses: bytes all stores under the loop touch over one whole run of it,
    // and for each buffer how many store statements under the loop access it.
    double touched_bytes = 0;
    std::vector<std::pair<int, int>> statements_per_buffer;
};

/// One buffer the program accesses or allocates (identified by its data variable).
struct FeatureBuffer {
    const Variable* data = nullptr;
    std::string name;
    int elem_bytes = 0;
    std::vector<int64_t> shape;  ///< -1 for a symbolic extent
    std::vector<int64_t>
        strides;             ///< in elements (compact row-major unless the buffer has its own)
    bool compact = true;     ///< strides are the compact row-major ones
    bool allocated = false;  ///< an Allocate in the function (not an argument)
    double alloc_elements = 0;
    double alloc_outer_prod = 1;  ///< iterations of the loops around the Allocate
    size_t alloc_depth = 0;       ///< how many loops are around the Allocate
};

/// One access of a buffer by a store statement (its own write, or a BufferLoad in it).
struct FeatureAccess {
    int buffer = -1;
    const std::vector<Expr>* indices = nullptr;
    bool write = false;
};

/// One BufferStore with its context.
struct FeatureStore {
    const BufferStore* store = nullptr;
    std::vector<int> loops;  ///< loop ids, outermost first
    std::vector<FeatureAccess> accesses;
    int64_t auto_unroll_max_step = 0;
    // Filled by analyse_accesses: per buffer of the store (first-access order), its accesses and
    // the elements touched while loops [k, n) run, k = 0..n (n = loops.size()).
    struct BufferUse {
        int buffer = -1;
        std::vector<int> accesses;
        std::vector<double> footprint;
    };
    std::vector<BufferUse> uses;
    double outer_prod = 1;
};

/// A variable bound by a Let or LetStmt (identity makes one list for the whole program right).
struct FeatureLet {
    const Variable* var = nullptr;
    const Expr* value = nullptr;
};

/// Everything extraction reads from the IR.
struct FeatureProgram {
    std::vector<FeatureLoop> loops;
    std::vector<FeatureBuffer> buffers;
    std::vector<FeatureStore> stores;
    std::vector<FeatureLet> lets;
};

/// Phase 1: walks `body` (the IR at the feature point).
FeatureProgram collect_feature_program(const Stmt& body);

/// Phase 2: fills the footprints of every store and the touched bytes of every loop.
void analyse_accesses(FeatureProgram* program);

/// An interval [lo, hi] of an index expression.
struct IndexSpan {
    double lo = 0, hi = 0;
};

/// Evaluates index expressions of one store over intervals of its loop variables: the loops in
/// `varying` take their whole range, the others their first value; other variables are let-bound
/// (their value is evaluated) or unknown (0). Exact for affine indices, an over-approximation
/// otherwise.
class IndexRange {
public:
    IndexRange(const FeatureProgram& program, const FeatureStore& store);
    /// Loops at positions [from, n) of the store's nest vary.
    void vary_from(size_t from);
    /// Only the loop at position `level` varies.
    void vary_only(size_t level);
    IndexSpan eval(const Expr& e) const;

private:
    const FeatureProgram& program_;
    std::vector<const Variable*> vars_;
    std::vector<IndexSpan> full_, now_;
};

/// Group 1 (columns [kColCompute, kColBuffers)): operation counts, annotations, GPU extents.
void compute_features(const FeatureProgram& program, const FeatureStore& store,
                      const FeatureContext& context, float* row);

/// Groups 2 and 3 (columns [kColBuffers, kColAllocation)): buffer accesses and the curve.
void access_features(const FeatureProgram& program, const FeatureStore& store,
                     const FeatureContext& context, float* row);

/// The floating-point operations one execution of the store's value performs (fma and
/// multiply-add count two): the numerator of the arithmetic intensity.
double float_ops_per_execution(const FeatureStore& store);

}  // namespace tessel::internal
