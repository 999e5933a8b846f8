// Evaluation of IR expressions to values: the executable definition of the expression semantics
// written at the top of ir/IR.h. The simplifier's fuzzer, the reference interpreter (te/) and the
// loop-IR interpreter are built on it.
//
//   ExprEvaluator ev(FloatMode::Exact);
//   ev.bind(x, Value::make_int(Int(32), 7));
//   Value v = ev.eval(x * 2 + 1);   // v.as_int() == 15
//
// Two float modes:
//  - Ideal: every float operation is computed in double and kept as the ideal real value, without
//    rounding to the declared width (float16, float32 ...). The reference interpreter uses it: it
//    defines what a kernel should compute, and a tolerance (Tolerance.h) says how far rounding to
//    the declared width may take a kernel from it.
//  - Exact: every float result is rounded to its declared type (round_to_float_type); float16 and
//    bfloat16 operations are computed in float32 and rounded back, as IR.h specifies. This is what
//    compiled code computes; the loop-IR interpreter uses it.
// Integers are exact in their declared type in both modes (wrapping add/sub/mul, C-style Div/Mod,
// floor FloorDiv/FloorMod, division by zero → 0, INT_MIN / -1 → INT_MIN).
//
// if_then_else is lazy: with a scalar condition only the taken branch is evaluated; with a vector
// condition a branch is evaluated only if some lane takes it, and reads inside it receive a mask
// of the lanes that take it (so a guarded vector read never touches the lanes it guards).
//
// Intrinsic choices IR.h leaves open: `round` rounds half to even (llvm.nearbyint, as TVM does);
// `abs` of INT_MIN is INT_MIN (wrapping); `pow`, `exp` ... are the C library functions in double
// (Exact mode rounds their result to the declared type).
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessel/ir/IR.h"

namespace tessel {

/// How float operations are rounded (see the file comment).
enum class FloatMode : uint8_t {
    Ideal,  ///< computed and kept in double: the ideal value, no rounding to the declared width
    Exact,  ///< rounded to the declared type after every operation (float16 via float32)
};

/// One lane of a value. Integers and bools use `i`: the value wrapped to its type (signed types
/// sign-extended, unsigned types zero-extended; uint64 holds its bit pattern). Floats use `f`.
union Scalar {
    int64_t i;
    double f;
};

/// The lanes of a Value: a vector of Scalars that holds up to kInline of them in place. The
/// interpreters make a Value for every scalar and short vector they compute; in place, those cost
/// no allocation (a std::vector<Scalar> spent about a quarter of the loop-IR interpreter's time in
/// malloc and free, and most of its time under AddressSanitizer). Wider values live on the heap.
class LaneVector {
public:
    static constexpr size_t kInline = 4;

    LaneVector() = default;
    explicit LaneVector(size_t n, Scalar v = Scalar{0}) { resize(n, v); }
    LaneVector(std::initializer_list<Scalar> v) {
        for (Scalar x : v) push_back(x);
    }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    Scalar* data() { return size_ <= kInline ? inline_ : heap_.data(); }
    const Scalar* data() const { return size_ <= kInline ? inline_ : heap_.data(); }
    Scalar* begin() { return data(); }
    Scalar* end() { return data() + size_; }
    const Scalar* begin() const { return data(); }
    const Scalar* end() const { return data() + size_; }
    Scalar& operator[](size_t i) { return data()[i]; }
    const Scalar& operator[](size_t i) const { return data()[i]; }
    /// Lane i; std::out_of_range past the end (as std::vector::at).
    const Scalar& at(size_t i) const {
        if (i >= size_) throw_out_of_range(i);
        return data()[i];
    }
    Scalar& at(size_t i) {
        if (i >= size_) throw_out_of_range(i);
        return data()[i];
    }

    /// Keeps the first min(n, size()) lanes; new lanes are `v`.
    void resize(size_t n, Scalar v = Scalar{0}) {
        if (n > kInline || size_ > kInline) return resize_across(n, v);
        for (size_t i = size_; i < n; ++i) inline_[i] = v;
        size_ = n;
    }
    void push_back(Scalar v) {
        if (size_ < kInline) {
            inline_[size_++] = v;
            return;
        }
        if (size_ == kInline) heap_.assign(inline_, inline_ + kInline);
        heap_.push_back(v);
        ++size_;
    }

private:
    void resize_across(size_t n, Scalar v);  ///< resize from or to the heap
    [[noreturn]] void throw_out_of_range(size_t i) const;

    // Lanes [0, size_) are in inline_ while size_ <= kInline, else in heap_ (which then has
    // exactly size_ elements).
    size_t size_ = 0;
    Scalar inline_[kInline] = {};
    std::vector<Scalar> heap_;
};

/// A scalar or vector value of a Type: one Scalar per lane.
struct Value {
    Type type;
    LaneVector lanes;

    /// An integer, unsigned or bool value (every lane `v`, wrapped to t).
    static Value make_int(Type t, int64_t v);
    /// A float value (every lane `v`; not rounded: round it yourself for Exact semantics).
    static Value make_float(Type t, double v);
    /// A bool value with `lanes` lanes.
    static Value make_bool(bool v, int lanes = 1);
    /// The value with type t and these lanes (integers are wrapped to t).
    static Value from_ints(Type t, const std::vector<int64_t>& v);
    static Value from_doubles(Type t, const std::vector<double>& v);

