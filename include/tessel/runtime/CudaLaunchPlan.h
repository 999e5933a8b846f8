// The launch plan of a CUDA module: what the host does to run one tessel kernel, kept as data.
//
// The CUDA backend splits a lowered function into device functions (one per kernel: a nest of
// blockIdx/threadIdx-bound loops) and this plan. Running the tessel kernel means: allocate the
// workspaces (global intermediate buffers between device functions), then launch every device
// function in order on one stream, each with the grid and block extents, the dynamic shared memory
// and the parameters listed here. No host code is generated; the runtime interprets the plan
// (src/runtime/cuda/), so a module serialises as cubin + plan and loads in any process.
//
// The payload of a CUDA module (format "cuda") is encode_cuda_payload()'s bytes: the plan of every
// tessel kernel in the module, the target architecture and the cubin. The runtime loads the cubin
// into a device's primary context lazily, at the first launch on that device, so a module builds,
// saves and loads on a machine without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessel {

/// An integer expression over a kernel's symbolic extents (KernelSignature::shape_vars() order),
/// in postfix form: launch extents, shared memory and workspace sizes that depend on shapes.
struct LaunchExpr {
    enum class Op : uint8_t { Const, ShapeVar, Add, Sub, Mul, FloorDiv, FloorMod, Min, Max };
    struct Term {
        Op op = Op::Const;
        int64_t value = 0;  ///< the constant (Const) or the shape variable's index (ShapeVar)
        bool operator==(const Term& o) const = default;
    };
    std::vector<Term> terms;  ///< postfix; empty means 0

    static LaunchExpr constant(int64_t v);
    static LaunchExpr shape_var(int index);
    /// True when the expression uses no shape variable.
    bool is_constant() const;
    /// Evaluates the expression; shape_vars may be null when is_constant(). FloorDiv and FloorMod
    /// by zero give 0 (ir/IR.h). Throws RuntimeError on a malformed expression.
    int64_t eval(const int64_t* shape_vars) const;
    /// "(n + 127) // 128", naming shape variables from `names` (or "$i" past its end).
    std::string str(const std::vector<std::string>& names = {}) const;
    bool operator==(const LaunchExpr& o) const = default;
};

/// A TMA tensor map (CUtensorMap, 128 bytes) a device function takes as a `__grid_constant__`
/// parameter: the global tensor a bulk tensor copy (cp.async.bulk.tensor) reads, described to the
/// driver's cuTensorMapEncodeTiled at launch. The runtime encodes it from the argument's address
/// and the call's shape values, and encodes it again only when one of them changes.
struct CudaTensorMap {
    int buffer = 0;     ///< the tensor: index into the tessel kernel's arguments, then workspaces
    std::string dtype;  ///< element type: "float16", "bfloat16", "float32", "int8", ...
    std::vector<LaunchExpr> dims;     ///< extents in elements, innermost (contiguous) first
    std::vector<LaunchExpr> strides;  ///< byte strides of dims 1.. (rank - 1 of them)
    std::vector<int64_t> box;         ///< the box a copy moves, in elements, innermost first
    int swizzle_bytes = 0;            ///< shared layout: 0 (none), 32, 64 or 128 (the rows' width)
    bool operator==(const CudaTensorMap& o) const = default;
};

/// One parameter of a device function, in declaration order.
struct CudaParam {
    enum class Kind : uint8_t {
        Buffer,  ///< a device pointer: `index` into the tessel kernel's arguments, then workspaces
        ShapeVar,   ///< an int64_t: `index` into the kernel's shape_vars
        TensorMap,  ///< a CUtensorMap: `index` into the launch's tensor_maps
    };
    Kind kind = Kind::Buffer;
    int index = 0;
    bool operator==(const CudaParam& o) const = default;
};

/// What ptxas reported for one device function (-1: unknown, e.g. a plan read from elsewhere).
struct CudaResources {
    int registers = -1;
    int64_t spill_store_bytes = -1;
    int64_t spill_load_bytes = -1;
    int64_t stack_bytes = -1;
    int64_t static_shared_bytes = -1;
    bool operator==(const CudaResources& o) const = default;
};

