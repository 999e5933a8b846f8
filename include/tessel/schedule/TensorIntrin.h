// Tensor intrinsics: what `Schedule::tensorize` can replace a loop nest by (TVM's TensorIntrin).
//
// A tensor intrinsic is declared by a compute pattern, a small tensor expression over
// placeholders (a 16 x 8 x 16 matmul, a 16 x 16 copy), and by what it lowers to: an mma.sync, an
// ldmatrix, plain fragment loads or fragment stores (ir/IR.h, "Tensor-core intrinsics"; the
// fragment layouts in ir/Fragment.h). tensorize checks that the stage's loops from the
// tensorized one inwards are the pattern's axes (spatial then reduction, same extents) and that
// the stage's body is the pattern's body up to the tensors it reads; lowering then checks the
// reads' strides along those axes (unit strides where the pattern reads an axis, zero elsewhere)
// and the operands' storage scopes, and emits one intrinsic call per tile.
//
// The built-in intrinsics (tensor_intrins() lists them with their patterns):
//   mma_m16n8k16_f16, mma_m16n8k16_bf16   C[i, j] += float32(A[i, k]) * float32(B[k, j]),
//                                         16 x 8 x 16; A, B, C fragments ("warp" scope)
//   mma_m16n8k8_tf32                      C[i, j] += A[i, k] * B[k, j] (float32 rounded to
//                                         tf32), 16 x 8 x 8; the reads may be rounded already
//                                         (round_tf32(A[i, k]): op::matmul's allow_tf32)
//   mma_m16n8k8_tf32_bt                   the same with B read n x k, its fragments in a warp
//                                         buffer indexed [n][k] (B8T)
//   mma_m16n8k16_f16_bt, _bf16_bt         C[i, j] += float32(A[i, k]) * float32(B[j, k]): B read
//                                         n x k (dense's weight, attention's K), its fragments
//                                         in a warp buffer indexed [n][k] (B16T)
//   ldmatrix_a                            16 x 16 16-bit copy shared -> A16 fragment
//   ldmatrix_b_trans                      16 x 8 (k x n) copy of a k-major shared tile -> B16
//   ldmatrix_b                            B[k, n] = S[n, k], 16 x 8, an n-major shared tile -> B16
//   ldmatrix_b_trans_x4, ldmatrix_b_x4    the same for 16 x 16: two B16 fragments (.x4)
//   ldmatrix_bt, ldmatrix_bt_x4           D[n, k] = S[n, k], 8 x 16 or 16 x 16, an n-major
//                                         shared tile -> B16T fragments indexed [n][k]
//   load_a16, load_b16, load_a8, load_b8  plain loads from any memory into a fragment
//   load_b8t                              8 x 8 (n x k) plain loads into a B8T fragment
//   ldmatrix_a8, ldmatrix_b8t             the same 16 x 8 A8 and 8 x 8 B8T copies of a float32
//                                         shared tile by ldmatrix (.x4, .x2): a row of 4 floats
//                                         is a row of 8 16-bit elements, and each lane receives
//                                         the 32-bit element its fragment holds
//   store_c                               16 x 8 C fragment -> any memory (converted to the
//                                         destination's element type; at the destination's edge
//                                         only the elements inside it)
//   wgmma_m64n<N>k16_f16, _bf16           one warp's share of Hopper's warp-group mma (sm_90a):
//                                         C[i, j] += float32(A[i, k]) * float32(B[k, j]),
//                                         16 x N x 16 per warp, the 4 warps of a warp group
//                                         (threadIdx.y 4g .. 4g + 3) the 4 slices of 64 rows;
//                                         A and B swizzled shared tiles, C a "warp" buffer of C
//                                         fragments (store_c stores it); N in 8, 16, 32, 64, 96,
//                                         128, 192, 256
//   wgmma_m64n<N>k16_f16_bt, _bf16_bt     the same with B read n x k (k-major)
// and the CPU's dot-product instructions (dot_product, ir/IR.h), whose accumulators are any
// memory (a local buffer LLVM keeps in registers) and whose B operand's rows must be contiguous
// (a packed layout: B[..., j, k] with k the innermost axis, of extent `group`):
//   dot_16x4_u8s8, dot_8x4_u8s8           C[j] += int32(A[k]) * int32(B[j, k]), A uint8, B int8,
//                                         16 or 8 lanes x 4 (vpdpbusd: AVX512-VNNI, AVX-VNNI)
//   dot_16x2_bf16, dot_8x2_bf16           C[j] += float32(A[k]) * float32(B[j, k]), bfloat16,
//                                         16 or 8 lanes x 2 (vdpbf16ps: AVX512-BF16)
// They run on any CPU (without the instruction, as vector arithmetic with the same results);
// cpu_dot_intrin_for(target, ...) names the one a target has.
#pragma once

