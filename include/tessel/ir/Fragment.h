// Tensor-core fragments: the element-to-lane layouts of PTX's mma.sync operands.
//
// A fragment is one operand tile of an `mma.sync` instruction, held by the 32 lanes of a warp
// together: every lane holds `elems_per_lane` elements of it in registers. Which lane holds which
// element is fixed by PTX (ISA, "Matrix Fragments for mma.m16n8k16" and "... mma.m16n8k8"); with
// groupID = lane / 4 and tid = lane % 4:
//  - A of m16n8k16 (16 x 16, row-major, 16-bit floats): element e of 8 is at row groupID + 8 *
//    ((e / 2) % 2), column tid * 2 + e % 2 + 8 * (e / 4);
//  - B of m16n8k16 (16 x 8, k x n, 16-bit floats): element e of 4 is at row tid * 2 + e % 2 +
//    8 * (e / 2), column groupID;
//  - C/D of both shapes (16 x 8, float32): element e of 4 is at row groupID + 8 * (e / 2),
//    column tid * 2 + e % 2;
//  - A of m16n8k8 tf32 (16 x 8, float32): element e of 4 is at row groupID + 8 * (e % 2),
//    column tid + 4 * (e / 2);
//  - B of m16n8k8 tf32 (8 x 8): element e of 2 is at row tid + 4 * e, column groupID;
//  - B16x2 (16 x 16): two B16 fragments, columns 0..7 then 8..15; element e of 8 is element
//    e % 4 of the B16 fragment e / 4. In a warp buffer its registers are those of the two B16
//    fragments it covers, so an mma reads them as B16 fragments.
//  - B16T (8 x 16, n x k): a B16 fragment in a buffer indexed [n][k] (a transposed B: `dense`'s
//    weight, attention's K): element e of 4 is at row groupID, column tid * 2 + e % 2 + 8 *
//    (e / 2) — B16's element, transposed; the lanes hold the same values as for B16.
//  - B16x2T (16 x 16, n x k): two B16T fragments, rows 0..7 then 8..15.
//  - B8T (8 x 8, n x k): a B8 fragment in a buffer indexed [n][k]: element e of 2 is at row
//    groupID, column tid + 4 * e — B8's element, transposed; the lanes hold the same values.
//
// A "warp"-scope buffer (StorageScope::Warp) of logical shape [rows][cols] is a grid of fragments
// of one kind, tiles of rows x cols; fragment (r, c) of the grid (r = row / tile rows, c = col /
// tile cols) is number r * (cols / tile cols) + c, and each lane stores fragment f's elements at
// f * elems_per_lane ... f * elems_per_lane + elems_per_lane - 1 of its own registers. So a warp
// buffer of N logical elements takes N / 32 elements of each lane's storage. B16T fragments are
// numbered as halves of the B16x2T grid (16 x 16 tiles): the fragment at (row, col) is at
// register ((row / 16) * (cols / 16) + col / 16) * 8 + ((row / 8) % 2) * 4, so that a B16x2T's
// registers are those of the two B16T fragments it covers, as for B16x2.
#pragma once

#include <cstdint>

namespace tessel {

/// The operand kinds of mma.sync.
enum class FragmentKind : uint8_t {
    A16,     ///< A of m16n8k16: 16 x 16 float16/bfloat16
    B16,     ///< B of m16n8k16: 16 x 8 (k x n) float16/bfloat16
    C,       ///< C/D of m16n8k16 and m16n8k8: 16 x 8 float32
    A8,      ///< A of m16n8k8 tf32: 16 x 8 float32
    B8,      ///< B of m16n8k8 tf32: 8 x 8 float32
    B16x2,   ///< two B16 fragments side by side: 16 x 16 (k x n), what ldmatrix .x4 loads
    B16T,    ///< a B16 fragment in a buffer indexed [n][k]: 8 x 16 (n x k)
    B16x2T,  ///< two B16T fragments stacked: 16 x 16 (n x k), what ldmatrix .x4 loads
    B8T,     ///< a B8 fragment in a buffer indexed [n][k]: 8 x 8 (n x k)
};

/// "A16", "B16", "C", "A8", "B8", "B16x2", "B16T", "B16x2T", "B8T".
const char* fragment_kind_name(FragmentKind k);
/// Parses an int constant of an intrinsic's kind argument; false when out of range.
bool fragment_kind_from_int(int64_t v, FragmentKind* out);

/// Rows and columns of one fragment, and elements each lane holds.
struct FragmentShape {
    int rows = 0, cols = 0, elems_per_lane = 0;
};
FragmentShape fragment_shape(FragmentKind k);

/// Where element `e` (0 <= e < elems_per_lane) of lane `lane` sits in the fragment.
struct FragmentPos {
    int row = 0, col = 0;
};
FragmentPos fragment_element(FragmentKind k, int lane, int e);

/// The lane-local register index of the first element of the fragment at logical element
/// (row, col) of a warp buffer with `cols` columns; -1 when (row, col) is not a fragment origin
/// or `cols` is not a multiple of the fragment's columns.
int64_t fragment_register_base(FragmentKind k, int64_t row, int64_t col, int64_t cols);

}  // namespace tessel
