// Fragment layouts (see the header; PTX ISA, section "Matrix Fragments for mma.m16n8k*").
#include "tessel/ir/Fragment.h"

#include "tessel/Error.h"

namespace tessel {

const char* fragment_kind_name(FragmentKind k) {
    switch (k) {
        case FragmentKind::A16: return "A16";
        case FragmentKind::B16: return "B16";
        case FragmentKind::C: return "C";
        case FragmentKind::A8: return "A8";
        case FragmentKind::B8: return "B8";
        case FragmentKind::B16x2: return "B16x2";
        case FragmentKind::B16T: return "B16T";
        case FragmentKind::B16x2T: return "B16x2T";
        case FragmentKind::B8T: return "B8T";
    }
    return "?";
}

bool fragment_kind_from_int(int64_t v, FragmentKind* out) {
    if (v < 0 || v > static_cast<int64_t>(FragmentKind::B8T)) return false;
    *out = static_cast<FragmentKind>(v);
    return true;
}

FragmentShape fragment_shape(FragmentKind k) {
    switch (k) {
        case FragmentKind::A16: return {16, 16, 8};
        case FragmentKind::B16: return {16, 8, 4};
        case FragmentKind::C: return {16, 8, 4};
        case FragmentKind::A8: return {16, 8, 4};
        case FragmentKind::B8: return {8, 8, 2};
        case FragmentKind::B16x2: return {16, 16, 8};
        case FragmentKind::B16T: return {8, 16, 4};
        case FragmentKind::B16x2T: return {16, 16, 8};
        case FragmentKind::B8T: return {8, 8, 2};
    }
    return {};
}

FragmentPos fragment_element(FragmentKind k, int lane, int e) {
    const int group = lane / 4, tid = lane % 4;
    switch (k) {
        case FragmentKind::A16: return {group + 8 * ((e / 2) % 2), tid * 2 + e % 2 + 8 * (e / 4)};
        case FragmentKind::B16: return {tid * 2 + e % 2 + 8 * (e / 2), group};
        case FragmentKind::C: return {group + 8 * (e / 2), tid * 2 + e % 2};
        case FragmentKind::A8: return {group + 8 * (e % 2), tid + 4 * (e / 2)};
        case FragmentKind::B8: return {tid + 4 * e, group};
        case FragmentKind::B16x2: {
            FragmentPos p = fragment_element(FragmentKind::B16, lane, e % 4);
            return {p.row, p.col + 8 * (e / 4)};
        }
        case FragmentKind::B16T: {
            FragmentPos p = fragment_element(FragmentKind::B16, lane, e);
            return {p.col, p.row};
        }
        case FragmentKind::B16x2T: {
            FragmentPos p = fragment_element(FragmentKind::B16T, lane, e % 4);
            return {p.row + 8 * (e / 4), p.col};
        }
        case FragmentKind::B8T: return {group, tid + 4 * e};
    }
    return {};
}

int64_t fragment_register_base(FragmentKind k, int64_t row, int64_t col, int64_t cols) {
    const FragmentShape f = fragment_shape(k);
    if (row < 0 || col < 0 || cols <= 0 || row % f.rows || col % f.cols || cols % f.cols) return -1;
    if (k == FragmentKind::B16T)  // a half of the B16x2T grid's tile
        return ((row / 16) * (cols / 16) + col / 16) * 8 + ((row / 8) % 2) * 4;
    return ((row / f.rows) * (cols / f.cols) + col / f.cols) * f.elems_per_lane;
}

}  // namespace tessel