#include <string>
#include <vector>

#include "tessel/Target.h"
#include "tessel/ir/Fragment.h"
#include "tessel/ir/IR.h"

namespace tessel {

/// What a tensor intrinsic lowers to.
enum class TensorIntrinKind : uint8_t {
    Mma,            ///< mma_sync (its reduction's init: fragment_fill with the identity)
    LdMatrix,       ///< ldmatrix from shared memory
    LoadFragment,   ///< fragment_load
    StoreFragment,  ///< fragment_store
    CpuDot,         ///< dot_product (its reduction's init: the stage's own, plain stores)
    Wgmma,          ///< wgmma (sm_90a; its reduction's init: fragment_fill with the identity)
};

/// One declared tensor intrinsic.
struct TensorIntrin {
    std::string name;
    TensorIntrinKind kind = TensorIntrinKind::Mma;
    /// The compute pattern: a compute over placeholders; its axes (spatial, then reduction) are
    /// the loops tensorize replaces.
    Tensor pattern;
    /// The fragment loaded or stored; for Mma the kind of A (A16 or A8).
    FragmentKind fragment = FragmentKind::A16;
    /// LdMatrix: ldmatrix's .trans (for B16x2T fragments, indexed [n][k]: from a tile stored
    /// k-major, its rows the pattern's second axis); Mma: B is read [n][k] (its fragments are
    /// B16T); Wgmma: B is read [n][k] (k-major) instead of [k][n].
    bool trans = false;
    /// Copy patterns: the element types accepted besides the pattern's own; StoreFragment also
    /// accepts a conversion to the destination's type around the read.
    std::vector<Type> other_dtypes;
};

/// The built-in tensor intrinsics.
const std::vector<TensorIntrin>& tensor_intrins();
/// The intrinsic named `name`, or nullptr.
const TensorIntrin* find_tensor_intrin(const std::string& name);
/// The name of the wgmma intrinsic of width `n` for inputs of type `t` (float16 or bfloat16),
/// B read n x k when `b_nk`: "wgmma_m64n<n>k16_f16", "..._bf16_bt".
std::string wgmma_intrin_name(int64_t n, const Type& t, bool b_nk);
/// "mma_m16n8k16_f16, ...": the names, for messages.
std::string tensor_intrin_names();

/// The CPU dot-product intrinsic for products of `a` x `b` accumulated in `acc` that `target`
/// runs as one instruction, the widest first ("dot_16x4_u8s8" on AVX512-VNNI), or nullptr when
/// it has none (another CPU, a GPU target, other types).
const TensorIntrin* cpu_dot_intrin_for(const Target& target, Type a, Type b, Type acc);

/// The pattern's axes (spatial, then reduction) as the loop order tensorize expects.
std::vector<IterVar> tensor_intrin_axes(const TensorIntrin& in);

/// A pattern read and the stage read it matched.
struct MatchedRead {
    const TensorRead* pattern = nullptr;
    const TensorRead* stage = nullptr;
};

/// Matches a stage's body (of element type `out`) against the intrinsic's pattern. Returns ""
/// and fills `reads` (in the pattern's order) when it matches, else what differs. A reduction
/// with a condition matches an mma only where `bounds` is given: the condition must be bounds
/// `index < extent` on indices the operands read at (a split-K part that runs past k, rfactor),
/// which `bounds` receives; lowering drops them where those operands read zero past the extent.
std::string match_tensor_intrin(const TensorIntrin& in, const Expr& body, Type out,
                                std::vector<MatchedRead>* reads,
                                std::vector<Expr>* bounds = nullptr);

}  // namespace tessel
