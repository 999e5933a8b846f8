// HostArray: a dense, row-major array in host memory, for inputs and results of the reference
// interpreter, of tests and of benchmarks.
//
//   HostArray A = HostArray::random(Float(16), {64, 32}, /*seed=*/1);   // typed float16 bytes
//   double x = A.at({3, 4});
//
// Two storages:
//  - Native: elements in the dtype's own bytes (int8 as one byte, float16 as IEEE half bits,
//    bfloat16 as its 16 bits, bool as one byte 0/1), so a compiled kernel reads and writes the
//    same memory. Inputs are always Native.
//  - Ideal: float dtypes held as double, so results of the reference interpreter keep the ideal
//    (unrounded) value of a float16/float32 computation. Integer and bool dtypes are held as in
//    Native (their values are exact in their type anyway).
// Element accessors (get/set as double or int64) work on both, converting with the Cast rules of
// ir/IR.h: setting a float element of a Native array rounds to the dtype; setting an integer
// element wraps; setting an integer from a double truncates and saturates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessel/ir/Type.h"

namespace tessel {

/// How a HostArray holds its elements (see the file comment).
enum class ArrayStorage : uint8_t {
    Native,  ///< the dtype's own bytes
    Ideal,   ///< float dtypes as double; other dtypes as Native
};

/// A dense row-major host array of a scalar dtype.
class HostArray {
public:
    /// An empty array (no dtype, no elements).
    HostArray() = default;
    /// An array of `shape`, filled with a poison pattern rather than zeros (NaN for floats,
    /// 0x5A bytes for integers) so that reading an element nobody wrote shows up in comparisons.
    /// Throws RuntimeError on a vector or handle dtype or a negative extent.
    HostArray(Type dtype, std::vector<int64_t> shape, ArrayStorage storage = ArrayStorage::Native);

    /// Uniform random values in [lo, hi] from a generator seeded with `seed` (deterministic on
    /// every platform): floats rounded to the dtype, integers drawn from the integers in the
    /// range (clipped to the dtype's range), bools 0/1.
    static HostArray random(Type dtype, std::vector<int64_t> shape, uint64_t seed, double lo,
                            double hi);
    /// As above over the dtype's default range: floats [-1, 1], signed integers [-10, 10],
    /// unsigned [0, 10], bools {0, 1}.
    static HostArray random(Type dtype, std::vector<int64_t> shape, uint64_t seed);
    /// Every element `value` (converted to the dtype).
    static HostArray full(Type dtype, std::vector<int64_t> shape, double value);
    /// The given row-major values (size must match the shape; RuntimeError otherwise).
    static HostArray from_values(Type dtype, std::vector<int64_t> shape,
                                 const std::vector<double>& values,
                                 ArrayStorage storage = ArrayStorage::Native);

    Type dtype() const { return dtype_; }
    const std::vector<int64_t>& shape() const { return shape_; }
    size_t ndim() const { return shape_.size(); }
    /// Number of elements.
    int64_t size() const { return size_; }
    ArrayStorage storage() const { return storage_; }
    /// True if elements are stored as double (an Ideal array of a float dtype).
    bool holds_doubles() const { return storage_ == ArrayStorage::Ideal && dtype_.is_float(); }
    /// Bytes per stored element (8 when holds_doubles()).
    int element_bytes() const;
    /// The raw storage (row-major) and its size.
    void* data() { return bytes_.data(); }
    const void* data() const { return bytes_.data(); }
    size_t nbytes() const { return bytes_.size(); }

    /// Element `flat` (row-major position) as a double / as int64 (converted with the Cast
    /// rules). `flat` must be in [0, size()) (InternalError otherwise; use offset_of to check
    /// user indices).
    double get(int64_t flat) const;
    int64_t get_int(int64_t flat) const;
    /// Sets element `flat` (rounded to the dtype for Native floats; wrapped/saturated for ints).
    void set(int64_t flat, double value);
    void set_int(int64_t flat, int64_t value);

    /// Row-major position of `index`. Throws RuntimeError naming `what` (e.g. the tensor), the
    /// index and the shape when the index count or any coordinate is out of range.
    int64_t offset_of(const std::vector<int64_t>& index, const std::string& what = "array") const;
    /// The multi-dimensional index of row-major position `flat`.
    std::vector<int64_t> index_of(int64_t flat) const;
    /// Element at `index` (bounds-checked) as a double.
    double at(const std::vector<int64_t>& index) const { return get(offset_of(index)); }

    /// A copy in another storage (Ideal → Native rounds floats to the dtype).
    HostArray with_storage(ArrayStorage storage) const;
    /// "float32[4, 8]".
    std::string describe() const;

private:
    Type dtype_;
    std::vector<int64_t> shape_;
    int64_t size_ = 0;
    ArrayStorage storage_ = ArrayStorage::Native;
    std::vector<uint8_t> bytes_;
};

/// "[1, 2, 3]": an index or a shape, for error messages.
std::string format_index(const std::vector<int64_t>& index);

}  // namespace tessel
