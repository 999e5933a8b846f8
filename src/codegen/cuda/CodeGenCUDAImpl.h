// The CUDA C printer behind codegen_cuda(): one device function per kernel of a HostDeviceSplit.
// Expressions are printed as C expressions, vector expressions one lane at a time (every vector
// operation of the IR is lane-wise), except dense float32/int32 accesses of 2 or 4 lanes at a
// proven multiple of the lane count, which become float2/float4 (int, uint) accesses. Values of
// float16/bfloat16 type are C floats holding the rounded value; memory holds their 16 bits.
// Expression printing is in CodeGenCUDAExpr.cpp, statements in CodeGenCUDAStmt.cpp, cross-thread
// reductions in CodeGenCUDAAllreduce.cpp, the helper functions every source starts with in
// CudaPrelude.cpp.
#pragma once

#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/cuda/CodeGenCUDA.h"
#include "codegen/cuda/CollectKernels.h"
#include "tessel/arith/Interval.h"
#include "tessel/arith/Modular.h"
#include "tessel/ir/Fragment.h"

namespace tessel::internal {

/// The helper functions (fp16/bf16 conversions, guarded integer division, shuffles ...) that
/// every generated source starts with.
const char* cuda_prelude();
/// The tensor-core helpers (tsl_mma_*, tsl_ldmatrix_*), for sources that use them.
const char* cuda_tensor_core_prelude();
/// The tensor map parameter type and the mbarrier wait, for sources with TMA copies.
const char* cuda_tma_prelude();

/// Prints the device functions of one lowered function (see the file comment).
class CodeGenCUDA {
public:
    CodeGenCUDA(const LoweredFunc& f, const std::vector<Var>& shape_vars,
                const HostDeviceSplit& split, const CudaCodegenOptions& options);
    /// Prints kernel `k` into `os` and returns its launch.
    /// Kernel `index` of `count` (the launch order).
    CudaLaunch emit_kernel(const DeviceKernel& k, size_t index, size_t count, std::ostream& os);
    /// Per argument of the function, the alignment the code assumes (see CudaCode).
    const std::vector<int64_t>& arg_alignment() const { return arg_alignment_; }

private:
    // A buffer the kernel accesses.
    struct BufferInfo {
        Type elem;       // element type
        int param = -1;  // CudaParam index (args, then workspaces); -1: allocated inside
        bool read = false;
        bool written = false;
        bool aligned16 = false;  // may be accessed as float4 (param: alignment recorded)
    };
    // A tensor map parameter: the tensor a tma_load reads (a tma_store writes), with its box and
    // swizzle.
    struct TmaMap {
        const Variable* src = nullptr;
        std::vector<int64_t> box;
        int swizzle = 0;
        std::string name;  ///< the parameter's
    };
    // A __shared__ array, hoisted to function scope.
    struct SharedArray {
        std::string c_type, name;
        int64_t count = 0, elem_bytes = 0;
        int64_t align = 16;  ///< bytes; 1024 for wgmma's swizzled operands (address-based)
    };

    // Kernel setup (CodeGenCUDA.cpp).
    void reset(const DeviceKernel& k);
    void collect_buffers(const Stmt& body);
    std::vector<CudaParam> params_of(const Stmt& body);
    void check_free_variables(const Stmt& body);
    std::string signature(const DeviceKernel& k, const std::vector<CudaParam>& params);
    std::string shared_declarations(CudaLaunch* launch);
    std::string name_of(const Variable* v);
    std::string fresh(const std::string& hint);
    void line(const std::string& s);
    void flush_pre();

    // Types (CodeGenCUDAExpr.cpp).
    static std::string value_type(Type t);
    static std::string memory_type(Type t);
    static std::string to_memory(const std::string& v, Type t);
    static std::string from_memory(const std::string& v, Type t);
    static std::string zero_of(Type t);

    // Expressions (CodeGenCUDAExpr.cpp).
    std::string expr(const Expr& e, int lane = 0);
    std::string index_expr(const Expr& e, int lane = 0);
    std::string constant(const Expr& e);
    std::string variable(const Variable* v, int lane);
    std::string cast(Type to, const Expr& value, int lane);
    std::string binary(IRNodeType op, const Expr& a, const Expr& b, Type t, int lane);
    std::string float_binary(IRNodeType op, const std::string& a, const std::string& b, Type t);
    std::string int_binary(IRNodeType op, const Expr& a, const Expr& b, Type t, int lane);
    std::string int_division(IRNodeType op, const Expr& a, const Expr& b, Type t, int lane);
    std::string compare(IRNodeType op, const Expr& a, const Expr& b, int lane);
    std::string call(const Call* op, int lane);
    std::string float_math(const Call* op, int lane);
    std::string let(const Let* op, int lane);
    std::string load(const Load* op, int lane);
    bool dense_vector_access(const Var& buffer, const Expr& index, const Expr& predicate, Type t);
    bool dense_bits(const Var& buffer, const Expr& index, const Expr& predicate, Type t);
    /// Whether an integer index is a proven multiple of n (under the loops' modular facts).
    bool multiple_of(const Expr& index, int64_t n) const;
    /// Whether a buffer's start is aligned to `bytes` (an argument records the requirement).
    bool aligned_to(const Variable* buffer, int64_t bytes);
    std::string round_to(Type t, const std::string& v);