/// One launch of a device function.
struct CudaLaunch {
    std::string function;             ///< the __global__ function's name in the cubin
    std::string stage;                ///< the stage the kernel computes (its root), for messages
    std::array<LaunchExpr, 3> grid;   ///< blockIdx.x/y/z extents (1 where unbound)
    std::array<LaunchExpr, 3> block;  ///< threadIdx.x/y/z extents (1 where unbound)
    /// Bytes of dynamic shared memory (`extern __shared__`); 0 unless the kernel's shared
    /// allocations exceed the 48 KB a block gets statically. The runtime raises the function's
    /// limit to this and checks it against the device's opt-in maximum before the launch.
    LaunchExpr dynamic_shared_bytes;
    std::vector<CudaParam> params;
    std::vector<CudaTensorMap> tensor_maps;  ///< those the TensorMap params name
    CudaResources resources;                 ///< filled by the NVRTC compile from ptxas's report
    /// A programmatic dependent launch (sm_90 and later): the kernel's threads wait for the
    /// grid launched before it to complete (griddepcontrol.wait) before anything else, and that
    /// grid lets it start early (griddepcontrol.launch_dependents), so the runtime may launch it
    /// while the one before still runs: its blocks are scheduled and waiting when that one ends.
    /// Never set on a plan's first launch.
    bool dependent = false;
    bool operator==(const CudaLaunch& o) const = default;
};

/// A global intermediate buffer that lives for one call of the tessel kernel.
struct CudaWorkspace {
    std::string name;
    LaunchExpr bytes;
    /// Zero between calls (tile_arrive's counters, ir/IR.h): one buffer per stream, zeroed when
    /// first used there and kept; the kernels leave it zero. Otherwise a fresh allocation a call.
    bool zeroed = false;
    bool operator==(const CudaWorkspace& o) const = default;
};

/// Everything the host does to run one tessel kernel (see the file comment).
struct CudaLaunchPlan {
    std::vector<CudaWorkspace> workspaces;
    std::vector<CudaLaunch> launches;  ///< in order, on one stream
    bool operator==(const CudaLaunchPlan& o) const = default;
};

/// The payload of a CUDA module (format "cuda").
struct CudaPayload {
    std::string arch;                             ///< "sm_90"
    std::map<std::string, CudaLaunchPlan> plans;  ///< by tessel kernel name
    std::vector<uint8_t> cubin;
    bool operator==(const CudaPayload& o) const = default;
};

/// The payload's bytes: "TSLCUDA1", a little-endian uint64 length and that many bytes of JSON
/// (arch and plans), then the cubin to the end.
std::vector<uint8_t> encode_cuda_payload(const CudaPayload& payload);
/// Reads encode_cuda_payload()'s bytes; throws RuntimeError on corrupt or truncated bytes, and on
/// a malformed tensor map (element type, rank 1..5, strides and box counts, box entries 1..256,
/// swizzle 0/32/64/128) or a TensorMap parameter naming no map of its launch. A launch without
/// "tensor_maps" (a payload written before them) reads as having none.
CudaPayload decode_cuda_payload(const std::vector<uint8_t>& bytes);

/// What the driver reports of one __global__ function of a cubin loaded on a device
/// (cuFuncGetAttribute): the source of registers and spills that needs no ptxas report.
struct CudaFunctionAttributes {
    std::string function;
    int registers = 0;                ///< CU_FUNC_ATTRIBUTE_NUM_REGS, per thread
    int64_t local_bytes = 0;          ///< CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: per thread, the stack
                                      ///< frame and the register spills together
    int64_t static_shared_bytes = 0;  ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
};

/// Loads `payload`'s cubin on CUDA device `id` and reads the attributes of every function its
/// plans launch, in name order. RuntimeError when CUDA is unavailable, there is no such device,
/// or the cubin does not load there (a cubin for another architecture).
std::vector<CudaFunctionAttributes> cuda_function_attributes(const CudaPayload& payload, int id);

}  // namespace tessel