    int lane_count() const { return static_cast<int>(lanes.size()); }
    /// Lane `l` as int64 (ints, bools; floats are converted with the Cast rules to int64).
    int64_t as_int(int l = 0) const;
    /// Lane `l` as uint64 (the bit pattern for integer types).
    uint64_t as_uint(int l = 0) const;
    /// Lane `l` as double (integers converted; uint64 as unsigned).
    double as_double(int l = 0) const;
    /// Lane `l` as bool (non-zero).
    bool as_bool(int l = 0) const;
    /// "int32(7)", "float32x2(1.5, nan)" ...
    std::string str() const;
};

/// True if a and b have the same type and every lane is identical (floats: equal or both NaN).
bool same_value(const Value& a, const Value& b);

// ---------------------------------------------------------------------------------------------
// Lane-wise semantics, shared by every evaluator of the IR (scalar element types only).

/// Rounds a float result to type t in Exact mode (float16/bfloat16 through float32); unchanged in
/// Ideal mode.
double round_float_result(double v, Type t, FloatMode mode);
/// A binary node (Add ... Max, comparisons, And, Or) on one lane of scalar operand type t.
/// Comparisons and And/Or return a bool lane (0 or 1 in `i`).
Scalar eval_binary_lane(IRNodeType op, Type t, Scalar a, Scalar b, FloatMode mode);
/// Cast of one lane from scalar type `from` to scalar type `to`.
Scalar eval_cast_lane(Type to, Type from, Scalar v, FloatMode mode);
/// A pure math intrinsic (every one but if_then_else and thread_barrier) on one lane;
/// `arg_type` is the scalar type of the arguments.
Scalar eval_intrinsic_lane(Intrinsic op, Type arg_type, const Scalar* args, FloatMode mode);

// ---------------------------------------------------------------------------------------------
// Evaluating expressions

/// How an evaluator reads memory. Each callback receives the node and its evaluated indices and
/// returns a value of the node's type; it should throw RuntimeError on an out-of-bounds access.
/// A missing callback makes reads of that kind throw RuntimeError.
struct ExprEvalCallbacks {
    /// A TensorRead; indices are scalars.
    std::function<Value(const TensorRead*, const std::vector<Value>&)> tensor_read;
    /// A BufferLoad; indices may be vectors (one element per lane). `mask` (bool, the node's
    /// lanes) says which lanes are needed; masked-off lanes must not be read and read as 0.
    std::function<Value(const BufferLoad*, const std::vector<Value>&, const Value& mask)>
        buffer_load;
    /// A flat Load: `index` has the node's lanes; `mask` is bool with the same lanes: the Load's
    /// predicate and the lanes a vector if_then_else takes (all true when neither restricts).
    /// Masked-off lanes must not be read and must read as 0.
    std::function<Value(const Load*, const Value& index, const Value& mask)> load;
    /// A Reduce (optional: without it, evaluating a Reduce throws RuntimeError).
    std::function<Value(const Reduce*)> reduce;
};

/// Evaluates expressions under variable bindings. Not thread-safe; cheap to construct.
class ExprEvaluator {
public:
    explicit ExprEvaluator(FloatMode mode = FloatMode::Ideal, ExprEvalCallbacks callbacks = {});

    /// Binds `v` (by identity) to `value`, replacing an earlier binding. The value's type must
    /// be v's (InternalError otherwise).
    void bind(const Var& v, Value value);
    /// Convenience: binds an integer/bool variable, or a float variable (rounded in Exact mode).
    void bind_int(const Var& v, int64_t value);
    void bind_float(const Var& v, double value);
    /// Removes v's binding (if any).
    void unbind(const Var& v);
    /// The current binding of v, or nullptr.
    const Value* lookup(const Variable* v) const;
    /// Every current binding (to start another evaluator in the same environment).
    const std::unordered_map<const Variable*, Value>& bindings() const { return env_; }

    /// Evaluates `e`. Throws RuntimeError for an unbound variable (naming it), a barrier, a read
    /// without a callback, or a Reduce without the reduce callback.
    Value eval(const Expr& e);

    FloatMode mode() const { return mode_; }
    ExprEvalCallbacks& callbacks() { return callbacks_; }

private:
    Value eval_node(const Expr& e);
    Value eval_binary(IRNodeType op, const Expr& a, const Expr& b);
    Value eval_call(const Call* c);
    Value eval_if_then_else(const Call* c);
    Value eval_select(const Select* s);
    Value eval_let(const Let* l);
    Value eval_read(const Expr& e);
    /// The lanes of a `lanes`-wide node that the enclosing if_then_else branches need.
    Value active_mask(int lanes) const;

    FloatMode mode_;
    ExprEvalCallbacks callbacks_;
    std::unordered_map<const Variable*, Value> env_;
    std::vector<uint8_t> active_;  ///< lanes taken by enclosing vector if_then_else; empty: all
};

/// One-shot evaluation of `e` with the given bindings.
Value evaluate_expr(const Expr& e, const std::vector<std::pair<Var, Value>>& bindings = {},
                    FloatMode mode = FloatMode::Ideal, ExprEvalCallbacks callbacks = {});

}  // namespace tessel