    // Statements (CodeGenCUDAStmt.cpp).
    void stmt(const Stmt& s);
    void let_stmt(const LetStmt* op);
    void for_loop(const For* op);
    void thread_loop(const For* op);
    void store(const Store* op);
    void allocate(const Allocate* op);
    void if_then_else(const IfThenElse* op);
    void evaluate(const Evaluate* op);
    void cp_async(const Call* op);
    void tile_arrive(const Call* op);
    // mbarriers and TMA copies (CodeGenCUDATma.cpp).
    void collect_tma_maps(const Stmt& body);
    CudaTensorMap tensor_map(const TmaMap& m) const;
    std::string shared_address(const Expr& buffer, const Expr& index);
    void tma(const Call* op);
    void tma_load(const Call* op);
    void tma_store(const Call* op);
    /// The tensor map of a tma_load's or tma_store's box (its swizzle argument at `at`).
    TmaMap tma_map_of(const Call* op, size_t at) const;
    const TmaMap& find_tma_map(const Call* op, size_t at) const;
    std::pair<std::string, std::string> tma_coords(const Call* op, size_t at, int first);
    void push_bounds(const Var& v, const Expr& min, const Expr& extent);

    // Cross-thread reductions (CodeGenCUDAAllreduce.cpp).
    void allreduce(const Call* op);
    void combine(const Call* op, const std::vector<std::string>& out,
                 const std::vector<std::string>& a, const std::vector<std::string>& b);
    void warp_allreduce(const Call* op, const std::vector<std::string>& acc, int group, int total);
    void shared_allreduce(const Call* op, const std::vector<std::string>& acc,
                          const std::vector<int>& axes);
    std::string linear_thread_index() const;

    // Tensor cores (CodeGenCUDATensorCore.cpp).
    struct TileExpr {
        std::string buf, origin, stride;
        Type elem;
        Expr origin_ir, stride_ir;  ///< unswizzled (the swizzle's first argument)
        std::string swizzle;        ///< ", vector, span, phases" of a swizzled buffer, or empty
        bool wide_swizzle = false;  ///< its index type is 64-bit
        /// " + c" when the origin is swizzle(x) + c: `origin` is then x, the lanes' addresses
        /// are swizzle(x + row * stride + col) + c (c a whole number of phase cycles).
        std::string swizzle_add;
    };
    TileExpr tile(const Call* op, size_t a);
    /// The element index of a tile's element at unswizzled flat `offset` (a C expression).
    static std::string tile_address(const TileExpr& t, const std::string& offset);
    std::string fragment_base(const TileExpr& t, FragmentKind k);
    bool paired_store(const Call* op, FragmentKind k, const TileExpr& d);
    bool global_tile(const Expr& operand) const;
    void tensor_core(const Call* op);
    void mma_sync(const Call* op);
    void ldmatrix(const Call* op);
    void wgmma(const Call* op);
    /// A wgmma operand's start address in the warp group's terms: the tile origin of warp 4g of
    /// the group (checked against the origin each warp names), and the shared array it is in.
    Expr wgmma_group_origin(const Call* op, const TileExpr& t, int64_t rows, bool a);
    /// Compiler barriers on every register of the wgmma accumulators seen so far.
    void wgmma_fence_accumulators();

    const LoweredFunc& f_;
    const std::vector<Var>& shape_vars_;
    const HostDeviceSplit& split_;
    CudaCodegenOptions options_;
    std::vector<int64_t> arg_alignment_;
    std::unordered_map<const Variable*, int> global_param_;  // data var → CudaParam buffer index
    std::vector<TmaMap> tma_maps_;                           // this kernel's tensor maps

    // Per kernel.
    const DeviceKernel* kernel_ = nullptr;
    std::ostringstream body_;
    int indent_ = 1;
    std::unordered_map<const Variable*, std::string> names_;
    std::unordered_set<std::string> used_names_;
    // Vector LetStmt vars: the C variable of each lane (fresh names: "x_l0" may name another).
    std::unordered_map<const Variable*, std::vector<std::string>> lane_names_;
    std::unordered_map<const Variable*, int> thread_axis_;  // threadIdx loop var → axis
    std::unordered_map<const Variable*, BufferInfo> buffers_;
    std::vector<SharedArray> shared_;
    std::unordered_map<const Variable*, int64_t> lane_count_;  // warp buffers: elements per lane
    std::vector<std::pair<std::string, int64_t>> wgmma_acc_;   // wgmma accumulators, per lane
    Scope bounds_;
    ModularScope modular_;
    int index_depth_ = 0;           // > 0 inside index arithmetic (no overflow: plain C operators)
    int lazy_depth_ = 0;            // > 0 where an expression may not be evaluated (no hoisting)
    std::vector<std::string> pre_;  // hoisted vector loads of the statement being printed
    std::unordered_map<const Load*, std::string> hoisted_;
    int allreduce_count_ = 0;
};

}  // namespace tessel::internal
